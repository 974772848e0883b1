"""A table's variants as typed by a person (``--config KEY=VALUE``, the
host form's variants field): checked against the game's engine, kept as
the engine's config data. Pure; imported by the command line and the host
form alike (no screen, no table)."""

from __future__ import annotations

from typing import Any


def parse_config(engine: Any, pairs: list[str]) -> Any:
    """``--config KEY=VALUE`` pairs as the engine's config data (None: the
    defaults); values are JSON (true, 600, "text") or plain text."""
    import json

    from engines.core import EngineError, to_data

    if not pairs:
        return None
    data = to_data(engine.Config())
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or key not in data:
            known = ", ".join(sorted(data))
            raise ValueError(f"--config {pair!r}: expected KEY=VALUE with KEY one of {known}")
        try:
            data[key] = json.loads(text)
        except json.JSONDecodeError:
            data[key] = text
    try:
        return to_data(engine.decode_config(data))
    except (EngineError, ValueError, TypeError) as exc:
        raise ValueError(f"--config: {exc}") from None
