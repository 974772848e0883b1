"""trio networking that knows no game: identity keys, framing, the signed,
ordered, replicated log among a fixed set of keys and its store, discovery
(zeroconf). Someone could reuse it for another turn-based game."""
