"""Pure cryptography for a dealerless card table: commutative cipher, deck
encoding, shuffle/lock/deal/reveal and their zero-knowledge proofs. No I/O.

Modules, bottom up (the wire format and every equation: protocol.md §1):

* :mod:`mental_poker.group` — the prime-order group of edwards25519 through
  libsodium: validated points, canonical scalars, hash-to-curve, the worker
  threads used by heavy loops.
* :mod:`mental_poker.context` — the context every transcript binds.
* :mod:`mental_poker.deck` — card index -> deck point (hash-to-curve only).
* :mod:`mental_poker.proofs` — shuffle, strip and identity (OR) proofs.
* :mod:`mental_poker.deal` — one deal: messages, a seat's secrets, and the
  public tracker that checks every message and names cheaters.
"""
