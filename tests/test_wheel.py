"""A guest's install: the wheel, built from this checkout, installed in a
fresh virtual environment, runs a game, verifies a log and opens the
rulebooks (F1) from its own package data, never from the checkout.

The venv sees this environment's site-packages (``--system-site-packages``)
only so that the dependencies need no download; nodealer itself comes from
the wheel, and every command runs from an empty folder with no PYTHONPATH,
and checks where it imported the package from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VECTOR = ROOT / "tests" / "vectors" / "bluff-2-proven.log"

pytestmark = pytest.mark.slow


def _setuptools_builds_wheels() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (77, 0)  # pyproject's build-system minimum


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the venv's python, the wheel it installed)."""
    if not _setuptools_builds_wheels():
        pytest.skip("needs setuptools>=77 (the test extra) to build the wheel offline")
    base = tmp_path_factory.mktemp("wheel")
    # built from a copy: setuptools writes build/ and egg-info beside the sources
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", ".*cache", ".hypothesis", ".venv", "build", "dist",
        "*.egg-info", "tests"))  # fmt: skip
    dist = base / "dist"
    env = _clean_env()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(dist), str(source)],
        check=True, capture_output=True, env=env, cwd=base, timeout=300,
    )  # fmt: skip
    (wheel,) = dist.glob("nodealer-*.whl")
    home = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(home)],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--force-reinstall",
         str(wheel)],
        check=True, capture_output=True, env=env, cwd=base, timeout=300,
    )  # fmt: skip
    return python, wheel


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _script(python: Path, name: str) -> Path:
    scripts = python.parent
    return scripts / (f"{name}.exe" if os.name == "nt" else name)


def _run(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = _clean_env()
    env["NODEALER_HOME"] = str(home)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_holds_the_rulebooks_and_the_styles(venv: tuple[Path, Path]) -> None:
    _, wheel = venv
    names = set(zipfile.ZipFile(wheel).namelist())
    for lang in ("en", "zh"):
        for game in ("bluff", "bomb", "mao"):
            assert f"rules/{lang}/{game}.md" in names
    assert "tui/app.tcss" in names
    assert not any(name.startswith("tests/") for name in names)


def test_the_installed_package_comes_from_the_venv(venv: tuple[Path, Path], tmp_path: Path) -> None:
    python, _ = venv
    code = "import rules, tui, p2p, table; print(tui.__file__); print(rules.__file__)"
    done = _run([str(python), "-c", code], tmp_path, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        path = Path(line).resolve()
        assert path.is_relative_to(python.parent.parent.resolve()), line
        assert not path.is_relative_to(ROOT), line


def test_demo_and_verify_from_the_wheel(venv: tuple[Path, Path], tmp_path: Path) -> None:
    python, _ = venv
    nodealer = str(_script(python, "nodealer"))
    demo = _run([nodealer, "demo", "bluff", "--quiet"], tmp_path, tmp_path / "home")
    assert demo.returncode == 0, demo.stderr
    assert "audit: ok" in demo.stdout
    verify = _run([nodealer, "verify", str(VECTOR)], tmp_path, tmp_path / "home")
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.splitlines()[-1].startswith("clean: "), verify.stdout


HELP = textwrap.dedent(
    """
    import asyncio, sys
    from importlib.resources import files
    from textual.app import App
    from textual.widgets import Markdown
    from tui.screens.common import SPEAKING, HelpScreen, show_help, switch_language

    class Help(App):
        CSS_PATH = str(files("tui") / "app.tcss")
        BINDINGS = [*SPEAKING]
        lang = "en"
        def action_rules(self):
            show_help(self, sys.argv[1])
        def action_language(self):
            switch_language(self)

    async def main():
        app = Help()
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in ("en", "zh"):
                await pilot.press("f1")
                await pilot.pause()
                assert isinstance(app.screen, HelpScreen), app.screen
                print(app.lang, app.screen.query(Markdown).first().source[:200].replace("\\n", " "))
                await pilot.press("escape")
                await pilot.pause()
                await pilot.press("f2")
                await pilot.pause()

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("game", ["bluff", "bomb", "mao"])
def test_f1_opens_the_rulebook_from_the_wheel(
    venv: tuple[Path, Path], tmp_path: Path, game: str
) -> None:
    python, _ = venv
    done = _run([str(python), "-c", HELP, game], tmp_path, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    shown = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line[:3] in
                 ("en ", "zh "))  # fmt: skip
    assert set(shown) == {"en", "zh"}, done.stdout
    for lang, text in shown.items():
        assert "rules not found" not in text and "找不到规则" not in text
        expected = (ROOT / "rules" / lang / f"{game}.md").read_text(encoding="utf-8")
        assert text == expected[:200].replace("\n", " ")
