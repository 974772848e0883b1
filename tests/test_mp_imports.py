"""mental_poker/ has no import circle, not even between two of its files
(imports only under TYPE_CHECKING count too), and the deal's modules reach
a group only through the interface (``ctx.group``), never through the
module functions of one particular group."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mental_poker"
GROUP_FREE = ("batch", "deal", "keys", "messages", "proofs", "seat")
"""Modules that work in whatever group their context names."""


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    deps.add(node.module.split(".")[0])
                elif node.level == 0 and (node.module or "").startswith("mental_poker."):
                    deps.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                deps.update(
                    a.name.split(".")[1] for a in node.names if a.name.startswith("mental_poker.")
                )
        graph[path.stem] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle_in_mental_poker() -> None:
    graph = _graph()
    assert {"deal", "seat", "keys", "group", "group_api", "secp256k1"} <= set(graph)
    assert "seat" not in graph["deal"]
    assert _cycle(graph) is None, f"import circle: {' -> '.join(_cycle(graph) or [])}"


def test_the_deal_uses_no_particular_group_s_operations() -> None:
    for stem in GROUP_FREE:
        tree = ast.parse((PACKAGE / f"{stem}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("group", "secp256k1"):
                names = {a.name for a in node.names}
                # the default group (today's tables) and its base point, nothing else
                assert names <= {"ED25519", "G"}, f"{stem}.py imports {sorted(names)}"
