"""Logs and bodies forged against ``nodealer verify`` and the replay every
session runs (the v3 review, /work/wt/reviews/v3-review.md): a body no
engine expects never crashes a peer or the verifier, and a file forged with
one seat's key names no honest seat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from copy import deepcopy
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
from tui.cli import main


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

    table = replay.table
    monkeypatch.setattr(table, "_dispatch", broken)  # the table counts it, and stops
    count = table.count
    fault = replay.feed(e.seq, e.term, e.event.author, e.event.decoded_body())
    assert fault is not None and fault.seat == e.event.author
    assert "could not be judged" in fault.reason and "IndexError" in fault.reason
    assert table.count == count + 1 and table.stopped
    monkeypatch.setattr(table, "feed", broken)  # whatever else fails: the replay holds
    e = entries[4]
    fault = replay.feed(e.seq, e.term, e.event.author, e.event.decoded_body())
    assert fault is not None and fault.seat == e.event.author
    assert "could not be judged" in fault.reason


@pytest.fixture(scope="module")
def bluff(tmp_path_factory) -> list[PeerResult]:
    return play("bluff", tmp_path_factory.mktemp("forged-bluff"))


def genuine(peers: list[PeerResult]) -> tuple[TableSpec, list[Event], Identity]:
    """The spec, the events of seat 0's clean log (all in term 0) and the
    key of seat 0, the sequencer of term 0: all a forger with one key has."""
    saved = read_log(peers[0].log_path)
    assert all(e.term == 0 for e in saved.entries)
    return saved.table, [e.event for e in saved.entries], identity(peers[0])


# -------------------------- finding 2: an 'at' beyond the bodies before it


def test_a_reordered_log_names_no_honest_author(bluff: list[PeerResult], tmp_path: Path) -> None:
    """Seat 0 (one key: the sequencer) swaps its own body with seat 1's next
    one, whose ``at`` counted it. Seat 1 signed having seen more bodies than
    come before it: seat 1 or the sequencer broke the order, the log cannot
    say which; no seat is named (protocol.md §6 *Races*)."""
    spec, events, seat0 = genuine(bluff)
    j = next(j for j in range(1, len(events) - 1)
             if events[j].author == 0 and events[j + 1].author == 1
             and events[j + 1].decoded_body().get("at") == j)  # fmt: skip
    forged = [*events[:j], events[j + 1], events[j], *events[j + 2 :]]
    report = verify_json(write_log(tmp_path / "log", spec, rechain(spec, seat0, forged)))
    assert report["verdict"] == "cheating"
    assert [f["seat"] for f in report["faults"]] == [None]
    assert "broke the order" in report["faults"][0]["reason"]
    assert report["faults"][0]["entry"] == j + 1


def test_an_at_beyond_the_count_that_fits_now_is_judged_now(bluff: list[PeerResult]) -> None:
    """A body whose ``at`` is too large but that the table accepts as signed
    now is taken (its author gains nothing it could not have had)."""
    spec, events, _ = genuine(bluff)
    replay = Replay(spec)
    k = next(i for i, e in enumerate(events) if i > 3 and e.decoded_body().get("t") == "move")
    for seq, e in enumerate(events[:k], start=1):
        replay.feed(seq, 0, e.author, e.decoded_body())
    body = {**events[k].decoded_body(), "at": -1}  # a point no table has: the author's
    assert deepcopy(replay.table).feed(events[k].author, body, 0).seat == events[k].author
    body = {**events[k].decoded_body(), "at": 10**6}
    assert replay.feed(k + 1, 0, events[k].author, body) is None and not replay.faults


def test_two_passes_swapped_name_no_honest_seat(bluff: list[PeerResult], tmp_path: Path) -> None:
    """(v3 review 6, #10) Passes carry no ``at``: seat 0 (one key) swaps
    seat 1's shuffle pass with seat 2's (signed on seat 1's output) and
    re-chains. No honest seat signs a pass before the one it follows is
    final, so a pass out of turn shows a log out of the order it was signed
    in: the table stops there naming nobody (before: seat 2, "shuffle pass
    out of turn")."""
    spec, events, seat0 = genuine(bluff)

    def shuffle_of(seat: int) -> int:
        return next(i for i, e in enumerate(events)
                    if e.author == seat and e.decoded_body().get("t") == "deal"
                    and e.decoded_body()["msg"].get("type") == "shuffle")  # fmt: skip

    one, two = shuffle_of(1), shuffle_of(2)
    assert two == one + 1
    forged = [*events[:one], events[two], events[one], *events[two + 1 :]]
    report = verify_json(write_log(tmp_path / "log", spec, rechain(spec, seat0, forged)))
    assert [f["seat"] for f in report["faults"]] == [None], report["faults"]
    assert "broke the order" in report["faults"][0]["reason"]


@pytest.mark.parametrize("forger", [0, 1])
def test_a_body_re_signed_as_another_legal_one_names_no_honest_seat(
    bluff: list[PeerResult], tmp_path: Path, forger: int
) -> None:
    """(v3 review 5, #1) The forger re-signs one of its own plays, one that
    followed another seat's play, as a challenge (legal there, same
    counter) and re-chains the log in the term it leads (seat 0: term 0;
    seat 1: term 1 from seq 1, a file holds no certificates). The next
    honest body was signed for the real game: its ``seen`` is not this
    log's, so it is judged as signed now, and where that refuses it the
    table stops naming nobody (protocol.md §6 *Races*). Before ``seen``,
    verify named that honest seat."""
    spec, events, _ = genuine(bluff)
    key = identity(bluff[forger])
    bodies = [e.decoded_body() for e in events]
    assert all("seen" in b for b in bodies[1:] if "at" in b)  # a v3 session says what it saw
    def plays(i: int) -> bool:
        return bodies[i].get("t") == "move" and bodies[i]["event"]["kind"] == "play"

    j = next(
        i
        for i in range(2, len(events) - 1)
        if events[i].author == forger and plays(i) and plays(i - 1)
        and events[i - 1].author != forger
    )  # fmt: skip
    challenge = {"t": "move", "event": {"kind": "challenge", "seat": forger}, "at": bodies[j]["at"]}
    forged = list(events)
    forged[j] = Event.create(spec, key, forger, events[j].counter, msgpack.packb(challenge))
    entries, prev = [], spec.genesis
    for seq, event in enumerate(forged, start=1):
        entries.append(Entry.create(spec, key, seq, forger, prev, event))
        prev = entries[-1].hash(spec)
    report = verify_json(write_log(tmp_path / "log", spec, entries))
    named = {f["seat"] for f in report["faults"]} - {None, forger}
    assert not named, report["faults"]
    stops = [f for f in report["faults"] if f["seat"] is None]
    assert all("another log" in f["reason"] for f in stops), stops


# --------------------- finding 4: final reveals after a stop by a forged body


def test_final_reveals_after_a_forged_stop_name_only_the_forger(
    bluff: list[PeerResult], tmp_path: Path
) -> None:
    """Seat 0 re-signs one of its own mid-game moves into a refused body and
    re-chains the real log: the table stops there, before relocks and
    handovers the honest final reveals (signed for the real game) count.
    Those reveals are no evidence against their authors: only seat 0 is
    named (protocol.md §6 *After a stop*)."""
    spec, events, seat0 = genuine(bluff)
    k = next(i for i, e in enumerate(events)
             if i > 20 and e.author == 0 and e.decoded_body().get("t") == "move")  # fmt: skip
    bad = msgpack.packb({"t": "move", "event": {"kind": "bogus", "seat": 0}}, use_bin_type=True)
    events[k] = Event.create(spec, seat0, 0, events[k].counter, bad)
    report = verify_json(write_log(tmp_path / "log", spec, rechain(spec, seat0, events)))
    assert report["verdict"] == "cheating"
    assert [(f["seat"], f["entry"]) for f in report["faults"]] == [(0, k + 1)]


# ------------------- finding 7: a well-framed bad record after a whole game


@pytest.mark.parametrize(
    "extra",
    [{"t": "zzz", "x": 1}, {"t": "entry", "e": {"seq": "one"}}],
    ids=["unknown", "schema-bad"],
)
def test_a_bad_record_after_a_whole_game_keeps_what_came_before(
    bluff: list[PeerResult], tmp_path: Path, extra: dict, capsys
) -> None:
    """Reading stops at the first record that is not one (protocol.md
    §3.6), keeping what came before: anyone holding the file cannot make an
    honest log unverifiable by appending one; the report says what it
    ignored, in text and JSON, and the exit code is the prefix's."""
    spec, events, _ = genuine(bluff)
    saved = read_log(bluff[0].log_path)
    genuine_entry = {"t": "entry", "e": saved.entries[0].to_wire()}
    path = write_log(tmp_path / "log", spec, saved.entries, [extra, genuine_entry])
    report = verify_json(path)
    assert report["verdict"] == "clean" and report["exit"] == 0 and not report["faults"]
    assert report["counts"]["entries"] == len(events)
    ignored = [n for n in report["notes"] if n.startswith("ignored the rest of the file")]
    assert len(ignored) == 1 and f"after entry {len(events)}" in ignored[0]
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "note: ignored the rest of the file" in out and "clean:" in out


def test_an_abandon_counted_on_bodies_a_failover_cut_names_nobody() -> None:
    """(v3) An honest ``abandon`` signed from tentative entries that a
    failover then cut lands where fewer bodies came before it: judged as
    signed now, it counts while the seat still owes (and its author, not the
    entry's sequencer, is never named for it); v2 logs name the author."""
    from tests.test_absence import _abandon, _stalled

    for version in (3, 2):
        local = _stalled(4, holdout=2, version=version)
        table = local.table
        if version == 2:  # v2 has no abandon: any body with a far 'at' names its author
            body = {**local.log[-1][1], "at": table.count + 3}
            verdict = table.feed(local.log[-1][0], body, term=0)
            assert not verdict.ok and verdict.seat == local.log[-1][0]
            assert "'at' must be" in verdict.reason
            continue
        verdict = table.feed(0, _abandon(table, [2], at=table.count + 3), term=1)
        assert verdict.ok and not table.faults and table.absence.votes
