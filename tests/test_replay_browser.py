"""The shared replay page in a real headless browser (Debian's chromium and
chromium-driver, driven by Selenium): a Bluff, a Bomb and a Mao game; the
arrow keys, the buttons, the slider and ``#turn=N`` show the right move with
the right hands; the page asks the network for nothing; a nickname made of
markup stays text. Skipped, saying why, where there is no such browser
(``.ci/run`` installs it)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.replay_games import saved_game
from tests.test_replay_page import EVIL, expand
from tui.html_replay import page_data, page_html
from tui.replay import replay_log

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")

try:
    from selenium import webdriver
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - the skip says so
    webdriver = None

pytestmark = [
    pytest.mark.skipif(webdriver is None, reason="no selenium (pip install selenium)"),
    pytest.mark.skipif(
        CHROMIUM is None or DRIVER is None,
        reason="no chromium and chromedriver (apt-get install chromium chromium-driver)",
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1100,900", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-default-apps"):  # fmt: skip
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    except Exception as exc:  # a browser that cannot start here (no display libraries…)
        pytest.skip(f"chromium does not start here: {str(exc).splitlines()[0][:200]}")
    driver.set_page_load_timeout(120)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[dict]]]:
    """game -> (its page, its steps as the page should show them)."""
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for game, lang in (("bluff", "en"), ("bomb", "en"), ("mao", "zh")):
        log = saved_game(game, folder)
        data = page_data(replay_log(log, lang), lang)
        page = folder / f"{game}.html"
        page.write_text(page_html(data), encoding="utf-8")
        out[game] = (page, expand(data["steps"]))
    return out


def _turn(driver: Any) -> int:
    return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-turn"))


def _wait_turn(driver: Any, n: int) -> None:
    WebDriverWait(driver, 20).until(lambda d: _turn(d) == n)


def _shown(driver: Any) -> dict[str, Any]:
    """What the page shows now: the move line, every seat's hand, the rows."""
    hands = [
        [c.text if "hidden" not in (c.get_attribute("class") or "") else None
         for c in seat.find_elements(By.CSS_SELECTOR, ".hand .card")]
        for seat in driver.find_elements(By.CSS_SELECTOR, "#seats .seat")
    ]  # fmt: skip
    rows = [r.find_element(By.CSS_SELECTOR, ".label").text
            for r in driver.find_elements(By.CSS_SELECTOR, "#rows .row")]  # fmt: skip
    return {"now": driver.find_element(By.ID, "now").text, "hands": hands, "labels": rows,
            "hash": driver.execute_script("return location.hash")}  # fmt: skip


def _check(driver: Any, steps: list[dict], n: int) -> None:
    _wait_turn(driver, n)
    step = steps[n - 1]
    shown = _shown(driver)
    assert shown["now"] == f"{n}  {step['text']}".strip()
    assert shown["hands"] == step["hands"]
    assert shown["labels"] == [row[0] for row in step["rows"]]
    assert shown["hash"] == f"#turn={n}" or (n == 1 and shown["hash"] == "")


def _requests(driver: Any) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@pytest.mark.slow
@pytest.mark.parametrize("game", ["bluff", "bomb", "mao"])
def test_stepping_the_slider_and_a_link_to_a_move(
    browser: Any, pages: dict[str, tuple[Path, list[dict]]], game: str
) -> None:
    page, steps = pages[game]
    url = page.as_uri()
    assert len(steps) >= 10
    _requests(browser)  # forget earlier pages' requests
    browser.get(url)
    _check(browser, steps, 1)
    body = browser.find_element(By.TAG_NAME, "body")
    for _ in range(3):
        body.send_keys(Keys.ARROW_RIGHT)
    _check(browser, steps, 4)
    body.send_keys(Keys.ARROW_LEFT)
    _check(browser, steps, 3)
    browser.find_element(By.ID, "next").click()
    _check(browser, steps, 4)
    browser.find_element(By.ID, "back").click()
    browser.find_element(By.ID, "back").click()
    _check(browser, steps, 2)
    browser.find_element(By.ID, "last").click()
    _check(browser, steps, len(steps))
    # the slider, moved with its own keys (the browser's range input)
    slider = browser.find_element(By.ID, "slider")
    slider.send_keys(Keys.HOME)
    _check(browser, steps, 1)
    for _ in range(5):
        slider.send_keys(Keys.ARROW_RIGHT)
    _check(browser, steps, 6)
    # and dragged: a click two thirds along it lands near two thirds of the game
    width = slider.size["width"]
    webdriver.ActionChains(browser).move_to_element_with_offset(slider, width // 6, 0).click()\
        .perform()  # fmt: skip
    near = _turn(browser)
    assert abs(near - 2 * len(steps) / 3) <= max(3, len(steps) / 10)
    _check(browser, steps, near)
    # a link to a moment, opened fresh, and the address changed in place
    middle = len(steps) // 2
    browser.get("about:blank")
    browser.get(f"{url}#turn={middle}")
    _check(browser, steps, middle)
    browser.execute_script("location.hash = '#turn=7'")
    _check(browser, steps, 7)
    # nothing but the page itself was asked for, and nothing was refused
    asked = [u for u in _requests(browser) if u != "about:blank"]
    assert asked and all(u.split("#")[0] == url for u in asked), asked
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


@pytest.mark.slow
def test_a_nickname_of_markup_stays_text(browser: Any, tmp_path: Path) -> None:
    log = saved_game("bomb", tmp_path)
    data = page_data(replay_log(log), "en", names=[EVIL, "bob", "carol"])
    data["steps"][0]["text"] = EVIL
    page = tmp_path / "evil.html"
    page.write_text(page_html(data), encoding="utf-8")
    browser.get(page.as_uri())
    _wait_turn(browser, 1)
    try:
        alert = browser.switch_to.alert.text
    except NoAlertPresentException:
        alert = None
    assert alert is None
    first = browser.find_element(By.CSS_SELECTOR, "#seats .seat .who").text
    assert EVIL in first
    assert browser.find_element(By.ID, "now").text == f"1  {EVIL}"
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 2


_COLOURS = """
const out = [];
const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
for (const e of document.querySelectorAll("body *")) {
  if (![...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
  let b = e;
  while (b && rgb(getComputedStyle(b).backgroundColor)[3] === 0) b = b.parentElement;
  const bg = b ? getComputedStyle(b).backgroundColor : "rgb(255, 255, 255)";
  out.push([e.tagName + "." + e.className, getComputedStyle(e).color, bg]);
}
return out;
"""


def _luminance(colour: str) -> float:
    r, g, b = (int(float(c)) / 255 for c in re.findall(r"[\d.]+", colour)[:3])
    return sum(w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
               for w, c in zip((0.2126, 0.7152, 0.0722), (r, g, b), strict=True))  # fmt: skip


@pytest.mark.slow
def test_every_text_has_a_contrast_of_at_least_4_5(
    browser: Any, pages: dict[str, tuple[Path, list[dict]]]
) -> None:
    page, steps = pages["bluff"]
    browser.get(f"{page.as_uri()}#turn={len(steps) // 2}")
    _wait_turn(browser, len(steps) // 2)
    found = browser.execute_script(_COLOURS)
    kinds = {what for what, _, _ in found}
    assert {"SPAN.card red", "SPAN.card black", "HEADER.", "LI.at", "BUTTON."} <= kinds
    for what, fg, bg in found:
        high, low = sorted((_luminance(fg), _luminance(bg)), reverse=True)
        assert (high + 0.05) / (low + 0.05) >= 4.5, (what, fg, bg)
