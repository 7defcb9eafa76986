"""The HTML site in a real headless Chromium: no console errors, every board, sortable columns."""

from __future__ import annotations

import pytest
from leaderboard_helpers import TASK, meta, small_root

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.browser import INSTALL_HINT, chromium_paths, console_errors, page_url
from gymforge.leaderboards.protocol import list_tasks
from gymforge.leaderboards.render import SITE_DIR, write_all
from gymforge.leaderboards.screenshots import take_screenshots
from gymforge.leaderboards.submission import list_submissions, submit

pytestmark = pytest.mark.skipif(
    chromium_paths() is None, reason=f"chromium/chromedriver not found ({INSTALL_HINT})"
)


@pytest.fixture(scope="module")
def browser():
    pytest.importorskip("selenium", reason="selenium not installed (pip install -e '.[dev]')")
    from gymforge.leaderboards.browser import open_browser

    driver = open_browser()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    root = small_root(tmp_path_factory.mktemp("site"))
    submit(root, TASK, "random", meta("Random"), submission_id="20260101-random")
    submit(root, TASK, "optimal", meta("Optimal"), submission_id="20260101-optimal")
    write_all(root)
    return root


def _column(driver, table_id: str, header: str) -> list[float]:
    from selenium.webdriver.common.by import By

    table = driver.find_element(By.ID, table_id)
    headers = [th.text.strip(" ▲▼") for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    index = headers.index(header)
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    return [
        float(r.find_elements(By.TAG_NAME, "td")[index].get_attribute("data-value")) for r in rows
    ]


def _click(driver, table_id: str, header: str) -> None:
    from selenium.webdriver.common.by import By

    table = driver.find_element(By.ID, table_id)
    for th in table.find_elements(By.CSS_SELECTOR, "thead th"):
        if th.text.strip(" ▲▼") == header:
            th.click()
            return
    raise AssertionError(f"no header {header!r}")


def test_leaderboards__committed_site_shows_every_board_without_errors(browser, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(page_url(DEFAULT_ROOT / SITE_DIR))
    assert console_errors(browser) == []
    sections = browser.find_elements(By.CSS_SELECTOR, "section.board-section")
    assert [s.get_attribute("data-task") for s in sections] == list_tasks(DEFAULT_ROOT)
    for section in sections:
        task = section.get_attribute("data-task")
        rows = section.find_elements(By.CSS_SELECTOR, "table.board tbody tr")
        assert len(rows) == len(list_submissions(DEFAULT_ROOT, task)), task
        image = section.find_element(By.CSS_SELECTOR, "img.plot")
        assert browser.execute_script("return arguments[0].naturalWidth", image) > 0, task
    # every committed board with two or more rows sorts by its mean column
    for section in sections:
        table_id = section.find_element(By.CSS_SELECTOR, "table.board").get_attribute("id")
        if len(_column(browser, table_id, "mean")) > 1:
            _click(browser, table_id, "mean")
            assert _column(browser, table_id, "mean") == sorted(_column(browser, table_id, "mean"))
    written = take_screenshots(DEFAULT_ROOT / SITE_DIR, tmp_path / "shots")
    assert written and all(p.stat().st_size > 1000 for p in written)


def test_leaderboards__clicking_a_header_reorders_the_rows(browser, small_site):
    from selenium.webdriver.common.by import By

    browser.get(page_url(small_site / SITE_DIR))
    assert console_errors(browser) == []
    table_id = "table-board-lineflow-ShortWaitingTime"
    ranks = _column(browser, table_id, "#")
    assert ranks == [1.0, 2.0]
    means = _column(browser, table_id, "mean")
    assert means[0] > means[1]  # rendered best first
    _click(browser, table_id, "mean")  # ascending
    assert _column(browser, table_id, "mean") == sorted(means)
    assert _column(browser, table_id, "#") == [2.0, 1.0]
    _click(browser, table_id, "mean")  # descending again
    assert _column(browser, table_id, "mean") == sorted(means, reverse=True)
    header = browser.find_element(By.CSS_SELECTOR, f"#{table_id} thead th[aria-sort]")
    assert header.get_attribute("aria-sort") == "descending"
    names = [
        r.find_elements(By.TAG_NAME, "td")[1].text
        for r in browser.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")
    ]
    _click(browser, table_id, "submission")  # text column, ascending
    assert [
        r.find_elements(By.TAG_NAME, "td")[1].text
        for r in browser.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")
    ] == sorted(names, key=str.lower)
