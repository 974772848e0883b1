"""(v3) Two more split attempts, each by a restart (fifth review of v3, #3 and
#10): n = 4, C = {0, 1}, the link between honest seats 2 and 3 down. Seat 0
gives seat 2 entry y and seat 3 entry x at seq k; C then leads later terms
with newterms that swap each honest seat to the other branch, and relays
old acks after a restart. Each function returns, per honest seat, the hash
it holds FINAL at seq k (None: not final); a split is two different ones.

* :func:`forgotten_term`: seat 3 enters terms by newterm without voting; a
  restart that forgot the term it followed lowered rule 3's floor.
* :func:`start_forgotten`, :func:`second_newterm` (sixth review, #4 and
  #9): a restarted seat that followed a term on disk had lost the start
  its newterm certified (so rule 1's limbo, and rule 2, were gone).
* :func:`older_newterm`: both honest seats vote in every election and
  restart; C re-sends each a genuine older newterm of the other's branch,
  whose entry relaxed rule 3 below the floor of a cut made before the
  restart.
"""

from __future__ import annotations

import msgpack

from p2p.envelope import Entry, Head
from tests.p2p_sim import SimNet


def final_at(k: int, *machines) -> dict[int, bytes | None]:
    """What each honest seat holds final at seq ``k`` (None: not final)."""
    return {m.me: m.hashes[k] if m.final >= k else None for m in machines}


def forgotten_term() -> dict[int, bytes | None]:
    """Review #3: the term a seat follows without voting, forgotten by a restart."""

    COAL = {0, 1}
    net = SimNet(4, timeout=1.0)
    for seat in range(4):
        for i in range(2):
            net.submit(seat, {"t": "warmup", "s": seat, "i": i})
            net.run()
    net.advance(0.5)
    ids, table = net.ids, net.table
    m2, m3 = net.machines[2], net.machines[3]
    k = m2.head + 1
    assert m2.final == m3.final == k - 1
    prefix = list(m2.chain)
    captured = []

    def tamper(src, dst, msg):
        if src in COAL:
            return None  # C speaks only through inject()
        if dst in COAL:
            captured.append((src, dst, msg))
            return None
        if {src, dst} == {2, 3}:
            return None  # the honest pair's link is down
        return msg

    net.tamper = tamper

    def inject(src, dst, msg):
        net.queues.setdefault((src, dst), []).append(msg)

    def grab(src, kind, **match):
        out = [
            m
            for s, d, m in captured
            if s == src and m["k"] == kind and all(m.get(f) == v for f, v in match.items())
        ]
        return out[-1] if out else None

    def signed(kind, seat, term, seq, hterm, h):
        return Head.create(table, ids[seat], kind, term, seq, hterm, h)

    def head_of(m):
        return m.head, m.head_term, m.head_hash

    # 1. equivocation at k
    prev = m2.hashes[k - 1]
    x = Entry.create(table, ids[0], k, 0, prev, net.machines[0].author(msgpack.packb({"t": "X"})))
    y = Entry.create(table, ids[0], k, 0, prev, net.machines[1].author(msgpack.packb({"t": "Y"})))
    hx, hy = x.hash(table), y.hash(table)
    inject(0, 2, {"k": "entry", "e": y.to_wire()})
    inject(0, 3, {"k": "entry", "e": x.to_wire()})
    net.run()
    ack2_y0 = grab(2, "ack", seq=k, term=0)
    ack3_x0 = grab(3, "ack", seq=k, term=0)
    assert ack2_y0["h"] == hy and ack3_x0["h"] == hx

    def grant_seat2():
        """C answers every pre-vote of seat 2 (never seat 3's)."""
        for s, _d, m in list(captured):
            if s == 2 and m["k"] == "prevote" and (m["term"],) not in granted:
                granted.add((m["term"],))
                for c in COAL:
                    g = signed("grant", c, m["term"], k, 0, hx)
                    inject(c, 2, g.to_wire())
        net.run()

    granted = set()
    # 2. seat 0 silent: seat 2 votes for term 1 (C grants), seat 3 gets no grant
    for _ in range(8):
        net.advance(0.5)
        grant_seat2()
        if grab(2, "vote", term=1):
            break
    vote2_1 = grab(2, "vote", term=1)
    assert vote2_1 is not None and net.machines[3].voted == 0

    def newterm(term, start_h, votes):
        cert = []
        for s in (0, 1):
            v = signed("vote", s, term, k, 0, start_h)
            cert.append({"seat": s, "seq": k, "hterm": 0, "h": start_h, "s": v.sig})
        for v in votes:
            cert.append({"seat": 2, "seq": v["seq"], "hterm": v["hterm"], "h": v["h"], "s": v["s"]})
        return {
            **signed("newterm", 1, term, k, 0, start_h).to_wire(),
            "votes": sorted(cert, key=lambda c: c["seat"]),
        }

    def answer_fetches(dst, branch):
        for s, _d, m in list(captured):
            if s == dst and m["k"] == "fetch" and (dst, m["from"], branch) not in answered:
                answered.add((dst, m["from"], branch))
                for seq in range(m["from"], k + 1):
                    e = branch if seq == k else prefix[seq - 1]
                    inject(1, dst, {"k": "entry", "e": e.to_wire()})
        net.run()

    answered = set()
    # 3. term 1, start x, for both
    nt1 = newterm(1, hx, [vote2_1])
    inject(1, 2, nt1)
    inject(1, 3, nt1)
    net.run()
    answer_fetches(2, x)
    m2, m3 = net.machines[2], net.machines[3]
    assert m2.term == 1 and m3.term == 1 and m2.hashes[k] == hx and m3.hashes[k] == hx
    net.apply(3, m3.peer_connected(1, net.now))  # seat 3's link to seat 1 comes back: its ack
    net.run()
    ack3_x1 = grab(3, "ack", seq=k, term=1)
    assert ack3_x1 is not None and ack3_x1["h"] == hx
    # C relays seat 3's floor-1 ack (and its floor-0 one) of x to seat 2, with its own acks of x
    for a in (ack3_x0, ack3_x1):
        inject(
            0,
            2,
            {
                "k": "acks",
                "of": [{"seat": 3, **{f: a[f] for f in ("term", "seq", "hterm", "h", "s")}}],
            },
        )
    for c in COAL:
        for floor in (0, 1):
            inject(c, 2, signed("ack", c, floor, k, 0, hx).to_wire())
    net.run()

    # 4. seat 1 silent: seat 2 climbs to a vote for term 5; seat 3 stays unvoted
    for _ in range(30):
        net.advance(0.5)
        grant_seat2()
        if grab(2, "vote", term=5):
            break
    vote2_5 = grab(2, "vote", term=5)
    assert vote2_5 is not None, [
        m["term"] for s, d, m in captured if s == 2 and m["k"] in ("vote", "prevote")
    ]

    # 5. term 5 for seat 3 only: start y
    m3 = net.machines[3]
    inject(1, 3, newterm(5, hy, [vote2_5]))
    net.run()
    answer_fetches(3, y)
    assert m3.term == 5 and m3.hashes[k] == hy, (m3.term, m3.hashes[k] == hy)

    # 6. seat 3 restarts; C relays seat 2's OLD floor-0 ack of y and acks y itself
    net.kill(3)
    net.restart(3)
    net.run()
    m3 = net.machines[3]
    inject(
        0,
        3,
        {
            "k": "acks",
            "of": [{"seat": 2, **{f: ack2_y0[f] for f in ("term", "seq", "hterm", "h", "s")}}],
        },
    )
    for c in COAL:
        inject(c, 3, signed("ack", c, 0, k, 0, hy).to_wire())
    net.run()
    net.advance(0.2)
    m2, m3 = net.machines[2], net.machines[3]
    return final_at(k, m2, m3)


def older_newterm() -> dict[int, bytes | None]:
    """Review #10: a restarted peer enters a newterm below its own vote."""

    COAL = {0, 1}
    net = SimNet(4, timeout=1.0)
    for seat in range(4):
        for i in range(2):
            net.submit(seat, {"t": "warmup", "s": seat, "i": i})
            net.run()
    net.advance(0.5)
    ids, table = net.ids, net.table
    k = net.machines[2].head + 1
    assert net.machines[2].final == net.machines[3].final == k - 1
    prefix = list(net.machines[2].chain)
    captured = []

    def tamper(src, dst, msg):
        if src in COAL:
            return None
        if dst in COAL:
            captured.append((src, dst, msg))
            return None
        if {src, dst} == {2, 3}:
            return None
        return msg

    net.tamper = tamper

    def inject(src, dst, msg):
        net.queues.setdefault((src, dst), []).append(msg)

    def grab(src, kind, **match):
        out = [
            m
            for s, d, m in captured
            if s == src and m["k"] == kind and all(m.get(f) == v for f, v in match.items())
        ]
        return out[-1] if out else None

    def signed(kind, seat, term, seq, hterm, h):
        return Head.create(table, ids[seat], kind, term, seq, hterm, h)

    def fields(a):
        return {f: a[f] for f in ("term", "seq", "hterm", "h", "s")}

    prev = net.machines[2].hashes[k - 1]
    x = Entry.create(table, ids[0], k, 0, prev, net.machines[0].author(msgpack.packb({"t": "X"})))
    y = Entry.create(table, ids[0], k, 0, prev, net.machines[1].author(msgpack.packb({"t": "Y"})))
    hx, hy = x.hash(table), y.hash(table)
    branch = {hx: x, hy: y}
    inject(0, 2, {"k": "entry", "e": y.to_wire()})
    inject(0, 3, {"k": "entry", "e": x.to_wire()})
    net.run()
    ack = {(2, 0): grab(2, "ack", seq=k, term=0), (3, 0): grab(3, "ack", seq=k, term=0)}

    granted = set()

    def grant_all():
        for s, _d, m in list(captured):
            if s in (2, 3) and m["k"] == "prevote" and (s, m["term"]) not in granted:
                granted.add((s, m["term"]))
                for c in COAL:
                    inject(c, s, signed("grant", c, m["term"], k, 0, hx).to_wire())
        net.run()

    def climb_to(term):
        for _ in range(40):
            net.advance(0.5)
            grant_all()
            if grab(2, "vote", term=term) and grab(3, "vote", term=term):
                return
        raise AssertionError(f"no votes for term {term}")

    climb_to(1)

    def newterm(term, start_h, voter):
        v = grab(voter, "vote", term=term)
        cert = [
            {
                "seat": s,
                "seq": k,
                "hterm": 0,
                "h": start_h,
                "s": signed("vote", s, term, k, 0, start_h).sig,
            }
            for s in (0, 1)
        ]
        cert.append({"seat": voter, "seq": v["seq"], "hterm": v["hterm"], "h": v["h"], "s": v["s"]})
        return {**signed("newterm", 1, term, k, 0, start_h).to_wire(), "votes": cert}

    answered = set()

    def answer_fetches():
        for s, _d, m in list(captured):
            if s in (2, 3) and m["k"] == "fetch" and (s, m["from"], len(captured)) not in answered:
                answered.add((s, m["from"], len(captured)))
                want = net.machines[s].term_start_hash
                for seq in range(m["from"], k + 1):
                    e = branch[want] if seq == k else prefix[seq - 1]
                    inject(1, s, {"k": "entry", "e": e.to_wire()})
        net.run()

    nt1 = {2: newterm(1, hy, 2), 3: newterm(1, hx, 3)}
    for s in (2, 3):
        inject(1, s, nt1[s])
    net.run()
    for s in (2, 3):
        net.apply(s, net.machines[s].peer_connected(1, net.now))  # a reconnect: its ack
    net.run()
    ack[(2, 1)] = grab(2, "ack", seq=k, term=1)
    ack[(3, 1)] = grab(3, "ack", seq=k, term=1)
    assert ack[(2, 1)]["h"] == hy and ack[(3, 1)]["h"] == hx

    climb_to(5)
    nt5 = {2: newterm(5, hx, 2), 3: newterm(5, hy, 3)}
    for s in (2, 3):
        inject(1, s, nt5[s])
    net.run()
    answer_fetches()
    m2, m3 = net.machines[2], net.machines[3]
    assert m2.hashes[k] == hx and m3.hashes[k] == hy, "swap failed"

    for s in (2, 3):
        net.kill(s)
    for s in (2, 3):
        net.restart(s)
    net.run()
    m2, m3 = net.machines[2], net.machines[3]

    inject(1, 2, nt1[3])  # term 1's newterm that started at x (sent to seat 3 in step 3)
    inject(1, 3, nt1[2])  # and the one that started at y
    net.run()
    for s in (2, 3):  # a blip of its link to seat 1: it acks on the reconnect
        net.apply(s, net.machines[s].peer_connected(1, net.now))
    net.run()
    for dst, other, h in ((2, 3, hx), (3, 2, hy)):
        for f in (0, 1):
            inject(0, dst, {"k": "acks", "of": [{"seat": other, **fields(ack[(other, f)])}]})
        for c in COAL:
            for f in (0, 1):
                inject(c, dst, signed("ack", c, f, k, 0, h).to_wire())
    net.run()
    net.advance(0.2)
    return final_at(k, net.machines[2], net.machines[3])


def start_forgotten() -> dict[int, bytes | None]:
    """Sixth review #4: a restarted seat followed the term on disk but had lost the start its
    newterm certified, so rule 1's limbo was gone and it acked its old branch at the new floor.
    """
    return _restart_split(own_first=False)


def second_newterm() -> dict[int, bytes | None]:
    """Sixth review #9: each honest seat followed term 1 from a newterm certifying its own branch,
    restarted, then entered a second newterm of term 1 certifying the other branch.
    """
    return _restart_split(own_first=True)


def _restart_split(own_first: bool) -> dict[int, bytes | None]:
    """Both honest seats restart in term 1; ``own_first``: each first followed
    term 1 from a newterm certifying its own branch and acked it (#9), else
    only from one certifying the other branch (#4)."""
    COAL = {0, 1}
    net = SimNet(4, timeout=1.0)
    for seat in range(4):
        for i in range(2):
            net.submit(seat, {"t": "warmup", "s": seat, "i": i})
            net.run()
    net.advance(0.5)
    ids, table = (net.ids, net.table)
    k = net.machines[2].head + 1
    assert net.machines[2].final == net.machines[3].final == k - 1
    prefix = list(net.machines[2].chain)
    captured = []

    def tamper(src, dst, msg):
        if src in COAL:
            return None
        if dst in COAL:
            captured.append((src, dst, msg))
            return None
        if {src, dst} == {2, 3}:
            return None
        return msg

    net.tamper = tamper

    def inject(src, dst, msg):
        net.queues.setdefault((src, dst), []).append(msg)

    def grab(src, kind, **match):
        out = [
            m
            for s, d, m in captured
            if s == src and m["k"] == kind and all((m.get(f) == v for f, v in match.items()))
        ]
        return out[-1] if out else None

    def signed(kind, seat, term, seq, hterm, h):
        return Head.create(table, ids[seat], kind, term, seq, hterm, h)

    def fields(a):
        return {f: a[f] for f in ("term", "seq", "hterm", "h", "s")}

    prev = net.machines[2].hashes[k - 1]
    x = Entry.create(table, ids[0], k, 0, prev, net.machines[0].author(msgpack.packb({"t": "X"})))
    y = Entry.create(table, ids[0], k, 0, prev, net.machines[1].author(msgpack.packb({"t": "Y"})))
    hx, hy = (x.hash(table), y.hash(table))
    branch = {hx: x, hy: y}
    inject(0, 2, {"k": "entry", "e": y.to_wire()})
    inject(0, 3, {"k": "entry", "e": x.to_wire()})
    net.run()
    ack = {(2, 0): grab(2, "ack", seq=k, term=0), (3, 0): grab(3, "ack", seq=k, term=0)}
    assert ack[2, 0]["h"] == hy and ack[3, 0]["h"] == hx
    granted = set()
    for _ in range(40):
        net.advance(0.5)
        for s, _d, m in list(captured):
            if s in (2, 3) and m["k"] == "prevote" and ((s, m["term"]) not in granted):
                granted.add((s, m["term"]))
                for c in COAL:
                    inject(c, s, signed("grant", c, m["term"], k, 0, hx).to_wire())
        net.run()
        if grab(2, "vote", term=1) and grab(3, "vote", term=1):
            break
    assert grab(2, "vote", term=1) and grab(3, "vote", term=1)

    def newterm(term, start_h, voter):
        v = grab(voter, "vote", term=term)
        cert = [
            {
                "seat": s,
                "seq": k,
                "hterm": 0,
                "h": start_h,
                "s": signed("vote", s, term, k, 0, start_h).sig,
            }
            for s in (0, 1)
        ]
        cert.append({"seat": voter, "seq": v["seq"], "hterm": v["hterm"], "h": v["h"], "s": v["s"]})
        return {**signed("newterm", 1, term, k, 0, start_h).to_wire(), "votes": cert}

    own = {2: newterm(1, hy, 2), 3: newterm(1, hx, 3)}
    nt1 = {2: newterm(1, hx, 2), 3: newterm(1, hy, 3)}
    for s in (2, 3):
        inject(1, s, own[s] if own_first else nt1[s])
    net.run()
    if own_first:
        for s in (2, 3):
            net.apply(s, net.machines[s].peer_connected(1, net.now))
        net.run()
    m2, m3 = (net.machines[2], net.machines[3])
    assert m2.term == 1 and m3.term == 1 and (m2.hashes[k] == hy) and (m3.hashes[k] == hx)
    if own_first:
        ack[2, 1] = grab(2, "ack", seq=k, term=1)
        ack[3, 1] = grab(3, "ack", seq=k, term=1)
    for s in (2, 3):
        net.kill(s)
    for s in (2, 3):
        net.restart(s)
    net.run()
    m2, m3 = (net.machines[2], net.machines[3])
    if not own_first:
        ack[2, 1] = grab(2, "ack", seq=k, term=1)
        ack[3, 1] = grab(3, "ack", seq=k, term=1)
        if ack[2, 1] is None or ack[3, 1] is None:
            return {2: None, 3: None}
    answered = set()

    def answer_fetches():
        for s, _d, m in list(captured):
            if (
                s in (2, 3)
                and m["k"] == "fetch"
                and ((s, m["from"], len(captured)) not in answered)
            ):
                answered.add((s, m["from"], len(captured)))
                want = net.machines[s].term_start_hash
                if want not in branch:
                    continue
                for seq in range(m["from"], k + 1):
                    e = branch[want] if seq == k else prefix[seq - 1]
                    inject(1, s, {"k": "entry", "e": e.to_wire()})
        net.run()

    for s in (2, 3):
        inject(1, s, nt1[s])
    net.run()
    answer_fetches()
    answer_fetches()
    m2, m3 = (net.machines[2], net.machines[3])
    for dst, other, h in ((2, 3, hx), (3, 2, hy)):
        for f in (0, 1):
            inject(0, dst, {"k": "acks", "of": [{"seat": other, **fields(ack[other, f])}]})
        for c in COAL:
            for f in (0, 1):
                inject(c, dst, signed("ack", c, f, k, 0, h).to_wire())
    net.run()
    net.advance(0.2)
    m2, m3 = (net.machines[2], net.machines[3])
    return {m.me: m.hashes[k] if m.final >= k else None for m in (m2, m3)}
