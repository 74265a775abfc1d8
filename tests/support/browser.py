"""A real browser for the page tests: headless Chromium from Debian's packages, driven by
Selenium through Debian's chromedriver (same version as the browser); where screenshots
go; and WCAG contrast from the colors a page computes."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

#: Set by ``make test``: a missing browser fails the browser tests instead of skipping them.
REQUIRE_ENV = "MEMSTORE_REQUIRE_BROWSER"
#: Where screenshots go (default: tests/artifacts/, which git ignores).
SHOTS_ENV = "MEMSTORE_SCREENSHOTS"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def find() -> tuple[str, str]:
    """The Chromium binary and chromedriver; skips (fails under MEMSTORE_REQUIRE_BROWSER)
    when either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser and driver:
        return browser, driver
    missing = "chromium" if not browser else "chromedriver"
    reason = f"{missing} is not installed (apt-get install chromium chromium-driver; make browser)"
    if os.environ.get(REQUIRE_ENV):
        pytest.fail(f"a browser is required ({REQUIRE_ENV}) but {reason}")
    pytest.skip(reason)


@contextmanager
def chromium(downloads: Path) -> Iterator[object]:
    """A headless Chromium (a Selenium driver) that saves downloads in ``downloads``."""
    browser, driver = find()
    options = Options()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",  # as root in a container
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000",
        "--force-device-scale-factor=1",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
    ):
        options.add_argument(argument)
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


def screenshot_dir(fallback: Path) -> Path:
    """Where this run keeps its screenshots: ``MEMSTORE_SCREENSHOTS``, else
    tests/artifacts/audit_page (``fallback`` where that cannot be written)."""
    where = Path(os.environ.get(SHOTS_ENV) or ARTIFACTS / "audit_page")
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:
        where = fallback
        where.mkdir(parents=True, exist_ok=True)
    return where


_RGB = re.compile(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)")


def rgb(css: str) -> tuple[float, float, float, float]:
    """A computed CSS color (``rgb(...)`` or ``rgba(...)``) as r, g, b (0-255) and alpha."""
    found = _RGB.fullmatch(css.strip())
    assert found, f"not a computed color: {css!r}"
    r, g, b, a = found.groups()
    return float(r), float(g), float(b), 1.0 if a is None else float(a)


def luminance(color: tuple[float, ...]) -> float:
    """WCAG 2 relative luminance of an sRGB color."""

    def channel(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in color[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(text: str, background: str) -> float:
    """WCAG 2 contrast ratio of two computed colors (1 to 21)."""
    light, dark = sorted((luminance(rgb(text)), luminance(rgb(background))), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def save_page(driver: Any, path: Path) -> None:
    """A screenshot of the whole page (the window grows to the page's height)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, max(int(height), 600))
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(path))
