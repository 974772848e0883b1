"""Pure cryptography for a dealerless card table: commutative cipher, deck
encoding, shuffle/lock/deal/reveal and their zero-knowledge proofs. No I/O."""
