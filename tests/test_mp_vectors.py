"""The test vectors of protocol.md §1.10: fixed seeds and keys -> exact bytes."""

from __future__ import annotations

import hashlib

from mental_poker.context import Context
from mental_poker.deal import DealTable
from mental_poker.deck import Deck, card_point
from mental_poker.group import (
    SeededRng,
    encode_scalar,
    hash_items,
    inverse,
    mul,
    random_permutation,
    random_scalar,
)
from mental_poker.messages import (
    DealSetup,
    encode_message,
)
from mental_poker.proofs import generator
from mental_poker.seat import (
    DealSecrets,
    make_final_reveal,
    make_lock,
    make_shuffle,
)


def test_encoding_vectors() -> None:
    assert card_point(0).hex() == "1132471cefbf7bb40a96325052b8b52c4a38e2abfdce74f6c46985c7b72938df"
    assert (
        card_point(53).hex() == "170d356f8b041a9d6d5660f08eb95255292314b93eb2b9bbcecface13ff16102"
    )
    assert (
        card_point(54).hex() == "7fa162f4ef494687a19d0dc8e70e134bc63eb35a8b8b9ca7b572206a137ffe01"
    )
    assert generator(0).hex() == "c240dff8f934b09cd0376b7050ca4241a42fb0026d807b174c2b9e27c008f160"
    assert generator(1).hex() == "bb73cad5ec2f61e25770d9f1d4e59fcac3c96518f5870bc41be0df3c4069e67b"


def test_randomness_and_cipher_vectors() -> None:
    assert SeededRng(b"vector")(16).hex() == "fa64152ba7543450ccbdea3077fadd44"
    k = random_scalar(SeededRng(b"key"))
    assert encode_scalar(k).hex() == (
        "67d9458bd10fc61534aafb5302e09e4bfe29fb1c62d023fe32c36ae1c4d04b03"
    )
    assert encode_scalar(inverse(k)).hex() == (
        "8aadf1bd73928c99d88eafc990eeb85daa736dfeca5c669ff29ae1203256b00d"
    )
    assert mul(k, card_point(0)).hex() == (
        "c0f33b56d0991b136d40798ce649d1272a496136b04a6250e23686688f7a4fe2"
    )
    assert random_permutation(8, SeededRng(b"perm")) == (7, 1, 6, 4, 3, 2, 0, 5)
    items = Context(b"vector-table", 1).at("shuffle", 1).items()
    assert hash_items(*items).hex() == (
        "14422fe840baebee2f4ddbffce62cdaa530e95e0567d37ae60f2b8b9c5d6ff68"
        "6a9af26530d1621719054c347970bb15b228f8a09c443107dc43cab5c026ae66"
    )


def test_whole_deal_vector() -> None:
    setup = DealSetup(Context(b"vector-table", 1), 2, Deck.of([0, 1, 52]), proven=True)
    table = DealTable(setup)
    rngs = [SeededRng(b"seat" + bytes([s])) for s in range(2)]
    secrets = [DealSecrets.generate(setup, s, rngs[s]) for s in range(2)]
    assert [x.permutation for x in secrets] == [(2, 1, 0), (1, 2, 0)]
    expected = [
        "6ef8ab523f1de9cf89923c95ffe79cdcdfd55a6bfba282d7a974be44ec98a4ab",
        "0d40847bd0e95371714d81f89491ededf6be39838c5ee342e0319fad34562991",
        "8f349c6942b2965de6a1a1bc7f922034d6036049ca153bc4c226ff3eef0643b1",
        "01716d5f84445e7303fcc1c28a4aa4b3b7278ed8148bdcca7f9ac16140dd8c84",
    ]
    got = []
    for make in (make_shuffle, make_lock):
        for seat in range(2):
            message = make(setup, secrets[seat], table.expected_input(), rngs[seat])
            got.append(hashlib.sha256(encode_message(message)).hexdigest())
            assert table.feed(message)
    assert got == expected
    assert table.ciphertext(2).hex() == (
        "bf0e24ac32d52935e12c96e1f2b27a687e94fdea91fa6f77aad9525c0b66b36f"
    )
    for seat in range(2):
        assert table.feed(make_final_reveal(secrets[seat]))
    assert [table.public_card(p) for p in range(3)] == [1, 0, 52]
    assert table.audit()
