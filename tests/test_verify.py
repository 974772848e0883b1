"""``nodealer verify``: a saved log from a real networked game verifies clean;
a log altered after signing names the seat whose signature breaks; a damaged,
cut or foreign file is bad input (exit 2) with a clear message."""

from __future__ import annotations

import json
import os
import struct
import tracemalloc
import zlib
from pathlib import Path

import msgpack
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.store import read_records
from table.bot_table import PeerResult, play_bot_table
from table.replay import Replay, SetupError, parse_setup, setup_body
from table.verify import verify_log
from tui.cli import main
from tui.story import outcome_text

RECORD = struct.Struct(">II")


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> PeerResult:
    home = tmp_path_factory.mktemp("verify-game")

    async def play() -> list[PeerResult]:
        with trio.fail_after(60):
            return await play_bot_table("bluff", 2, home, proven=False, seed=1, time_scale=0.02)

    peers = trio.run(play)
    assert peers[0].result.clean
    return peers[0]


def write_records(path: Path, records: list[dict]) -> None:
    data = b""
    for record in records:
        payload = msgpack.packb(record, use_bin_type=True)
        data += RECORD.pack(len(payload), zlib.crc32(payload)) + payload
    path.write_bytes(data)


def copy_log(game: PeerResult, tmp_path: Path) -> tuple[Path, list[dict]]:
    records, _ = read_records(game.log_path)
    path = tmp_path / "log"
    write_records(path, records)
    return path, records


def test_clean_log_and_cli(game: PeerResult, capsys) -> None:
    report = verify_log(game.log_path)
    assert report.exit_code == 0 and report.clean
    assert str(report.outcome) == str(game.result.outcome)
    assert main(["verify", str(game.log_path)]) == 0
    out = capsys.readouterr().out
    assert f"clean: {outcome_text(str(game.result.outcome))}" in out  # in words
    assert game.fingerprint in out and "game: bluff, 2 seats, unproven deals" in out


def test_an_altered_body_names_nobody(game: PeerResult, tmp_path, capsys) -> None:
    """A broken signature proves nothing (anyone can write bytes into a
    file): a flipped bit in a move is bad input, not a cheat by its author
    or its sequencer (protocol.md §7.4 step 2)."""
    path, records = copy_log(game, tmp_path)
    index = next(
        i
        for i, r in enumerate(records)
        if r["t"] == "entry" and msgpack.unpackb(r["e"]["ev"]["b"])["t"] == "move"
    )
    entry = records[index]["e"]
    body = bytearray(entry["ev"]["b"])
    body[-1] ^= 0x01  # flip one bit of the move, then fix the record's CRC
    entry["ev"]["b"] = bytes(body)
    write_records(path, records)
    report = verify_log(path)
    assert report.exit_code == 2 and not report.faults
    assert "altered or damaged" in (report.problem or "")
    assert main(["verify", str(path)]) == 2
    assert "CHEATING" not in capsys.readouterr().out


def test_a_replaced_sequencer_signature_names_nobody(game: PeerResult, tmp_path) -> None:
    path, records = copy_log(game, tmp_path)
    entry = next(r for r in records if r["t"] == "entry" and r["e"]["seq"] == 5)["e"]
    entry["s"] = bytes(64)  # the sequencer's signature replaced
    write_records(path, records)
    report = verify_log(path)
    assert report.exit_code == 2 and not report.faults


def test_damaged_record_is_bad_input(game: PeerResult, tmp_path, capsys) -> None:
    path = tmp_path / "log"
    data = bytearray(game.log_path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # no CRC fix: the record is damaged
    path.write_bytes(bytes(data))
    report = verify_log(path)
    assert report.exit_code == 2 and "damaged record" in (report.problem or "")
    assert main(["verify", str(path)]) == 2
    assert "damaged record" in capsys.readouterr().err


def test_torn_tail_is_ignored_and_a_cut_log_is_incomplete(game: PeerResult, tmp_path) -> None:
    path, records = copy_log(game, tmp_path)
    entries = [r for r in records if r["t"] == "entry"]
    write_records(path, records[: 1 + len(entries) // 2])
    with path.open("ab") as f:
        f.write(RECORD.pack(500, 0) + b"torn")  # killed in the middle of an append
    report = verify_log(path)
    assert report.exit_code == 2
    assert "did not finish" in (report.problem or "") and "nothing wrong" in report.problem
    assert any("torn" in note for note in report.notes)


def test_unreadable_and_foreign_files(tmp_path) -> None:
    assert verify_log(tmp_path / "missing").exit_code == 2
    assert verify_log(tmp_path).exit_code == 2  # a directory
    junk = tmp_path / "junk"
    junk.write_bytes(b"hello, this is not a log")
    assert verify_log(junk).exit_code == 2
    other = tmp_path / "other"
    write_records(other, [{"t": "entry"}])
    report = verify_log(other)
    assert report.exit_code == 2 and "not a nodealer log" in (report.problem or "")


def spec(n: int) -> TableSpec:
    return TableSpec(b"setup-test", tuple(Identity.generate().public for _ in range(n)))


def test_setup_must_fit_the_table() -> None:
    table = spec(3)
    setup = parse_setup(table, setup_body("bomb", 3, None, False))
    assert (setup.game, setup.seats, setup.proven) == ("bomb", 3, False)
    bad = [
        ({"t": "move"}, "must be the host's setup"),
        (setup_body("poker", 3), "unknown game"),
        (setup_body("bluff", 2), "table has 3"),
        (setup_body("bomb", 3, config={"detonation_seconds": 0}), "bad bomb config"),
        ({**setup_body("mao", 3), "proven": "yes"}, "true/false"),
        ({**setup_body("mao", 3), "extra": 1}, "expected"),
    ]
    for body, words in bad:
        with pytest.raises(SetupError, match=words):
            parse_setup(table, body)
    with pytest.raises(SetupError, match="bluff is for"):
        parse_setup(spec(9), setup_body("bluff", 9))


def test_replay_names_whoever_writes_before_the_setup() -> None:
    table = spec(2)
    replay = Replay(table)
    fault = replay.feed(1, 0, 1, setup_body("bluff", 2))
    assert fault is not None and fault.seat == 1 and fault.fingerprint == table.seats[1].fingerprint
    assert replay.broken and replay.table is None
    assert replay.feed(2, 0, 0, setup_body("bluff", 2)) is None  # nothing more is played
    with pytest.raises(ValueError, match="#4 fed where #3"):
        replay.feed(4, 0, 0, {})


def test_special_files_are_bad_input_at_once(tmp_path) -> None:
    """Issue 10: a FIFO used to hang, /dev/zero to die with MemoryError,
    /dev/null to say "no such file": only regular files are read."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/null"), Path("/dev/zero")):
        report = verify_log(path)
        assert report.exit_code == 2 and "not a regular file" in (report.problem or ""), path
    assert "is a directory" in (verify_log(tmp_path).problem or "")
    assert "No such file" in (verify_log(tmp_path / "missing").problem or "")


def test_a_large_file_of_zeros_is_read_in_bounded_memory(tmp_path) -> None:
    zeros = tmp_path / "zeros"
    with zeros.open("wb") as f:
        f.truncate(256 << 20)  # sparse: 256 MiB of zeros
    tracemalloc.start()
    try:
        report = verify_log(zeros)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.exit_code == 2 and "not a nodealer log" in (report.problem or "")
    assert peak < 1 << 20, peak  # the whole file used to be read at once


def test_an_entry_copied_to_the_end_names_nobody(game: PeerResult, tmp_path) -> None:
    """A genuine entry out of place (copied, moved) frames no sequencer."""
    path, records = copy_log(game, tmp_path)
    entries = [r for r in records if r["t"] == "entry"]
    write_records(path, [*records, entries[3]])  # entry #4 again, at the end
    report = verify_log(path)
    assert report.exit_code == 2 and not report.faults
    assert f"entry {len(entries) + 1} " in (report.problem or "")


def test_a_log_cut_short_accuses_nobody(game: PeerResult, tmp_path) -> None:
    """Issue 16: cutting bytes off a clean log (a copy taken mid-game, a
    crash) is unfinished (exit 2), never "CHEATING: seat s has not made its
    final reveal"; a few stray bytes at the end are a torn record."""
    data = game.log_path.read_bytes()
    for cut in (100, 1000, 5000):
        path = tmp_path / f"cut{cut}"
        path.write_bytes(data[:-cut])
        report = verify_log(path)
        assert report.exit_code == 2 and not report.faults, (cut, report.lines())
    stray = tmp_path / "stray"
    stray.write_bytes(data + b"\x01\x02\x03")
    report = verify_log(stray)
    assert report.exit_code == 0 and any("torn" in n for n in report.notes)


def test_verify_json(game: PeerResult, tmp_path, capsys) -> None:
    assert main(["verify", "--json", str(game.log_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "clean" and doc["exit"] == 0 and doc["game"] == "bluff"
    assert next(s["fingerprint"] for s in doc["seats"]) == game.fingerprint
    assert doc["outcome"]["reason"] and doc["faults"] == [] and doc["problem"] is None
    assert doc["counts"]["entries"] > 0 and doc["counts"]["keys"] > 0
    path, records = copy_log(game, tmp_path)
    entries = [r for r in records if r["t"] == "entry"]
    write_records(path, [*records, entries[3]])
    assert main(["verify", "--json", str(path)]) == 2  # an entry out of place names nobody
    doc = json.loads(capsys.readouterr().out)
    assert (
        doc["exit"] == 2 and doc["faults"] == [] and f"entry {len(entries) + 1} " in doc["problem"]
    )


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data())
def test_any_damage_is_exit_1_or_2_never_a_traceback(
    game: PeerResult, data, tmp_path_factory
) -> None:
    records, _ = read_records(game.log_path)
    kind = data.draw(st.sampled_from(["flip", "drop", "duplicate", "swap"]))
    if kind == "flip":
        raw = bytearray(game.log_path.read_bytes())
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] ^= data.draw(st.integers(1, 255))
        blob = bytes(raw)
    else:
        i = data.draw(st.integers(1, len(records) - 1))
        j = data.draw(st.integers(i, min(len(records) - 1, i + 5)))
        if kind == "drop":
            records = records[:i] + records[j + 1 :]
        elif kind == "duplicate":
            records = records[: j + 1] + records[i : j + 1] + records[j + 1 :]
        else:
            records[i], records[j] = records[j], records[i]
        blob = b"".join(
            RECORD.pack(len(p), zlib.crc32(p)) + p
            for p in (msgpack.packb(r, use_bin_type=True) for r in records)
        )
    path = tmp_path_factory.mktemp("damage") / "log"
    path.write_bytes(blob)
    report = verify_log(path)
    if blob != game.log_path.read_bytes():
        assert report.exit_code in (0, 1, 2)
        if report.exit_code == 1:
            assert all(f.reason for f in report.faults)


def test_signatures_bind_the_seat_list_not_only_the_table_id() -> None:
    """protocol.md §3.2-3.4 (version 2): every signature is over the genesis
    hash, so a header that keeps the table id but changes the seats makes
    the signatures fail instead of moving who signed what (review F3)."""
    from p2p.envelope import Entry, Event, EventError

    a, b, c = Identity.generate(), Identity.generate(), Identity.generate()
    table = TableSpec(b"t" * 16, (a.public, b.public))
    grown = TableSpec(b"t" * 16, (a.public, b.public, c.public))
    event = Event.create(table, b, 1, 0, msgpack.packb({"k": "x"}))
    entry = Entry.create(table, a, 1, 0, table.genesis, event)
    entry.verify(table)
    with pytest.raises(EventError):
        event.verify(grown)
    with pytest.raises(EventError):
        entry.verify_sequencer(grown)


def test_a_header_with_other_seats_or_an_old_version_names_nobody(
    game: PeerResult, tmp_path: Path
) -> None:
    path, records = copy_log(game, tmp_path)
    header = dict(records[0])
    records[0] = {**header, "seats": [*header["seats"], Identity.generate().public.raw]}
    write_records(path, records)
    report = verify_log(path)
    assert report.exit_code == 2 and not report.faults, report.lines()
    records[0] = {**header, "v": 1}
    write_records(path, records)
    report = verify_log(path)
    assert report.exit_code == 2 and not report.faults
    assert "a log of protocol version 1; this program reads versions 2 and 3" in report.problem


_POINTS = st.one_of(
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.binary(max_size=40),
    st.lists(st.one_of(st.binary(min_size=32, max_size=32), st.integers()), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["shuffle", "lock", "reveal", 7]),
    seat=st.one_of(st.integers(-2, 5), st.text(max_size=2)),
    deck=_POINTS,
    stripped=_POINTS,
    number=st.one_of(st.integers(-1, 3), st.none(), st.text(max_size=1)),
)
def test_the_proofs_read_ahead_survive_any_body(kind, seat, deck, stripped, number) -> None:
    """verify's read-ahead of the pass proofs (pass_checks) is only a guess:
    no signed body, however malformed, may raise in it (review of
    2026-12-01: a deck that was an int crashed `nodealer verify` with exit 1
    and hid the cheater the replay would have named)."""
    from p2p.store import parse_log
    from table.precheck import pass_checks

    records, _ = read_records(Path(__file__).parent / "vectors" / "bluff-2-proven.log")
    saved = parse_log(records)
    bodies = [entry.event.decoded_body() for entry in saved.entries[:1]]
    msg = {"type": kind, "seat": seat, "deck": deck, "stripped": stripped}
    assert isinstance(
        pass_checks(saved.table, [*bodies, {"t": "deal", "deal": number, "msg": msg}]), list
    )


def test_a_failing_read_ahead_never_decides_a_verdict(monkeypatch, capsys) -> None:
    """The read-ahead's process (``python -m table.precheck LOG``), however
    broken, exits quietly having said nothing it did not check; the replay
    verifies the rest (test_table_memory: a child that says nothing)."""
    import table.precheck as precheck

    def broken(*_args: object) -> list:
        raise TypeError("a bug in the read-ahead")

    monkeypatch.setattr(precheck.PassReader, "take", broken)
    assert precheck.main([str(Path(__file__).parent / "vectors" / "bluff-2-proven.log")]) == 1
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("change", ["removed", "shortened"])
def test_a_log_that_changes_while_read_is_bad_input_not_a_traceback(
    game: PeerResult, tmp_path, monkeypatch, change: str
) -> None:
    """verify reads the file twice (an index, then the chain) and once more
    for the entry where the chain breaks: a file removed or cut meanwhile is
    'cannot read' (exit 2), never a traceback (review of the streamed verify)."""
    import p2p.store as store

    path, records = copy_log(game, tmp_path)
    entry = next(r for r in records if r["t"] == "entry" and r["e"]["seq"] == 5)["e"]
    entry["s"] = bytes(64)  # the chain breaks at seq 5
    write_records(path, records)
    whole = path.read_bytes()
    walk = store.VerifiedChain.__iter__

    def then_changed(self):  # the chain is walked, then the file changes
        yield from walk(self)
        if change == "removed":
            path.unlink()
        else:
            path.write_bytes(whole[:200])

    monkeypatch.setattr(store.VerifiedChain, "__iter__", then_changed)
    report = verify_log(path)
    assert report.exit_code == 2 and not report.faults
    assert "cannot read" in (report.problem or ""), report.problem
