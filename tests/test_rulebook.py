"""The rulebook in ``rules/`` defines every rule id, and every id the code cites.

GAMES.md (the checklist the ids come from) lives outside the repository, so the
id ranges are written down here: Bluff B1–B13, the Bomb game K1–K25, Mao M1–M40,
no letter suffixes. A citation is a standalone token such as ``B5`` or ``K12``
in a comment or a string (docstrings and error messages included) of a Python
file; identifiers and numbers in code are not citations.
"""

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
LANGUAGES = ("en", "zh")
# game file -> (id prefix, number of rules)
GAMES = {"bluff": ("B", 13), "bomb": ("K", 25), "mao": ("M", 40)}
PREFIX_GAME = {prefix: game for game, (prefix, _) in GAMES.items()}
CODE_DIRS = ("engines", "p2p", "mental_poker", "tests", "bench", "tui")

ENTRY = re.compile(r"^- \*\*([A-Z]\d+[a-z]?)\*\* \S")
# A rule id as a standalone token: not glued to letters, digits or "_" on either
# side (so "0xB5", "KS", "MiB", "#B58900" or "K12345" never match).
CITATION = re.compile(r"(?<![0-9A-Za-z_])([BKM])([0-9]{1,3})(?![0-9A-Za-z_])")
TEXT_TOKENS = {tokenize.COMMENT, tokenize.STRING}
if hasattr(tokenize, "FSTRING_MIDDLE"):  # Python 3.12+: f-strings are split up
    TEXT_TOKENS.add(tokenize.FSTRING_MIDDLE)


def expected_ids(game: str) -> list[str]:
    prefix, count = GAMES[game]
    return [f"{prefix}{n}" for n in range(1, count + 1)]


def rulebook_ids(language: str, game: str) -> list[str]:
    """The ids of a rulebook file's entries, in file order."""
    text = (RULES / language / f"{game}.md").read_text(encoding="utf-8")
    return [m.group(1) for line in text.splitlines() if (m := ENTRY.match(line))]


def python_files() -> list[Path]:
    files = []
    for name in CODE_DIRS:
        files += (p for p in (ROOT / name).rglob("*.py") if "__pycache__" not in p.parts)
    return sorted(files)


def citations(path: Path) -> list[tuple[str, int]]:
    """(id, line) for every rule id cited in the comments and strings of ``path``."""
    source = path.read_text(encoding="utf-8")
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in TEXT_TOKENS:
            for m in CITATION.finditer(token.string):
                line = token.start[0] + token.string.count("\n", 0, m.start())
                found.append((m.group(1) + str(int(m.group(2))), line))
    return found


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("game", sorted(GAMES))
def test_rulebook_defines_exactly_the_ids_in_order(language: str, game: str) -> None:
    path = RULES / language / f"{game}.md"
    assert path.is_file(), f"missing rulebook file {path.relative_to(ROOT)}"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# "), f"{path.name}: the first line must be the title"
    malformed = [ln for ln in lines if ln.startswith("- **") and not ENTRY.match(ln)]
    assert not malformed, f"{path.relative_to(ROOT)}: malformed entries {malformed}"
    assert rulebook_ids(language, game) == expected_ids(game)


def test_readme_links_every_rulebook_file() -> None:
    readme = (RULES / "README.md").read_text(encoding="utf-8")
    for language in LANGUAGES:
        for game in GAMES:
            assert f"({language}/{game}.md)" in readme
    for game in GAMES:
        assert f"engines/{game}.py" in readme


def test_citation_pattern_skips_look_alikes() -> None:
    text = "B5, K12 A, M9/M10 (K18–K24) but not KS, MiB, 0xB5, #B58900, B5a, K_1, V1"
    assert [m.group(1) + m.group(2) for m in CITATION.finditer(text)] == [
        "B5",
        "K12",
        "M9",
        "M10",
        "K18",
        "K24",
    ]


def test_every_cited_rule_id_has_an_english_entry() -> None:
    defined = {i for game in GAMES for i in rulebook_ids("en", game)}
    cited: dict[str, list[str]] = {}
    for path in python_files():
        for rule_id, line in citations(path):
            cited.setdefault(rule_id, []).append(f"{path.relative_to(ROOT)}:{line}")
    # the scan really sees the code's citations (all three games)
    assert {rule_id[0] for rule_id in cited} == set(PREFIX_GAME)
    assert len(cited) > 50
    unresolved = {i: where for i, where in sorted(cited.items()) if i not in defined}
    assert not unresolved, f"rule ids cited but not in rules/en: {unresolved}"
