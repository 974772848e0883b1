"""A2d (p2p/log.py `_ack` rule 1 in memory only; with a2c): the third
review's A3 split comes back if the two honest seats restart while they wait
for term 1's newterm (after their votes): each acks its own branch at floor
1 again (a2c), then each is given the other's branch by seat 1's two
newterms; each swaps and counts the other's floor-1 ack (rule 3 spares acks
of the swap's own term). No link is down: the two swaps are just one round
trip apart.

(The fourth review's script; tests/test_p2p_split.py runs it.)
"""

from __future__ import annotations

import msgpack

from p2p.envelope import Entry, Event, Head, proof_from_wire
from p2p.log import LogMachine
from tests.p2p_sim import SimNet
from tests.schedule_split_after_restart import restart

COALITION = {0, 1}


def _unused_restart(net: SimNet, seat: int) -> None:
    """As tests/p2p_chaos.py: a seat back from what it persisted."""
    chain: list[Entry] = []
    own, led, voted, final, proofs = [], [], 0, 0, []
    for r in net.persisted[seat]:
        t = r["t"]
        if t == "entry":
            chain.append(Entry.from_wire(r["e"]))
        elif t == "truncate":
            del chain[r["seq"]:]
        elif t == "submit":
            own.append(Event.from_wire(r["ev"]))
        elif t == "lead":
            led.append(r["term"])
        elif t == "vote":
            voted = max(voted, r["term"])
        elif t == "final":
            final = max(final, r["seq"])
        elif t in ("proof", "forged", "replay"):
            proofs.append(proof_from_wire(t, r))
    m = LogMachine(net.table, net.ids[seat], timeout=net.timeout, now=net.now, entries=chain,
                   own_events=own, led_terms=led, proofs=proofs, voted=voted, final=final)
    net.machines[seat] = m
    net.down.discard(seat)
    net.apply(seat, m.take_effects())
    for other in range(len(net.ids)):
        if other != seat:
            net.apply(seat, m.peer_connected(other, net.now))
            net.apply(other, net.machines[other].peer_connected(seat, net.now))


def main() -> dict[int, bytes]:
    net = SimNet(4, timeout=1.0)
    for seat in range(4):
        for i in range(2):
            net.submit(seat, {"t": "warmup", "s": seat, "i": i})
            net.run()
    net.advance(0.5)
    m2, m3 = net.machines[2], net.machines[3]
    k = m2.head + 1
    assert m2.final == m3.final == k - 1
    captured: list[tuple[int, int, dict]] = []
    link_down = False

    def tamper(src: int, dst: int, msg: dict):
        if src in COALITION:
            return None  # the coalition speaks only through the script
        if dst in COALITION:
            captured.append((src, dst, msg))
            return None
        if link_down and {src, dst} == {2, 3}:
            return None  # the honest pair's link is down (each still reaches the coalition)
        return msg

    net.tamper = tamper
    ids, table = net.ids, net.table
    prev = m2.hashes[k - 1]
    x = Entry.create(table, ids[0], k, 0, prev, net.machines[0].author(msgpack.packb({"t": "X"})))
    y = Entry.create(table, ids[0], k, 0, prev, net.machines[1].author(msgpack.packb({"t": "Y"})))
    hx, hy = x.hash(table), y.hash(table)

    def inject(src: int, dst: int, msg: dict) -> None:
        net.queues.setdefault((src, dst), []).append(msg)

    inject(0, 2, {"k": "entry", "e": y.to_wire()})
    inject(0, 3, {"k": "entry", "e": x.to_wire()})
    net.run()
    assert 0 in net.machines[2].banned and 0 in net.machines[3].banned
    # the honest seats' own acks of seq k, as the coalition received them
    acks = {}
    for s, _, m in captured:
        if m["k"] == "ack" and m["seq"] == k:
            acks.setdefault((s, m["term"], bytes(m["h"])), m)
    print("honest acks of seq k the coalition holds:",
          sorted((s, t, "x" if h == hx else "y") for s, t, h in acks))
    # (both seats acked their own branch: 2 y, 3 x)
    assert any(s == 2 and h == hy for s, _, h in acks)
    assert any(s == 3 and h == hx for s, _, h in acks)
    votes = {s: m for s, d, m in captured if d == 1 and m["k"] == "vote" and m["term"] == 1}
    assert set(votes) == {2, 3}
    # both honest seats crash and come back while waiting for term 1's newterm
    for s in (2, 3):
        net.kill(s)
    for s in (2, 3):
        restart(net, s)
    net.run()
    m2, m3 = net.machines[2], net.machines[3]
    print("after the restarts (limbo lost): acks of seq k the coalition got:",
          sorted({(s, m["term"], "x" if bytes(m["h"]) == hx else "y")
                  for s, d, m in captured if m["k"] == "ack" and m["seq"] == k}))
    for c in COALITION:
        for floor in (0, 1):
            inject(c, 2, Head.create(table, ids[c], "ack", floor, k, 0, hx).to_wire())
            inject(c, 3, Head.create(table, ids[c], "ack", floor, k, 0, hy).to_wire())
    # the coalition passes on the other honest seat's floor-0 ack
    # (kept by nobody after the restarts)
    old0 = {s: m for s, d, m in captured if m["k"] == "ack" and m["seq"] == k and m["term"] == 0}
    for dst, other in ((2, 3), (3, 2)):
        a = old0[other]
        inject(0, dst, {"k": "acks", "of": [{"seat": other, "term": 0, "seq": a["seq"],
                                              "hterm": a["hterm"], "h": a["h"], "s": a["s"]}]})
    net.run()
    captured.clear()
    own = Head.create(table, ids[1], "vote", 1, k, 0, hx)
    cert = [{"seat": 1, "seq": own.seq, "hterm": 0, "h": own.hash, "s": own.sig}] + [
        {"seat": s, "seq": v["seq"], "hterm": v["hterm"], "h": v["h"], "s": v["s"]}
        for s, v in sorted(votes.items())
    ]
    inject(1, 2, {**Head.create(table, ids[1], "newterm", 1, k, 0, hx).to_wire(), "votes": cert})
    inject(1, 3, {**Head.create(table, ids[1], "newterm", 1, k, 0, hy).to_wire(), "votes": cert})
    net.run()
    fetches = [(s, m) for s, d, m in captured if d == 1 and m["k"] == "fetch"]
    for src, msg in fetches:  # both answers queued before either is delivered (one RTT apart)
        for seq in range(msg["from"], k + 1):
            entry = (x if src == 2 else y) if seq == k else m2.chain[seq - 1]
            inject(1, src, {"k": "entry", "e": entry.to_wire()})
    net.run()
    for _ in range(4):
        net.advance(0.25)
    held = {}
    for s in (2, 3):
        m = net.machines[s]
        print(f"seat {s}: head {m.head} final {m.final} entry k =",
              "x" if m.hashes[k] == hx else "y", "_swap", m._swap)
        if m.final >= k:
            held[s] = m.hashes[k]
    print("errors:", net.errors[:3])
    return held


if __name__ == "__main__":
    main()
