"""Logs and bodies forged against ``nodealer verify`` and the replay every
session runs (the v3 review, /work/wt/reviews/v3-review.md): a body no
engine expects never crashes a peer or the verifier, and a file forged with
one seat's key names no honest seat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio

from engines.mao_events import RevealRule
from engines.mao_rules import M29_EXAMPLES
from p2p.envelope import Entry, Event, TableSpec
from p2p.identity import Identity
from p2p.store import _encode, read_log
from table.bot_table import PeerResult, play_bot_table
from table.replay import Replay


def play(name: str, home: Path, **kw: Any) -> list[PeerResult]:
    async def run() -> list[PeerResult]:
        with trio.fail_after(300):
            return await play_bot_table(
                name, 3, home, proven=False, seed=7, time_scale=0.02, processes=0, **kw
            )

    peers = trio.run(run)
    assert peers[0].result.clean
    return peers


@pytest.fixture(scope="module")
def mao(tmp_path_factory) -> list[PeerResult]:
    return play("mao", tmp_path_factory.mktemp("forged-mao"), rounds=1)


def rechain(spec: TableSpec, sequencer: Identity, events: list[Event]) -> list[Entry]:
    """``sequencer`` (seat 0, term 0) sequences ``events`` afresh."""
    out: list[Entry] = []
    prev = spec.genesis
    for seq, event in enumerate(events, start=1):
        entry = Entry.create(spec, sequencer, seq, 0, prev, event)
        out.append(entry)
        prev = entry.hash(spec)
    return out


def write_log(path: Path, spec: TableSpec, entries: list[Entry], extra: list[dict] = ()) -> Path:
    records = [{"t": "table", "v": spec.version, "table": spec.table_id,
                "seats": [k.raw for k in spec.seats]}]  # fmt: skip
    records += [{"t": "entry", "e": e.to_wire()} for e in entries]
    records += list(extra)
    path.write_bytes(b"".join(_encode(r) for r in records))
    return path


def verify_json(path: Path) -> dict[str, Any]:
    env = {**os.environ, "NODEALER_LANG": "en"}
    done = subprocess.run([sys.executable, "-m", "tui.cli", "verify", "--json", str(path)],
                          capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["exit"] == done.returncode
    return report


def identity(peer: PeerResult) -> Identity:
    return Identity.load_or_create(peer.log_path.parents[2])


# ------------------------------------------- finding 3: a negative rule slot


def test_a_negative_rule_slot_is_refused_by_the_event() -> None:
    rule = M29_EXAMPLES["red on black"]
    with pytest.raises(ValueError):
        RevealRule(0, -1, "ab" * 32, rule)
    assert RevealRule(0, 0, "ab" * 32, rule).slot == 0


@pytest.mark.parametrize("slot", [-1, -(2**63)])
def test_a_negative_rule_slot_names_its_author_and_crashes_nobody(
    mao: list[PeerResult], tmp_path: Path, slot: int
) -> None:
    """A ``reveal_rule`` naming slot -1 (Python's last rule) or -2**63 put in
    place of a real move of a real Mao game: the replay every session runs
    and ``verify`` name its author; neither raises."""
    saved = read_log(mao[0].log_path)
    spec, entries = saved.table, saved.entries
    k = max(i for i, e in enumerate(entries)
            if e.event.author == 0 and e.event.decoded_body().get("t") == "move")  # fmt: skip
    rule = {"trigger": "play", "conditions": [
        {"test": "rank", "values": [11, 12, 13], "phrase": "", "negate": False}],
        "effects": [{"do": "forbid", "n": 0, "phrase": ""}], "phrase": "no crowds"}  # fmt: skip
    body = {"t": "move", "event": {"kind": "reveal_rule", "seat": 0, "slot": slot,
                                   "salt": "ab" * 32, "rule": rule}}  # fmt: skip
    replay = Replay(spec)
    for e in entries[:k]:
        replay.feed(e.seq, e.term, e.event.author, e.event.decoded_body())
    fault = replay.feed(k + 1, 0, 0, body)
    assert fault is not None and fault.seat == 0 and "slot" in fault.reason
    seat0 = identity(mao[0])
    events = [e.event for e in entries[:k]]
    packed = msgpack.packb(body, use_bin_type=True)
    events.append(Event.create(spec, seat0, 0, entries[k].event.counter, packed))
    report = verify_json(write_log(tmp_path / "log", spec, rechain(spec, seat0, events)))
    assert report["verdict"] == "cheating"
    assert {f["seat"] for f in report["faults"]} == {0}


def test_an_unexpected_error_in_the_table_names_the_author(
    mao: list[PeerResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: whatever a body makes the table raise, the replay
    names the body's author ("could not be judged") instead of crashing."""
    saved = read_log(mao[0].log_path)
    spec, entries = saved.table, saved.entries
    replay = Replay(spec)
    for e in entries[:3]:
        replay.feed(e.seq, e.term, e.event.author, e.event.decoded_body())
    e = entries[3]

    def broken(*args: Any, **kw: Any) -> Any:
        raise IndexError("list index out of range")

    monkeypatch.setattr(replay.table, "feed", broken)
    fault = replay.feed(e.seq, e.term, e.event.author, e.event.decoded_body())
    assert fault is not None and fault.seat == e.event.author
    assert "could not be judged" in fault.reason and "IndexError" in fault.reason
