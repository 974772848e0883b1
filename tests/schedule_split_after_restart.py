"""A2a (p2p/log.py `_swap`, p2p/election.py `term_start_hash`; protocol.md
§3.5 proof 1, "The exception of (ii)", rule 3): the three new rules live in
memory only. The review-A3 schedule of tests/test_p2p_split.py (seat 0
equivocates, seat 1 gives each honest seat the other's branch), then each
honest seat restarts (a crash, a power cut: `nodealer join` again) while the
link between the two honest seats is down (each still reaches the
coalition). After the restart `_swap` is gone, so the other honest seat's
floor-0 ack of the branch we now hold (signed before either swapped) counts
again: the coalition relays it (`acks`). Do both honest seats end with
different FINAL entries at seq k?

(The fourth review's script; tests/test_p2p_split.py runs it.)
"""

from __future__ import annotations

import msgpack

from p2p.envelope import Entry, Head
from tests.p2p_sim import SimNet, restored

COALITION = {0, 1}


def restart(net: SimNet, seat: int) -> None:
    """As tests/p2p_chaos.py: a seat back from what it persisted."""
    m = restored(net, seat)
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
    a2y = next(m for (s, t, h), m in acks.items() if s == 2 and h == hy)
    a3x = next(m for (s, t, h), m in acks.items() if s == 3 and h == hx)
    votes = {s: m for s, d, m in captured if d == 1 and m["k"] == "vote" and m["term"] == 1}
    assert set(votes) == {2, 3}
    for c in COALITION:
        for floor in (0, 1):
            inject(c, 2, Head.create(table, ids[c], "ack", floor, k, 0, hx).to_wire())
            inject(c, 3, Head.create(table, ids[c], "ack", floor, k, 0, hy).to_wire())
    net.run()
    captured.clear()
    own = Head.create(table, ids[1], "vote", 1, k, 0, hx)
    cert = [{"seat": 1, "seq": own.seq, "hterm": 0, "h": own.hash, "s": own.sig}] + [
        {"seat": s, "seq": v["seq"], "hterm": v["hterm"], "h": v["h"], "s": v["s"]}
        for s, v in sorted(votes.items())
    ]
    nt = {2: {**Head.create(table, ids[1], "newterm", 1, k, 0, hx).to_wire(), "votes": cert},
          3: {**Head.create(table, ids[1], "newterm", 1, k, 0, hy).to_wire(), "votes": cert}}
    inject(1, 2, nt[2])
    inject(1, 3, nt[3])
    net.run()
    for src, msg in [(s, m) for s, d, m in captured if d == 1 and m["k"] == "fetch"]:
        for seq in range(msg["from"], k + 1):
            entry = (x if src == 2 else y) if seq == k else m2.chain[seq - 1]
            inject(1, src, {"k": "entry", "e": entry.to_wire()})
    net.run()
    for _ in range(2):
        net.advance(0.2)
    print("after the swaps: seat 2 holds", "x" if net.machines[2].hashes[k] == hx else "y",
          "final", net.machines[2].final, "| seat 3 holds",
          "x" if net.machines[3].hashes[k] == hx else "y", "final", net.machines[3].final,
          "| _swap", net.machines[2]._swap, net.machines[3]._swap)
    # now: the honest link goes down, both honest seats restart
    link_down = True
    for s in (2, 3):
        net.kill(s)
    for s in (2, 3):
        restart(net, s)
    net.run()
    print("restarted: _swap", net.machines[2]._swap, net.machines[3]._swap,
          "term_start_hash set:", net.machines[2].term_start_hash is not None)
    # the coalition: the newterm again (as a sequencer does to a peer that connects),
    # its acks, and the OTHER honest seat's old floor-0 ack, passed on
    for s, other_ack, h in ((2, a3x, hx), (3, a2y, hy)):
        inject(1, s, nt[s])
        other = 3 if s == 2 else 2
        inject(0, s, {"k": "acks", "of": [
            {"seat": other, "term": other_ack["term"], "seq": other_ack["seq"],
             "hterm": other_ack["hterm"], "h": other_ack["h"], "s": other_ack["s"]}]})
        for c in COALITION:
            for floor in (0, 1):
                inject(c, s, Head.create(table, ids[c], "ack", floor, k, 0, h).to_wire())
    net.run()
    for _ in range(4):
        net.advance(0.25)
    held = {}
    for s in (2, 3):
        m = net.machines[s]
        print(f"seat {s}: head {m.head} final {m.final} entry k =",
              "x" if m.hashes[k] == hx else "y")
        if m.final >= k:
            held[s] = m.hashes[k]
    print("errors:", net.errors[:3])
    return held


if __name__ == "__main__":
    main()
