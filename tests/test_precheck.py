"""verify's read-ahead process (table/precheck.py): what it says is exactly
the statements PassReader finds, each checked by the single verifier."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import msgpack

from mental_poker.batch import statement_key
from p2p.store import RECORD_HEADER, parse_log, read_records
from table.precheck import pass_checks, serve

VECTOR = Path(__file__).parent / "vectors" / "bluff-2-proven.log"


def _said(data: bytes) -> list[tuple[int, list[tuple[bytes, bool]]]]:
    out, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        seq, results = msgpack.unpackb(data[at + 4 : at + 4 + size])
        out.append((seq, [(key, held) for key, held in results]))
        at += 4 + size
    return out


def test_the_child_says_each_stated_pass_proof_held_in_log_order() -> None:
    out = io.BytesIO()
    serve(VECTOR, out)
    said = _said(out.getvalue())
    saved = parse_log(read_records(VECTOR)[0])
    checks = pass_checks(saved.table, [e.event.decoded_body() for e in saved.entries])
    keys = [key for _, results in said for key, _ in results]
    assert keys == [statement_key(c) for c in checks] and len(keys) == 4
    assert all(held for _, results in said for _, held in results)
    seqs = [seq for seq, _ in said]
    assert seqs == sorted(seqs)


def test_a_proof_that_fails_is_said_not_to_hold(tmp_path: Path) -> None:
    """Two cards of the first shuffle swapped (the child checks no
    signature: the replay does): that proof is said not to hold, and the
    replay will check it itself and reach its own verdict."""
    records, _ = read_records(VECTOR)
    for record in records:
        if record["t"] != "entry":
            continue
        body = msgpack.unpackb(record["e"]["ev"]["b"])
        if isinstance(body, dict) and body.get("t") == "deal" and body["msg"]["type"] == "shuffle":
            deck = body["msg"]["deck"]
            deck[0], deck[1] = deck[1], deck[0]
            record["e"]["ev"]["b"] = msgpack.packb(body, use_bin_type=True)
            break
    path = tmp_path / "log"
    with path.open("wb") as f:
        for record in records:
            payload = msgpack.packb(record, use_bin_type=True)
            f.write(RECORD_HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
    out = io.BytesIO()
    serve(path, out)
    said = [held for _, results in _said(out.getvalue()) for _, held in results]
    assert said and said[0] is False


def test_no_read_ahead_process_when_the_cores_are_taken(monkeypatch) -> None:
    """A loaded machine gives two processes of one program the share of
    one: then the replay checks everything itself (and decides the same)."""
    import os

    import table.precheck as precheck

    monkeypatch.setattr(precheck, "MIN_LOG_BYTES", 0)
    monkeypatch.setattr(precheck.group, "workers", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (99.0, 99.0, 99.0), raising=False)
    with precheck.ProofsAhead(VECTOR) as ahead:
        assert ahead._process is None
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0), raising=False)
    with precheck.ProofsAhead(VECTOR) as ahead:
        assert ahead._process is not None
