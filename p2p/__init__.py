"""trio networking: identity, framing, signed ordered log, discovery, and the
table session that joins engines and mental_poker."""
