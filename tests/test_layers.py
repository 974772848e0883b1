"""The house rules on imports: tui -> table -> p2p; table -> engines,
mental_poker; p2p imports none of ours; the two bottom layers never import
each other or anything above them; table/ imports no particular game."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "mental_poker": set(),
    "engines": set(),
    "p2p": set(),
    "table": {"p2p", "engines", "mental_poker"},
    "tui": {"table", "p2p", "engines", "mental_poker", "rules"},
    "rules": set(),  # the rulebooks as package data
}
GAME_MODULES = {
    "bluff", "bomb", "mao", "mao_events", "mao_rules", "mao_state", "phrases", "bots",
    "mao_flow", "mao_work", "mao_calls", "mao_verdicts",
}  # fmt: skip
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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_edges(path: Path, known: set[str]) -> set[str]:
    """The project modules ``path`` imports anywhere in it (function-level
    imports too: a circle through a deferred import is still a circle)."""
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in targets if name in known and name != here)
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports."""
    paths = {_module_name(p): p for p in (ROOT / package).rglob("*.py")}
    known = set(paths)
    return {name: _project_edges(path, known) for name, path in paths.items()}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_find_circle_finds_a_circle() -> None:
    # the checker itself: the circle issue 26 found (app -> home -> lan ->
    # table_app -> app) is found, and a tree is not a circle
    circle = {"app": {"home"}, "home": {"lan"}, "lan": {"table_app"}, "table_app": {"app"}}
    assert find_circle(circle) == ["app", "home", "lan", "table_app", "app"]
    assert find_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_sees_deferred_and_relative_imports() -> None:
    graph = import_graph("tui")
    assert "tui.screens.tables" in graph["tui.app"]  # a relative import at the top
    assert "tui.table_app" in graph["tui.lan"]  # one inside a function


@pytest.mark.parametrize("package", ["tui", "p2p"])
def test_no_import_circle(package: str) -> None:
    # "no import circles even between two files of one package" (COMMON.md).
    # engines, mental_poker and table still have one each (bluff <->
    # bots.bluff, deal <-> seat, cheats <-> sequencer_cheats): issue 26 is
    # about tui/; add them here once they are broken.
    circle = find_circle(import_graph(package))
    assert circle is None, " -> ".join(circle or [])
