"""A headless Chromium (Debian's ``chromium`` + ``chromium-driver``) driven by selenium.

Used by the site's browser test and by ``python -m gymforge.leaderboards.screenshots``; the
browser is found on ``PATH`` (``chromium`` or ``chromium-browser``, and ``chromedriver``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

INSTALL_HINT = "apt-get install -y chromium chromium-driver (Debian), then pip install selenium"


def chromium_paths() -> tuple[str, str] | None:
    """``(browser, driver)`` executables, or ``None`` when either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        return None
    return browser, driver


def open_browser(width: int = 1400, height: int = 1000) -> Any:
    """A headless Chromium WebDriver that keeps the page's console log."""
    paths = chromium_paths()
    if paths is None:
        raise RuntimeError(f"chromium or chromedriver not found; {INSTALL_HINT}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for flag in (
        "--headless=new",
        "--no-sandbox",  # CI containers run as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=paths[1]), options=options)


def console_errors(driver: Any) -> list[str]:
    """The page's console messages of level SEVERE (errors, failed loads)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def page_url(site: Path, page: str = "index.html") -> str:
    """The ``file://`` address of ``page`` (relative to the site folder ``site``)."""
    return (Path(site).resolve() / page).as_uri()
