"""The exit codes of the nodealer commands (beside 0 and what verify reports)."""

from __future__ import annotations

EXIT_PROBLEM = 2
EXIT_INTERRUPTED = 130
EXIT_PIPE = 141
"""The reader of our output went away (128 + SIGPIPE, as a shell reports it)."""
