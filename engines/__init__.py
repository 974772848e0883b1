"""Pure, deterministic game engines (Mao, Bluff, the Bomb game) and bots.
No I/O, no clock, no randomness, no crypto."""
