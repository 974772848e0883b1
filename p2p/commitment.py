"""Commitment by every seat (protocol v3, protocol.md §3.5 *Final entries*).

On a v3 table an entry is *final* at a peer when every seat of the table -
every seat not in the leavers the table layer named after an abandon - has
acknowledged (a signed ``ack``) a head at or past it on this peer's chain,
and the entry is also acknowledged the Raft way (a majority, counted by vote
floor: :attr:`p2p.log.LogMachine.committed`), which any honest failover
keeps. A session acts only on final entries, and a peer never cuts an entry
it holds final: since every seat signed that chain up to there, no
coalition of seats that leaves out one honest seat can make an honest seat
act on an entry that another honest seat does not hold at the same seq.

Pure functions over the acks a peer keeps; the log machine calls them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from p2p.envelope import Head


def reach(
    floors: Mapping[int, Head], hashes: Sequence[bytes], swap: tuple[int, int] | None = None
) -> int:
    """How far one seat's latest ack (highest vote floor, then seq) reaches
    on our chain (``hashes[k]`` is the hash of seq k, ``hashes[0]`` the
    genesis); 0 if it is on another chain. Only the latest counts: an older
    ack may show a chain that seat has cut since.

    ``swap`` (seq k, term t): we replaced our entries from seq k on while
    following term t. An ack of an earlier term then reaches at most k − 1:
    its author may have swapped too since, the other way (two branches of a
    proven equivocator, each peer given the other's by a lying sequencer of
    the next term: third review, A3) — it must say so again in term t."""
    if not floors:
        return 0
    ack = max(floors.values(), key=lambda a: (a.term, a.seq))
    head = len(hashes) - 1
    got = ack.seq if ack.seq <= head and hashes[ack.seq] == ack.hash else 0
    if swap is not None and ack.term < swap[1]:
        got = min(got, swap[0] - 1)
    return got


def merge_swaps(
    a: tuple[int, int] | None, b: tuple[int, int] | None
) -> tuple[int, int] | None:
    """Two cuts as one for :func:`reach`: from the lower seq, below the
    higher vote floor (the stricter of each)."""
    if a is None or b is None:
        return a or b
    return (min(a[0], b[0]), max(a[1], b[1]))


def acked_by_all(
    acks: Mapping[int, Mapping[int, Head]],
    hashes: Sequence[bytes],
    seats: Collection[int],
    swap: tuple[int, int] | None = None,
) -> int:
    """The highest seq that every seat of ``seats`` acknowledged on our chain
    (``swap``: as for :func:`reach`)."""
    return min(
        (reach(acks.get(seat, {}), hashes, swap) for seat in seats), default=len(hashes) - 1
    )
