"""Memory bounded by the table, not the game: what the table keeps of the
past answers exactly as keeping everything would (the engine state after any
earlier body), and a replay that keeps no entries reaches the same table."""

from __future__ import annotations

import functools
import sys
import zlib
from pathlib import Path
from typing import Any

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from table import history
from table.local import LocalTable
from table.machine import Table, TableSetup
from table.replay import Replay, setup_body
from table.verify import verify_log


def test_the_state_after_every_earlier_body_is_the_one_the_game_had(monkeypatch) -> None:
    monkeypatch.setattr(history, "EVERY", 5)  # many checkpoints and re-applied stretches
    setup = TableSetup(b"history", "mao", 3, proven=False)
    local = LocalTable(setup, sensible_bots("mao", 3, 7))
    table = Table(setup)
    states = [table.game.encode(table.state)]
    for _ in range(400):
        if not local.step():
            break
        while len(states) <= len(local.log):
            author, body = local.log[len(states) - 1]
            assert table.feed(author, body).ok
            states.append(table.game.encode(table.state))
    assert len(states) > 100, "a game long enough to cross many checkpoints"
    assert len(table._history) == len(states) == table.count + 1
    for k, encoded in enumerate(states):
        assert table.game.encode(table._history[k]) == encoded, k
    kept = len(table._history._states)
    assert kept <= len(table.events) // 5 + 1 < len(states)


def test_a_replay_that_keeps_no_entries_reaches_the_same_table() -> None:
    setup = TableSetup(b"no-items", "bluff", 2, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 2, 2))
    while local.step():
        pass
    ids = [Identity.generate() for _ in range(2)]
    spec = TableSpec(b"no-items", tuple(i.public for i in ids))
    kept, lean = Replay(spec), Replay(spec, keep=False)
    for replay in (kept, lean):
        replay.feed(1, 0, 0, setup_body("bluff", 2, None, False))
        for seq, (author, body) in enumerate(local.log, start=2):
            assert replay.feed(seq, 0, author, body) is None
    assert len(kept.items) == kept.fed == lean.fed == len(local.log) + 1 and not lean.items
    assert lean.table is not None and kept.table is not None
    assert lean.table.game.encode(lean.table.state) == kept.table.game.encode(kept.table.state)
    assert lean.audit().ok and str(lean.outcome()) == str(kept.outcome())


VECTOR = Path(__file__).parent / "vectors" / "bluff-2-proven.log"


def test_verify_reads_the_pass_proofs_ahead_and_a_failing_read_ahead_decides_nothing(
    monkeypatch, tmp_path: Path
) -> None:
    """The second process checks the pass proofs ahead and the replay takes
    its word for them; a read-ahead that says nothing, or garbage, decides
    nothing: the replay verifies every proof itself (same report)."""
    import table.precheck as precheck

    monkeypatch.setattr(precheck.group, "workers", lambda: 2)
    monkeypatch.setattr(precheck, "MIN_LOG_BYTES", 0)
    monkeypatch.setattr(precheck, "_cores_taken", lambda: False)
    answers: list[bool] = []
    ask = precheck.ProofsAhead.__call__

    def counted(self: precheck.ProofsAhead, check: object) -> bool:
        answers.append(ask(self, check))
        return answers[-1]

    monkeypatch.setattr(precheck.ProofsAhead, "__call__", counted)
    clean = verify_log(VECTOR)
    assert clean.exit_code == 0, clean.lines()
    assert any(answers), "the replay took pass proofs the read-ahead had verified"
    garbage = "import sys; sys.stdout.buffer.write(bytes([0, 0, 0, 3, 0x92, 7, 0xC0]))"
    for child in ("import sys; sys.exit(3)", garbage):
        script = tmp_path / "child.py"
        script.write_text(child)
        start = functools.partial(_run_instead, precheck.subprocess.Popen, script)
        with monkeypatch.context() as m:  # the child run is this script, not table.precheck
            m.setattr(precheck.subprocess, "Popen", start)
            answers.clear()
            report = verify_log(VECTOR)
        assert report.exit_code == 0 and answers and not any(answers), report.lines()
        assert report.counts == clean.counts and str(report.outcome) == str(clean.outcome)


def _run_instead(popen: Any, script: Path, _args: object, **kwargs: Any) -> Any:
    return popen([sys.executable, str(script)], **kwargs)


def test_the_streamed_log_index_is_the_parsed_log(tmp_path) -> None:
    """scan_log keeps, as offsets, exactly the entries parse_log keeps (a
    truncate record cuts the ones after its seq)."""
    import msgpack

    from p2p.store import RECORD_HEADER, parse_log, read_records, scan_log

    records, _ = read_records(VECTOR)
    cut = 5
    records = [*records, {"t": "truncate", "seq": cut}, *records[cut + 1 : cut + 4]]
    path = tmp_path / "log"
    with path.open("wb") as f:
        for record in records:
            payload = msgpack.packb(record, use_bin_type=True)
            f.write(RECORD_HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
    saved = parse_log(read_records(path)[0])
    index = scan_log(path)
    assert index is not None and index.table == saved.table and index.problem is None
    assert list(index.entries(path)) == saved.entries
    assert len(saved.entries) == cut + 3
    assert [index.entry(path, k + 1) for k in range(len(saved.entries))] == saved.entries
    assert index.end == path.stat().st_size


def test_signatures_checked_ahead_stop_the_chain_where_checking_in_turn_does(
    tmp_path, monkeypatch
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import msgpack

    from p2p import store
    from p2p.store import RECORD_HEADER, read_records, scan_log

    records, _ = read_records(VECTOR)
    entries = [k for k, r in enumerate(records) if r["t"] == "entry"]
    assert len(entries) > 2 * 3 + 5, "a log longer than a few batches"
    bad = entries[9]
    sig = bytearray(records[bad]["e"]["s"])
    sig[0] ^= 1
    records[bad]["e"]["s"] = bytes(sig)
    path = tmp_path / "log"
    with path.open("wb") as f:
        for record in records:
            payload = msgpack.packb(record, use_bin_type=True)
            f.write(RECORD_HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
    index = scan_log(path)
    assert index is not None
    results = []
    for batch in (3, 64):
        monkeypatch.setattr(store, "SIGNATURE_BATCH", batch)
        with ThreadPoolExecutor(1) as pool:
            for chain in (index.chain(path), index.chain(path, pool)):
                seqs = [entry.seq for entry in chain]
                results.append((seqs, chain.good, str(chain.problem)))
    assert results[0][1] == 9 and results[0][0] == list(range(1, 10)), results[0]
    assert "not signed" in results[0][2] or "signature" in results[0][2], results[0]
    assert all(r == results[0] for r in results)


def test_proof_records_that_do_not_verify_cost_no_memory(tmp_path) -> None:
    """(v3 review 5, #7) anyone can append well-framed proof records to a
    log; scan_log checks each as it reads it and keeps only those that
    verify (one per seat named), so verify holds none of the bogus ones."""
    import msgpack

    from p2p.store import RECORD_HEADER, read_records, scan_log

    records, _ = read_records(VECTOR)
    entry = records[1]["e"]
    bogus = {**entry, "ev": {**entry["ev"], "b": b"\0" * 1000}}  # same seq, another body
    path = tmp_path / "log"
    with path.open("wb") as f:
        for record in [*records, *({"t": "proof", "a": entry, "b": bogus} for _ in range(200))]:
            payload = msgpack.packb(record, use_bin_type=True)
            f.write(RECORD_HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
    index = scan_log(path)
    assert index is not None and index.proofs == [] and index.bad_proofs == 200
    report = verify_log(path)
    assert report.exit_code == 0 and not report.faults
    assert any("ignored 200 proof records that do not verify" in n for n in report.notes)
