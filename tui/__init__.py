"""Textual user interface (talks only to p2p's session API)."""
