"""Pure cryptography for a dealerless card table: commutative cipher, deck
encoding, shuffle/lock/deal/reveal and their zero-knowledge proofs. No I/O.

Modules, bottom up (the wire format and every equation: protocol.md §1):

* :mod:`mental_poker.group` — the prime-order group of edwards25519 through
  libsodium: validated points, canonical scalars, hash-to-curve, the worker
  threads used by heavy loops.
* :mod:`mental_poker.context` — the context every transcript binds.
* :mod:`mental_poker.deck` — card index -> deck point (hash-to-curve only).
* :mod:`mental_poker.proofs` — shuffle, lock, handover and identity (OR) proofs.
* :mod:`mental_poker.messages` — a deal's setup and messages, their codec.
* :mod:`mental_poker.seat` — one seat's secrets and the messages it makes.
* :mod:`mental_poker.deal` — the public tracker of one deal: checks every
  message, tells who can read what, audits, names cheaters.
"""
