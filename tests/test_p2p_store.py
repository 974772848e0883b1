"""The durable store: torn tails, secrets, the saved log read offline."""

from __future__ import annotations

import os
import stat

import pytest

from p2p.store import Store, StoreError, read_log, read_records
from tests.p2p_sim import SimNet


def _chain(n_events: int = 6):
    net = SimNet(3)
    net.run()
    for i in range(n_events):
        net.submit(i % 3, {"i": i})
    net.run()
    return net


def _store_with_chain(tmp_path, net):
    store = Store(net.table, tmp_path)
    for entry in net.machines[1].chain:
        store.append("log", {"t": "entry", "e": entry.to_wire()})
    store.sync()
    return store


def test_torn_tail_is_cut_off_and_the_chain_survives(tmp_path) -> None:
    net = _chain()
    _store_with_chain(tmp_path, net).close()
    log = tmp_path / "log"
    whole = log.stat().st_size
    with open(log, "ab") as f:
        f.write(b"\x00\x00\x01\x00\x12\x34")  # a crash in the middle of an append
    store = Store(net.table, tmp_path)
    assert store.entries == net.machines[1].chain and store.problem is None
    assert log.stat().st_size == whole
    store.append("log", {"t": "truncate", "seq": 4})
    store.sync()
    store.close()
    assert Store(net.table, tmp_path).entries == net.machines[1].chain[:4]


def test_a_damaged_entry_keeps_the_verified_prefix_and_says_why(tmp_path) -> None:
    net = _chain()
    store = _store_with_chain(tmp_path, net)
    forged = net.machines[1].chain[2].to_wire()
    forged["ev"]["b"] = b"\xa5other"
    store.append("log", {"t": "truncate", "seq": 2})
    store.append("log", {"t": "entry", "e": forged})
    store.sync()
    store.close()
    saved = read_log(tmp_path / "log")
    assert saved.entries == net.machines[1].chain[:2]
    assert "not signed" in saved.problem
    assert Store(net.table, tmp_path).entries == net.machines[1].chain[:2]


def test_secrets_and_outbox_persist_privately(tmp_path) -> None:
    net = _chain(1)
    store = Store(net.table, tmp_path)
    store.put_secret("deal/position/7", b"k" * 32)
    store.put_secret("deal/position/7", b"K" * 32)  # the latest value wins
    event = net.machines[0].chain[0].event
    store.record_own_event(event)
    store.close()
    assert stat.S_IMODE(os.stat(tmp_path / "secrets").st_mode) == 0o600
    again = Store(net.table, tmp_path)
    assert again.get_secret("deal/position/7") == b"K" * 32
    assert again.get_secret("deal/position/7") is not None
    assert again.own_events == [event]
    records, _ = read_records(tmp_path / "log")
    assert all(b"K" * 32 not in repr(r).encode() for r in records)  # never in the shared log
    with pytest.raises(TypeError):
        again.put_secret("x", "not bytes")


def test_a_store_refuses_another_tables_log(tmp_path) -> None:
    Store(_chain(0).table, tmp_path).close()
    with pytest.raises(StoreError, match="another table"):
        Store(_chain(0).table, tmp_path)


def test_one_process_at_a_time_per_table_store(tmp_path) -> None:
    """Review of issue 11: a second process opening a table's store cut the
    first one's fresh records as torn. A lock file refuses it; reading a
    secret without opening the store takes no lock and cuts nothing."""
    from p2p.envelope import TableSpec
    from p2p.identity import Identity
    from p2p.store import read_secret

    ids = [Identity.generate() for _ in range(2)]
    table = TableSpec(b"locked", tuple(i.public for i in ids))
    store = Store.open(table, tmp_path)
    store.put_secret("x", b"1")
    try:
        with pytest.raises(StoreError, match="in use by another"):
            Store.open(table, tmp_path)
        assert read_secret(store.directory, "x") == b"1"
    finally:
        store.close()
    Store.open(table, tmp_path).close()  # free again once closed


def test_the_followed_term_and_the_cuts_come_back_after_a_restart(tmp_path) -> None:
    # (v3, fifth review #3 and #10) what rule 3 of the anti-split rules needs
    net = _chain(1)
    store = Store(net.table, tmp_path)
    for record in (
        {"t": "term", "term": 3},
        {"t": "term", "term": 2},  # the highest wins
        {"t": "cut", "seq": 9, "floor": 1},
        {"t": "cut", "seq": 12, "floor": 5},  # merged: the lowest seq, the highest floor
        {"t": "cut", "seq": 0, "floor": 7},  # malformed (no seq 0): ignored
    ):
        store.append("own", record)
    store.sync()
    store.close()
    again = Store(net.table, tmp_path)
    assert again.followed == 3 and again.cut == (9, 5)
    machine = net.machines[1]
    restarted = type(machine)(
        net.table, net.ids[1], entries=machine.chain, followed=again.followed, cut=again.cut
    )
    assert restarted.term == 3 and restarted.vote_floor == 3
    assert restarted._swap == (1, 5)  # final 0: the restart's guess (1, 3) merged with the cut


@pytest.mark.parametrize("byte", [10, 1], ids=["payload", "length"])
def test_a_damaged_record_with_whole_records_after_it_cuts_nothing(tmp_path, byte) -> None:
    # (v3 review 5, #13) a flipped bit in the own file's first record cut
    # the file to nothing on the next open: votes, led terms, sent events
    net = _chain(1)
    store = Store(net.table, tmp_path)
    for term in (1, 2, 5):
        store.append("own", {"t": "vote", "term": term}, lazy=False)
    store.sync()
    store.close()
    own = tmp_path / "own"
    data = bytearray(own.read_bytes())
    data[byte] ^= 0x01  # the first record's payload, or its length (review 6, #1)
    own.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=r"damaged record at byte 0 .* nothing was cut"):
        Store(net.table, tmp_path)
    assert own.read_bytes() == bytes(data)


def _torn_tail_is_cut(tmp_path, tail: bytes) -> None:
    """A store whose ``own`` file holds one synced vote, then ``tail`` (what
    a crash left of an append): it opens, keeps the vote and cuts the tail."""
    net = _chain(1)
    store = Store(net.table, tmp_path)
    store.append("own", {"t": "vote", "term": 4})
    store.sync()
    store.close()
    own = tmp_path / "own"
    whole = own.read_bytes()
    own.write_bytes(whole + tail)
    again = Store(net.table, tmp_path)
    assert again.voted == 4 and own.read_bytes() == whole


def test_a_zero_filled_tail_is_a_torn_tail(tmp_path) -> None:
    # a power cut can leave a file's new length filled with zeros
    _torn_tail_is_cut(tmp_path, bytes(300))


def test_a_failed_append_leaves_no_fragment(tmp_path, monkeypatch) -> None:
    # (v3 review 6, #5) a full disk took part of a record: the next records
    # followed the fragment, and the next open cut or refused synced ones
    import errno

    from p2p import store as store_module

    net = _chain(1)
    store = Store(net.table, tmp_path)
    store.append("own", {"t": "vote", "term": 3})
    store.sync()
    size = (tmp_path / "own").stat().st_size
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module.os, "write", full_disk)
    with pytest.raises(OSError):
        store.append("own", {"t": "vote", "term": 4})
    monkeypatch.setattr(store_module.os, "write", real_write)
    assert (tmp_path / "own").stat().st_size == size
    store.append("own", {"t": "term", "term": 5})
    store.sync()
    store.close()
    again = Store(net.table, tmp_path)
    assert again.voted == 3 and again.followed == 5


def test_a_record_inside_a_torn_append_is_still_a_torn_tail(tmp_path) -> None:
    # (v3 review 7, #4) a seat can put a whole record inside its move's
    # bytes; cut by a crash mid-append, that record must not make the torn
    # tail look like damage (the store refused to open)
    import zlib

    import msgpack

    from p2p.store import RECORD_HEADER

    inner = msgpack.packb({"t": "vote", "term": 9}, use_bin_type=True)
    embedded = RECORD_HEADER.pack(len(inner), zlib.crc32(inner)) + inner
    payload = msgpack.packb({"t": "submit", "pad": b"x" * 40 + embedded + b"y" * 200})
    outer = RECORD_HEADER.pack(len(payload), zlib.crc32(payload)) + payload
    cut = outer.index(embedded) + len(embedded) + 10  # the crash: mid-append, after it
    _torn_tail_is_cut(tmp_path, outer[:cut])
