"""The house rules on imports: tui -> p2p -> engines, mental_poker; the two
bottom layers never import each other or anything above them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "mental_poker": set(),
    "engines": set(),
    "p2p": {"engines", "mental_poker"},
    "tui": {"p2p", "engines", "mental_poker"},
}
FORBIDDEN_IN_PURE = {"trio", "socket", "asyncio", "time", "random", "os", "zeroconf"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_imports_only_point_down() -> None:
    for package, allowed in ALLOWED.items():
        for path in (ROOT / package).rglob("*.py"):
            project_imports = _imports(path) & set(ALLOWED)
            bad = project_imports - allowed - {package}
            assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)} (layering)"


def test_engines_are_pure() -> None:
    # engines: no I/O, no clock, no randomness (bots may use a seeded
    # random.Random, so engines/bots is checked separately for os/time/trio).
    for path in (ROOT / "engines").rglob("*.py"):
        found = _imports(path) & FORBIDDEN_IN_PURE
        if "bots" in path.parts or path.stem.startswith("bot"):
            found -= {"random"}
        assert not found, f"{path.relative_to(ROOT)} imports {sorted(found)}"


def test_deal_layers_never_use_random() -> None:
    for package in ("mental_poker", "p2p"):
        for path in (ROOT / package).rglob("*.py"):
            assert "random" not in _imports(path), f"{path.relative_to(ROOT)} imports random"


def test_cli_help_runs() -> None:
    from p2p.cli import main

    assert main([]) == 0
