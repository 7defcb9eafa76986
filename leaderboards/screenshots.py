"""Screenshots of the leaderboard site for the record: ``leaderboards/site/screenshots/``.

``python -m gymforge.leaderboards.screenshots [--root DIR]`` opens the rendered site in headless
Chromium and saves the whole page, then each board's section, as PNG files.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.browser import console_errors, open_browser, page_url
from gymforge.leaderboards.render import SITE_DIR


def take_screenshots(site: Path, out: Path) -> list[Path]:
    """Save ``page.png`` and ``<board>.png`` per section into ``out``; raise on console errors."""
    from selenium.webdriver.common.by import By

    out.mkdir(parents=True, exist_ok=True)
    driver = open_browser()
    written = []
    try:
        driver.get(page_url(site))
        errors = console_errors(driver)
        if errors:
            raise RuntimeError(f"the page logged errors: {errors}")
        height = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(1400, min(int(height) + 100, 16000))
        page = out / "page.png"
        driver.save_screenshot(str(page))
        written.append(page)
        for section in driver.find_elements(By.CSS_SELECTOR, "section.board-section"):
            path = out / f"{section.get_attribute('id')}.png"
            section.screenshot(str(path))
            written.append(path)
    finally:
        driver.quit()
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    site = args.root / SITE_DIR
    for path in take_screenshots(site, site / "screenshots"):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
