"""Framing, strict schema, identity files and the handshake (sans-I/O)."""

from __future__ import annotations

import os
import stat

import msgpack
import nacl.bindings
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p.envelope import TableSpec
from p2p.handshake import Handshake, HandshakeError
from p2p.identity import Identity, IdentityError, PeerKey, config_dir, data_dir, fingerprint
from p2p.wire import (
    MAX_FRAME,
    PROTOCOL_VERSION,
    FrameDecoder,
    FrameTooLarge,
    MalformedFrame,
    SchemaError,
    WireError,
    decode_message,
    encode_frame,
    message,
)

_ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
"""A point of order 8 of edwards25519 (libsodium's small-order blocklist)."""


def _hello(**over):
    fields = {"v": 1, "table": b"t", "key": b"k" * 32, "nonce": b"n" * 32, "eph": b"e" * 32}
    fields["port"] = 4000
    fields.update(over)
    return {"k": "hello", **fields}


def test_frames_reassemble_across_arbitrary_chunks() -> None:
    frames = [encode_frame(message("fetch", **{"from": i + 1, "n": 5})) for i in range(20)]
    stream = b"".join(frames)
    decoder = FrameDecoder()
    out = []
    for i in range(0, len(stream), 7):
        decoder.feed(stream[i : i + 7])
        out.extend(decode_message(p)["from"] for p in decoder.frames())
    assert out == list(range(1, 21))
    assert decoder.buffered == 0


def test_oversized_frame_is_refused_from_its_prefix_alone() -> None:
    decoder = FrameDecoder()
    decoder.feed((MAX_FRAME + 1).to_bytes(4, "big") + b"xx")
    with pytest.raises(FrameTooLarge, match="limit"):
        decoder.next_frame()


def test_truncated_frame_waits_and_never_yields() -> None:
    frame = encode_frame(_hello())
    decoder = FrameDecoder()
    decoder.feed(frame[:-1])
    assert decoder.next_frame() is None
    decoder.feed(frame[-1:])
    assert decode_message(decoder.next_frame())["k"] == "hello"


@pytest.mark.parametrize(
    ("payload", "error", "text"),
    [
        (msgpack.packb([1, 2]), SchemaError, "is a map"),
        (msgpack.packb({"k": "warp"}), SchemaError, "unknown message kind"),
        (msgpack.packb({"x": 1}), SchemaError, "naming its kind"),
        (msgpack.packb(_hello(v="1")), SchemaError, "hello.v: expected an integer"),
        (msgpack.packb(_hello(v=True)), SchemaError, "expected an integer"),
        (msgpack.packb(_hello(key=b"short")), SchemaError, "hello.key: 5 bytes"),
        (msgpack.packb(_hello(port=70000)), SchemaError, "outside"),
        (msgpack.packb({**_hello(), "extra": 1}), SchemaError, "unknown field"),
        (msgpack.packb({"k": "auth"}), SchemaError, "missing field"),
        (msgpack.packb(_hello()) + b"\x00", MalformedFrame, "not a msgpack value"),
        (b"\xc1", MalformedFrame, "not a msgpack value"),
        (msgpack.packb(msgpack.ExtType(5, b"x")), MalformedFrame, "extension"),
        (b"\xa2\xff\xfe", MalformedFrame, "not a msgpack value"),
    ],
)
def test_decoder_names_what_is_wrong(payload: bytes, error: type, text: str) -> None:
    with pytest.raises(error, match=text):
        decode_message(payload)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash_the_decoder(data: bytes) -> None:
    decoder = FrameDecoder()
    decoder.feed(data)
    try:
        for payload in decoder.frames():
            decode_message(payload)
        decode_message(data)
    except WireError:
        pass


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.binary(max_size=40)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(msgpack_values)
def test_arbitrary_msgpack_values_never_crash_the_schema(value) -> None:
    try:
        decode_message(msgpack.packb(value, use_bin_type=True))
    except WireError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["v", "table", "key", "nonce", "eph", "port"]), msgpack_values)
def test_a_hello_with_any_wrong_field_is_a_schema_error(name: str, value) -> None:
    good = _hello()
    candidate = {**good, name: value}
    try:
        decoded = decode_message(msgpack.packb(candidate, use_bin_type=True))
    except WireError:
        return
    assert decoded == candidate  # accepted only if it is a valid hello after all


def test_identity_is_created_once_with_mode_0600(tmp_path) -> None:
    a = Identity.load_or_create(tmp_path)
    mode = stat.S_IMODE(os.stat(tmp_path / "identity.key").st_mode)
    assert mode == 0o600
    assert Identity.load_or_create(tmp_path).public == a.public
    os.chmod(tmp_path / "identity.key", 0o644)
    with pytest.raises(IdentityError, match="chmod 600"):
        Identity.load_or_create(tmp_path)


def test_nodealer_home_overrides_xdg(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("NODEALER_HOME", raising=False)
    assert config_dir() == tmp_path / "cfg" / "nodealer"
    assert data_dir() == tmp_path / "data" / "nodealer"
    monkeypatch.setenv("NODEALER_HOME", str(tmp_path / "home"))
    assert config_dir() == data_dir() == tmp_path / "home"
    assert Identity.load_or_create().public == Identity.load_or_create(tmp_path / "home").public


def test_fingerprint_is_short_grouped_and_key_specific() -> None:
    a, b = Identity.generate(), Identity.generate()
    fp = a.fingerprint
    assert len(fp) == 19 and fp.count("-") == 3
    assert fp == fingerprint(a.public.raw) == str(a.public)
    assert fp != b.fingerprint
    assert repr(PeerKey(a.public.raw)) == f"PeerKey({fp})"


def test_signatures_are_rfc8032_and_the_same_bytes_openssl_makes(tmp_path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    # RFC 8032 §7.1, test 2 (one-byte message)
    seed = bytes.fromhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
    me = Identity(seed)
    assert me.public.raw.hex() == (
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"
    )
    signature = me.sign(bytes([0x72]))
    assert signature.hex() == (
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
        "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
    )
    assert me.public.verify(signature, bytes([0x72]))
    for _ in range(20):
        seed = os.urandom(32)
        message = os.urandom(100)
        openssl = Ed25519PrivateKey.from_private_bytes(seed).sign(message)
        assert Identity(seed).sign(message) == openssl
    (tmp_path / "identity.key").write_bytes(seed)
    os.chmod(tmp_path / "identity.key", 0o600)
    assert Identity.load_or_create(tmp_path).sign(message) == openssl


def test_a_signature_check_refuses_what_protocol_md_refuses() -> None:
    from mental_poker.group import L

    me = Identity.generate()
    message = b"nodealer"
    good = me.sign(message)
    r, s = good[:32], int.from_bytes(good[32:], "little")
    assert me.public.verify(good, message)
    assert not me.public.verify(good, message + b"!")
    assert not me.public.verify(good[:63], message)
    assert not me.public.verify(r + (s + L).to_bytes(32, "little"), message)  # S not < L
    identity = (1).to_bytes(32, "little")  # the neutral element: small order
    assert not me.public.verify(identity + good[32:], message)  # small-order R
    # a key must be a point of the prime-order subgroup (libraries disagree
    # about signatures under any other): small order, mixed order, not a
    # point, not canonical
    mixed = nacl.bindings.crypto_core_ed25519_add(me.public.raw, _ORDER_8)
    not_canonical = (2**255 - 19 + 1).to_bytes(32, "little")  # y = p + 1
    for bad in (identity, _ORDER_8, mixed, bytes([0xFF]) * 32, not_canonical):
        with pytest.raises(ValueError, match="prime-order"):
            PeerKey(bad)
    with pytest.raises(ValueError):
        Identity(b"short")
    with pytest.raises(ValueError):
        PeerKey(b"short")
    with pytest.raises(TypeError):
        me.public.verify(good, "nodealer")  # a programming error, said as one


def test_the_library_is_checked_for_the_r_rule_of_protocol_md(monkeypatch) -> None:
    # released libsodium refuses an R with a small-order component; its
    # development branch accepts it: such a build must stop the program
    from p2p import identity

    key = PeerKey(bytes.fromhex(identity._TORSION_KEY))
    for sig in identity._TORSION_SIGS:
        assert not key.verify(bytes.fromhex(sig), identity._TORSION_MESSAGE)
    identity.check_library()
    lenient = nacl.bindings.crypto_sign_open

    def accepts_torsion(signed: bytes, pk: bytes) -> bytes:
        if signed[64:] == identity._TORSION_MESSAGE:
            return signed[64:]
        return lenient(signed, pk)

    monkeypatch.setattr(identity._sodium, "crypto_sign_open", accepts_torsion)
    with pytest.raises(identity.LibraryError, match="small-order component"):
        identity.check_library()


def test_a_log_naming_a_weak_key_is_bad_input_naming_nobody(tmp_path) -> None:
    from p2p.store import StoreError, parse_log

    keys = [Identity.generate().public.raw, (1).to_bytes(32, "little")]
    header = {"t": "table", "v": PROTOCOL_VERSION, "table": b"t" * 16, "seats": keys}
    with pytest.raises(StoreError, match=r"bad table header.*prime-order"):
        parse_log([header])


# ------------------------------------------------------------------ handshake


def _table(*ids: Identity, table_id: bytes = b"table-1") -> TableSpec:
    return TableSpec(table_id, tuple(i.public for i in ids))


def _run(a: Handshake, b: Handshake) -> None:
    reply_b = b.receive(a.hello())
    reply_a = a.receive(b.hello())
    assert a.receive(reply_b) is None
    assert b.receive(reply_a) is None


def test_handshake_proves_both_keys_and_learns_seats() -> None:
    x, y = Identity.generate(), Identity.generate()
    table = _table(x, y)
    a, b = Handshake(x, table, 1000), Handshake(y, table, 2000)
    _run(a, b)
    assert a.done and b.done
    assert (a.peer_seat, a.peer_port, b.peer_seat, b.peer_port) == (1, 2000, 0, 1000)


def test_handshake_refuses_other_table_version_unknown_and_banned_keys() -> None:
    x, y, z = Identity.generate(), Identity.generate(), Identity.generate()
    table = _table(x, y)
    with pytest.raises(HandshakeError, match="another table"):
        Handshake(x, table).receive(Handshake(y, _table(x, y, table_id=b"other")).hello())
    with pytest.raises(HandshakeError, match="version"):
        Handshake(x, table).receive({**Handshake(y, table).hello(), "v": PROTOCOL_VERSION + 1})
    with pytest.raises(HandshakeError, match="no seat"):
        Handshake(x, table).receive(Handshake(z, _table(x, z)).hello())
    with pytest.raises(HandshakeError, match="banned"):
        Handshake(x, table, banned=[y.public]).receive(Handshake(y, table).hello())
    with pytest.raises(HandshakeError, match="expected hello"):
        Handshake(x, table).receive(message("auth", s=b"s" * 64))


def test_handshake_refuses_a_key_the_peer_cannot_sign_for() -> None:
    x, y, mallory = Identity.generate(), Identity.generate(), Identity.generate()
    table = _table(x, y)
    a = Handshake(x, table)
    # mallory claims y's key but signs with her own
    claim = Handshake(mallory, _table(x, mallory))
    hello = {**claim.hello(), "key": y.public.raw}
    a.receive(hello)
    forged = message("auth", s=mallory.sign(b"anything"))
    with pytest.raises(HandshakeError, match="possession"):
        a.receive(forged)
    # a signature replayed from another handshake (other nonce) fails too
    first, second, honest_b = Handshake(x, table), Handshake(x, table), Handshake(y, table)
    old_reply = honest_b.receive(first.hello())  # signed over first's nonce
    second.receive(honest_b.hello())
    with pytest.raises(HandshakeError, match="possession"):
        second.receive(old_reply)


def test_a_hello_altered_on_the_way_fails_the_handshake() -> None:
    x, y = Identity.generate(), Identity.generate()
    table = _table(x, y)
    for field, value in [("port", 6666), ("nonce", b"\x01" * 32), ("eph", b"\x09" * 32)]:
        a, b = Handshake(x, table, 1000), Handshake(y, table, 2000)
        reply_b = b.receive({**a.hello(), field: value})  # b saw a changed hello
        a.receive(b.hello())
        with pytest.raises(HandshakeError, match="possession"):
            a.receive(reply_b)


def test_nesting_is_counted_here_not_by_the_msgpack_build() -> None:
    """§2.3: at most 64 levels (the value is level 1), whatever msgpack's C
    extension or pure-Python fallback would take (the review found them
    disagreeing at 1024, which let two honest peers judge one body apart)."""
    from p2p.wire import MAX_DEPTH, MalformedFrame, unpack_strict

    def nested(levels: int) -> bytes:
        value: object = []
        for _ in range(levels - 1):
            value = [value]
        return msgpack.packb(value)

    assert unpack_strict(nested(MAX_DEPTH)) is not None
    with pytest.raises(MalformedFrame, match="nested more than 64"):
        unpack_strict(nested(MAX_DEPTH + 1))
    mixed = {"a": [{"b": [{}]}]}  # maps count as levels too: 5
    assert unpack_strict(msgpack.packb(mixed)) == mixed


def test_a_map_repeating_a_key_is_malformed() -> None:
    from p2p.wire import MalformedFrame, unpack_strict

    repeated = b"\x82\xa1k\x01\xa1k\x02"  # {"k": 1, "k": 2}: msgpack itself would keep the last
    with pytest.raises(MalformedFrame, match="repeats a key"):
        unpack_strict(repeated)
