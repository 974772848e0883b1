"""Pure cryptography for a dealerless card table: commutative cipher, deck
encoding, shuffle/lock/deal/reveal and their zero-knowledge proofs. No I/O.

Modules, bottom up (the wire format and every equation: protocol.md §1, for
both card groups: secp256k1 for v3 tables, edwards25519 for v2 logs):

* :mod:`mental_poker.rand`, :mod:`mental_poker.parallel` — the test RNG and
  the permutation; the worker threads used by heavy loops.
* :mod:`mental_poker.group_api` — :class:`~mental_poker.group_api.Group`,
  what a deal needs of its group (validated points, canonical scalars,
  hash-to-curve, sums), and the op counter.
* :mod:`mental_poker.group` — edwards25519 through libsodium (``ED25519``,
  v2 logs), also as module functions.
* :mod:`mental_poker.secp256k1` — secp256k1 through coincurve (``SECP256K1``,
  v3 tables).
* :mod:`mental_poker.groups` — ``group_for(version)``: the group of a table
  of that protocol version.
* :mod:`mental_poker.context` — the context every transcript binds; it
  chooses the group.
* :mod:`mental_poker.deck` — card index -> deck point (hash-to-curve only).
* :mod:`mental_poker.proofs` — shuffle, lock, handover and identity (OR) proofs.
* :mod:`mental_poker.messages` — a deal's setup and messages, their codec.
* :mod:`mental_poker.keys` — one seat's secrets for one deal.
* :mod:`mental_poker.deal` — the public tracker of one deal: checks every
  message, tells who can read what, audits, names cheaters.
* :mod:`mental_poker.batch` — the proofs of a deal checked in one sweep.
* :mod:`mental_poker.seat` — the messages a seat makes from its secrets.
"""
