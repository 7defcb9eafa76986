"""The documentation site: generated pages current, a strict MkDocs build, and three pages in a
browser.

``mkdocs build --strict`` fails on any warning, so a broken link, a missing anchor or image, or
an API page whose module cannot be collected fails here. The browser test opens the built home
page, a family page and an env page in headless Chromium (served over HTTP, as a reader gets
them) and checks that each has its title, loads its images and logs no console error.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymforge.docs import (
    IMAGES,
    expected_pages,
    render_frame_png,
    renders_frames,
    site_pages,
)
from gymforge.registry import all_specs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MAX_IMAGE_BYTES = 150_000
FAMILY_PAGES = {
    "lineflow": "lineflow",
    "metabbo": "metabbo",
    "cmab": "cmab",
    "minmax": "minmax",
    "confounders": "confounders",
    "probe": "probe",
}
#: (page, words its <title> holds) of the pages the browser opens
BROWSER_PAGES = [
    ("index.html", "gymforge"),
    ("families/lineflow.html", "LineFlow"),
    ("envs/LineFlow-WaitingTime-v0.html", "LineFlow-WaitingTime-v0"),
]


def test_generated_site_pages_are_up_to_date() -> None:
    specs = list(all_specs())
    for name, content in site_pages(specs, expected_pages()).items():
        path = DOCS / name
        assert path.exists(), f"{path} missing: run `make docs`"
        assert path.read_text(encoding="utf-8") == content, f"{path} is stale: run `make docs`"


def test_every_rendering_id_has_a_small_image() -> None:
    rendering = [spec for spec in all_specs() if renders_frames(spec)]
    assert rendering, "no id renders rgb_array frames"
    for spec in rendering:
        path = DOCS / "envs" / IMAGES / f"{spec.id}.png"
        assert path.exists(), f"{path} missing: run `make docs`"
        assert path.stat().st_size < MAX_IMAGE_BYTES, f"{path} is {path.stat().st_size} bytes"


def test_a_frame_is_drawn_the_same_way_twice() -> None:
    spec = next(spec for spec in all_specs() if spec.id == "LineFlow-SimpleLine-v0")
    assert render_frame_png(spec) == render_frame_png(spec)


def test_each_family_page_links_every_id_of_its_family() -> None:
    for spec in all_specs():
        page = DOCS / "families" / f"{FAMILY_PAGES[spec.family]}.md"
        assert f"(../envs/{spec.id}.md)" in page.read_text(encoding="utf-8"), (
            f"{page.name} does not link {spec.id}"
        )


def test_the_home_page_example_runs() -> None:
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert code is not None, "the home page has no Python example"
    out = subprocess.run(
        [sys.executable, "-c", code.group(1)], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert "parts in 4000.0 time units" in out.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with ``mkdocs build --strict`` into a temporary folder."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (the dev extra has it)")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stdout}\n{build.stderr}"
    return out


def test_site_builds_strict_with_every_section(site: Path) -> None:
    for page in [
        "index.html",
        "versions.html",
        "families/lineflow.html",
        "envs/index.html",
        "envs/LineFlow-WaitingTime-v0.html",
        "api/registry.html",
        "guides/add_a_family.html",
        "results/index.html",
        "results/lineflow_controllers.html",
        "design/lineflow_engine.html",
    ]:
        assert (site / page).is_file(), f"{page} was not built"
    api = (site / "api" / "registry.html").read_text(encoding="utf-8")
    assert "all_specs" in api, "the API page shows no docstrings of gymforge.registry"


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on a free local port (its address)."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging each request to stderr."""

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_pages_open_in_chromium_with_title_and_images(served: str, tmp_path: Path) -> None:
    from gymforge.leaderboards.browser import chromium_paths, console_errors, open_browser

    if chromium_paths() is None or importlib.util.find_spec("selenium") is None:
        pytest.skip("chromium, chromedriver or selenium missing: no browser check")
    driver = open_browser(width=1280, height=900)
    try:
        for page, title in BROWSER_PAGES:
            driver.get(f"{served}/{page}")
            driver.execute_script("return document.fonts ? document.fonts.ready : null")
            images = driver.execute_script(
                "return Array.from(document.querySelectorAll('article img'))"
                ".map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])"
            )
            errors = console_errors(driver)
            assert not errors, f"{page} logged errors: {errors}"
            assert title in driver.title, f"{page}: title {driver.title!r} lacks {title!r}"
            h1 = driver.execute_script("return document.querySelector('article h1').textContent")
            assert title in h1, f"{page}: heading {h1!r} lacks {title!r}"
            assert all(complete and width > 0 for _, complete, width in images), (page, images)
            if page != "index.html":
                assert images, f"{page} shows no image"
            shot = tmp_path / f"{page.replace('/', '-')}.png"
            assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 0
    finally:
        driver.quit()
