"""The house rules on imports: tui -> table -> p2p; table -> engines,
mental_poker; p2p imports none of ours; the two bottom layers never import
each other or anything above them; table/ imports no particular game."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "mental_poker": set(),
    "engines": set(),
    "p2p": set(),
    "table": {"p2p", "engines", "mental_poker"},
    "tui": {"table", "p2p", "engines", "mental_poker", "rules"},
    "rules": set(),  # the rulebooks as package data
}
GAME_MODULES = {"bluff", "bomb", "mao", "mao_events", "mao_rules", "mao_state", "phrases", "bots"}
FORBIDDEN_IN_PURE = {"trio", "socket", "asyncio", "time", "random", "os", "zeroconf"}


def _modules(path: Path) -> set[str]:
    """Every module ``path`` imports, dotted, absolute imports only."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _imports(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _modules(path)}


def test_imports_only_point_down() -> None:
    for package, allowed in ALLOWED.items():
        for path in (ROOT / package).rglob("*.py"):
            project_imports = _imports(path) & set(ALLOWED)
            bad = project_imports - allowed - {package}
            assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)} (layering)"


def test_the_table_knows_no_particular_game() -> None:
    # "a fourth game is one file": the table machine, the replay, the
    # session and the local table reach games only through engines.core
    for path in (ROOT / "table").rglob("*.py"):
        for name in _modules(path):
            parts = name.split(".")
            if parts[0] == "engines":
                assert (len(parts) > 1 and parts[1] not in GAME_MODULES) or parts[1:] == ["bots"], (
                    f"{path.relative_to(ROOT)} imports {name}"
                )


def test_engines_are_pure() -> None:
    # engines: no I/O, no clock, no randomness (bots may use a seeded
    # random.Random, so engines/bots is checked separately for os/time/trio).
    for path in (ROOT / "engines").rglob("*.py"):
        found = _imports(path) & FORBIDDEN_IN_PURE
        if "bots" in path.parts or path.stem.startswith("bot"):
            found -= {"random"}
        assert not found, f"{path.relative_to(ROOT)} imports {sorted(found)}"


def test_deal_layers_never_use_random() -> None:
    for package in ("mental_poker", "p2p", "table"):
        for path in (ROOT / package).rglob("*.py"):
            assert "random" not in _imports(path), f"{path.relative_to(ROOT)} imports random"


def test_cli_help_runs() -> None:
    from tui.cli import main

    assert main([]) == 0
