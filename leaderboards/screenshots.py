"""Screenshots of the leaderboard site for the record: ``leaderboards/site/screenshots/``.

``python -m gymforge.leaderboards.screenshots [--root DIR]`` opens the rendered site in headless
Chromium and saves the landing page (``page.png``), then each board's page
(``board-<suite>-<Task>.png``), as PNG files.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.browser import console_errors, open_browser, page_url
from gymforge.leaderboards.render import SITE_DIR
from gymforge.leaderboards.site import BOARDS_DIR, INDEX

WIDTH = 1400
MAX_HEIGHT = 16000


def _open(driver: Any, site: Path, page: str) -> None:
    """Load ``page``, fail on console errors, and size the window to the whole page."""
    driver.set_window_size(WIDTH, 1000)
    driver.get(page_url(site, page))
    errors = console_errors(driver)
    if errors:
        raise RuntimeError(f"{page} logged errors: {errors}")
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(WIDTH, min(int(height) + 100, MAX_HEIGHT))


def take_screenshots(site: Path, out: Path) -> list[Path]:
    """Save ``page.png`` (the landing page) and ``board-<suite>-<Task>.png`` per board page into
    ``out``; raise on console errors."""
    out.mkdir(parents=True, exist_ok=True)
    driver = open_browser()
    written = []
    try:
        _open(driver, site, INDEX)
        landing = out / "page.png"
        driver.save_screenshot(str(landing))
        written.append(landing)
        for board in sorted((Path(site) / BOARDS_DIR).glob("*.html")):
            _open(driver, site, f"{BOARDS_DIR}/{board.name}")
            path = out / f"board-{board.stem}.png"
            driver.save_screenshot(str(path))
            written.append(path)
    finally:
        driver.quit()
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    site = args.root / SITE_DIR
    written = take_screenshots(site, site / "screenshots")
    for path in written:
        print(f"wrote {path}")
    for stale in sorted(set((site / "screenshots").glob("board-*.png")) - set(written)):
        stale.unlink()  # a board that is gone (or renamed) keeps no picture
        print(f"removed {stale}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
