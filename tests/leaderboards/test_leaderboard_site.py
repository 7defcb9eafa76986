"""The HTML site in a real headless Chromium: the landing page lists every board and links to
its page; every board page loads without console errors, shows its plot and all its rows, and
sorts by a clicked column."""

from __future__ import annotations

import pytest
from leaderboard_helpers import TASK, meta, small_root

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.browser import INSTALL_HINT, chromium_paths, console_errors, page_url
from gymforge.leaderboards.protocol import list_tasks
from gymforge.leaderboards.render import SITE_DIR, write_all
from gymforge.leaderboards.screenshots import take_screenshots
from gymforge.leaderboards.site import board_page_name
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


def _check_board_page(browser, task: str) -> None:
    """The open page is ``task``'s board: no console errors, its plot loaded, all its rows."""
    from selenium.webdriver.common.by import By

    assert console_errors(browser) == [], task
    (section,) = browser.find_elements(By.CSS_SELECTOR, "section.board-section")
    assert section.get_attribute("data-task") == task
    rows = section.find_elements(By.CSS_SELECTOR, "table.board tbody tr")
    assert len(rows) == len(list_submissions(DEFAULT_ROOT, task)), task
    image = section.find_element(By.CSS_SELECTOR, "img.plot")
    assert browser.execute_script("return arguments[0].naturalWidth", image) > 0, task


def test_leaderboards__committed_landing_page_lists_every_board_and_links_to_it(browser):
    from selenium.webdriver.common.by import By

    browser.get(page_url(DEFAULT_ROOT / SITE_DIR))
    assert console_errors(browser) == []
    rows = browser.find_elements(By.CSS_SELECTOR, "table.summary tbody tr")
    tasks = list_tasks(DEFAULT_ROOT)
    assert [r.get_attribute("data-id") for r in rows] == tasks
    counts = _column(browser, "boards", "rows")
    assert counts == [float(len(list_submissions(DEFAULT_ROOT, t))) for t in tasks]
    # follow the link of the board with the most rows, and come back
    task = tasks[counts.index(max(counts))]
    browser.find_element(By.LINK_TEXT, task).click()
    assert browser.current_url == page_url(DEFAULT_ROOT / SITE_DIR, board_page_name(task))
    _check_board_page(browser, task)
    browser.find_element(By.CSS_SELECTOR, "a.back").click()
    assert browser.current_url == page_url(DEFAULT_ROOT / SITE_DIR)
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.summary tbody tr")) == len(tasks)


def test_leaderboards__committed_board_pages_show_plot_and_rows_and_sort(browser, tmp_path):
    from selenium.webdriver.common.by import By

    for task in list_tasks(DEFAULT_ROOT):
        browser.get(page_url(DEFAULT_ROOT / SITE_DIR, board_page_name(task)))
        _check_board_page(browser, task)
        tables = browser.find_elements(By.CSS_SELECTOR, "table.board")
        if tables and len(_column(browser, tables[0].get_attribute("id"), "mean")) > 1:
            table_id = tables[0].get_attribute("id")
            _click(browser, table_id, "mean")
            assert _column(browser, table_id, "mean") == sorted(_column(browser, table_id, "mean"))
    written = take_screenshots(DEFAULT_ROOT / SITE_DIR, tmp_path / "shots")
    assert len(written) == 1 + len(list_tasks(DEFAULT_ROOT))
    assert all(p.stat().st_size > 1000 for p in written)


def test_leaderboards__clicking_a_header_reorders_the_rows(browser, small_site):
    from selenium.webdriver.common.by import By

    browser.get(page_url(small_site / SITE_DIR, board_page_name(TASK)))
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


def test_leaderboards__landing_page_fits_a_1280_pixel_window(browser):
    """No horizontal scrolling at 1280 px: the summary table fits, normalised scores shown, and
    every metric carries its description."""
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(page_url(DEFAULT_ROOT / SITE_DIR))
    page, window = browser.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert page <= window
    table = browser.find_element(By.CSS_SELECTOR, "table.summary")
    assert browser.execute_script("return arguments[0].scrollWidth", table) <= window
    assert len(_column(browser, "boards", "normalised")) == len(list_tasks(DEFAULT_ROOT))
    metrics = browser.find_elements(By.CSS_SELECTOR, "table.summary tbody tr td:nth-child(2)")
    assert all(cell.get_attribute("title") for cell in metrics)
