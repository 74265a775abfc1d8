"""The audit page in a real browser (headless Chromium, Selenium, the real server on
127.0.0.1): sign in through the form, filter, open a rejection with the keyboard, mark a
verdict, export; keyboard reach, visible focus and text contrast; screenshots kept.

Skipped where Chromium or chromedriver is missing, unless MEMSTORE_REQUIRE_BROWSER is
set (``make test`` sets it and installs them: ``make browser``). No sleeps: every wait
is an explicit wait on the page (or on the downloaded file)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from audit_data import NS, Audited, fill, open_store, page_settings
from browser import chromium, contrast, save_page, screenshot_dir
from rest_server import ALICE_KEY, serving
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from memstore.config import key_fingerprint
from memstore.rest import create_app
from memstore.rest.page.session import COOKIE

WAIT_S = 30
#: What the main text sits on, and controls: (CSS selector, why it matters).
TEXTS = [
    ("body", "body text"),
    ("h1", "headings"),
    ("label[for=text]", "form labels"),
    ("table.rejections td", "table cells"),
    ("a.open", "links"),
    ("caption", "captions"),
    ("button#apply", "buttons"),
]

# This module drives one browser through one session, in the order of its tests.


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Audited, Path]]:
    root = tmp_path_factory.mktemp("audit-browser")
    made = fill(root / "memdata", root / "files")
    with serving(create_app(page_settings(root / "memdata"))) as base:
        yield f"{base}/audit/{NS}", made, root / "memdata"


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[Any]:
    with chromium(downloads) as driver:
        yield driver


@pytest.fixture
def signed_in(browser: Any, site: tuple[str, Audited, Path]) -> Any:
    """The browser with a session: signed in through the form unless it already is, so
    each test runs alone or in any order."""
    browser.get(site[0])
    if browser.get_cookie(COOKIE) is None:
        heading(browser, "Sign in")
        shown(browser, "input#key").send_keys(ALICE_KEY, Keys.ENTER)
        heading(browser, "Rejections")
    return browser


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = screenshot_dir(tmp_path_factory.mktemp("screenshots"))
    print(f"\naudit page screenshots: {where}")
    return where


def wait(driver: Any) -> Any:

    return WebDriverWait(driver, WAIT_S)


def shown(driver: Any, css: str) -> Any:
    """The element ``css`` selects, once it is on the page."""

    return wait(driver).until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))


def heading(driver: Any, text: str) -> None:

    wait(driver).until(ec.text_to_be_present_in_element((By.TAG_NAME, "h1"), text))


def visit(driver: Any, url: str, title: str) -> None:
    """Open ``url`` and wait for its heading to say ``title``."""
    driver.get(url)
    heading(driver, title)


def rows(driver: Any) -> list[str]:

    links = driver.find_elements(By.CSS_SELECTOR, "a.open")
    return [str(a.get_attribute("href")).rsplit("/", 1)[-1] for a in links]


def test_signing_in_through_the_form(
    browser: Any, site: tuple[str, Audited, Path], shots: Path
) -> None:

    page, made, _ = site
    browser.get(page)
    browser.delete_all_cookies()  # signed out, whatever ran before
    visit(browser, page, "Sign in")
    save_page(browser, shots / "01-sign-in.png")
    key = shown(browser, "input#key")
    key.send_keys(ALICE_KEY, Keys.ENTER)
    heading(browser, "Rejections")
    assert sorted(rows(browser)) == sorted(r.id for r in made.rejections.values())
    cookie = browser.get_cookie(COOKIE)
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert ALICE_KEY not in cookie["value"]
    assert key_fingerprint(ALICE_KEY) in browser.page_source
    save_page(browser, shots / "02-rejections.png")


@pytest.mark.usefixtures("signed_in")
def test_filtering_the_list(browser: Any, site: tuple[str, Audited, Path], shots: Path) -> None:

    page, made, _ = site
    browser.get(page)
    shown(browser, "input[name=verdict][value=unsupported]").click()
    shown(browser, "input[name=verdict][value=insufficient_evidence]").click()
    shown(browser, "input#min_gap").send_keys("3")
    shown(browser, "button#apply").click()
    wait(browser).until(ec.url_contains("min_gap=3"))
    assert rows(browser) == [made.rejections["unsupported"].id]
    save_page(browser, shots / "03-filtered.png")


@pytest.mark.usefixtures("signed_in")
def test_the_keyboard_reaches_the_filters_and_opens_a_row_with_enter(
    browser: Any, site: tuple[str, Audited, Path], shots: Path
) -> None:

    page, made, _ = site
    visit(browser, page, "Rejections")
    reached: list[str] = []
    for _ in range(80):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        focused = browser.switch_to.active_element
        name = f"{focused.tag_name}#{focused.get_attribute('id')}.{focused.get_attribute('class')}"
        reached.append(name)
        outline = focused.value_of_css_property("outline-style")
        width = float(focused.value_of_css_property("outline-width").removesuffix("px"))
        assert outline != "none" and width >= 2, f"no visible focus on {name}"
        if focused.get_attribute("class") == "open":
            break
    assert any(r.startswith("input#since") for r in reached), reached
    assert any(r.startswith("button#apply") for r in reached), reached
    assert reached[-1].endswith(".open"), f"Tab never reached a row: {reached}"
    newest = made.rejections["unknown_citation"]
    assert browser.switch_to.active_element.text == newest.statement
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    heading(browser, "Rejected claim")
    assert newest.id in browser.current_url
    save_page(browser, shots / "04-keyboard-opened.png")


@pytest.mark.usefixtures("signed_in")
def test_marking_a_refusal_wrong(
    browser: Any, site: tuple[str, Audited, Path], shots: Path
) -> None:

    page, made, data = site
    refusal = made.rejections["insufficient"]
    visit(browser, f"{page}/rejections/{refusal.id}", "Rejected claim")
    assert shown(browser, "mark").text == "Alice is a data engineer"
    assert shown(browser, "#chain-status").text.startswith("Intact")
    save_page(browser, shots / "05-rejection.png")
    shown(browser, "textarea#note").send_keys("She is one: see her profile.")
    shown(browser, "button#wrong-refusal").click()
    wait(browser).until(
        ec.text_to_be_present_in_element((By.CSS_SELECTOR, "ul.labels"), "see her profile")
    )
    with open_store(data) as store:
        [label] = store.labels(target_id=refusal.id)
    assert label.labelled_by == key_fingerprint(ALICE_KEY)
    assert label.note == "She is one: see her profile."
    save_page(browser, shots / "06-labelled.png")


@pytest.mark.usefixtures("signed_in")
def test_exporting_what_is_on_screen(
    browser: Any, site: tuple[str, Audited, Path], downloads: Path
) -> None:
    page, made, data = site
    refusal = made.rejections["insufficient"]
    with open_store(data) as store:  # this test's own label: tests run in any order
        store.add_label("false_rejection", refusal.id, by="exporter", note="Exported, too.")
    visit(browser, f"{page}?verdict=insufficient_evidence", "Rejections")
    shown(browser, "a#export-csv").click()
    saved = downloads / "rejections-user_alice.csv"
    wait(browser).until(lambda _: saved.exists() and saved.stat().st_size > 0)
    with saved.open(newline="", encoding="utf-8") as f:
        [row] = list(csv.DictReader(f))
    assert row["id"] == refusal.id
    assert "Exported, too." in row["labels"]


@pytest.mark.usefixtures("signed_in")
def test_checking_the_whole_chain(browser: Any, site: tuple[str, Audited, Path]) -> None:
    page, made, _ = site
    visit(browser, f"{page}/rejections/{made.rejections['unsupported'].id}", "Rejected claim")
    shown(browser, "a#whole-chain").click()
    heading(browser, "Audit chain")
    assert shown(browser, "#chain-status").text.startswith("Intact:")


@pytest.mark.usefixtures("signed_in")
def test_moved_facts_page(browser: Any, site: tuple[str, Audited, Path], shots: Path) -> None:
    page, made, _ = site
    visit(browser, f"{page}/facts", "Facts re-verification moved")
    assert shown(browser, f"#fact-{made.stale.id} h2").text == made.stale.statement
    save_page(browser, shots / "07-facts.png")


@pytest.mark.usefixtures("signed_in")
def test_text_contrast_meets_wcag_aa(browser: Any, site: tuple[str, Audited, Path]) -> None:

    page, _, _ = site
    visit(browser, page, "Rejections")
    backdrop = """
        let el = arguments[0];
        while (el) {
            const bg = getComputedStyle(el).backgroundColor;
            if (!/rgba\\(.*,\\s*0\\)$/.test(bg) && bg !== 'transparent') return bg;
            el = el.parentElement;
        }
        return 'rgb(255, 255, 255)';
    """
    for css, what in TEXTS:
        element = browser.find_element(By.CSS_SELECTOR, css)
        color = element.value_of_css_property("color")
        ratio = contrast(color, browser.execute_script(backdrop, element))
        assert ratio >= 4.5, f"{what} ({css}): contrast {ratio:.2f} is under 4.5:1"
