"""No import circle inside a package, not even between two of its files
(issue 27: each game module imported its own bot back for
``sensible_bots``; now a game finds its bots through the registry,
``engines.core.bots_of``). Every import counts, a function's own too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (anywhere in it)."""
    files = {_module_name(p): p for p in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {m for m in found if m in files and m != name}
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as a path of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_the_circle_finder_finds_one() -> None:
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", ["engines", "p2p"])
def test_no_import_circle_in(package: str) -> None:
    assert _circle(_graph(package)) is None


def test_games_never_import_their_bots() -> None:
    graph = _graph("engines")
    for game in ("engines.bluff", "engines.bomb", "engines.mao"):
        assert not {m for m in graph[game] if m.startswith("engines.bots")}, game


def test_a_game_finds_its_bots_through_the_registry() -> None:
    from engines.core import bots_of, game

    for name in ("bluff", "bomb", "mao"):
        bots = game(name).sensible_bots(3, 7, lambda n: bytes(n))
        assert len(bots) == 3
        assert bots_of(name).__module__ == f"engines.bots.{name}"
    with pytest.raises(KeyError):
        bots_of("no_such_game")
