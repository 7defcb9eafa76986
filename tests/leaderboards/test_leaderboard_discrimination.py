"""Every board separates its reference from random (or says on the board why it cannot), and
archived board versions stay readable under the protocol they were evaluated with."""

from __future__ import annotations

import pytest

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.archive import (
    all_archived_boards,
    archived_versions,
    load_archived_board,
)
from gymforge.leaderboards.board import load_board
from gymforge.leaderboards.discrimination import EXEMPT, Separation, separation
from gymforge.leaderboards.protocol import list_tasks, load_protocol
from gymforge.leaderboards.render import render_markdown

TASKS = list_tasks(DEFAULT_ROOT)


def test_separation_needs_disjoint_intervals():
    assert Separation(1.0, 0.0, 0.4, 0.5).separates
    assert not Separation(1.0, 0.0, 0.5, 0.5).separates  # intervals touch
    assert not Separation(0.0, 0.3, 0.1, 0.25).separates  # each half-width alone is smaller
    assert Separation(-2.0, 2.0, 1.0, 2.9).difference == 4.0


@pytest.mark.parametrize("task", TASKS)
def test_board_separates_reference_from_random_or_is_exempt(task):
    board = load_board(DEFAULT_ROOT, load_protocol(DEFAULT_ROOT, task))
    result = separation(board)
    assert result is not None, f"{task}: no row of the protocol's reference or random agent"
    if task in EXEMPT:
        assert not result.separates, f"{task} separates now: remove it from EXEMPT"
        assert EXEMPT[task] in render_markdown(board).decode()
    else:
        assert result.separates, (
            f"{task}: reference {result.reference:.4g} ± {result.reference_half_width:.3g} and "
            f"random {result.random:.4g} ± {result.random_half_width:.3g} overlap; improve the "
            "protocol or list the board in EXEMPT with the reason"
        )


def test_exemptions_name_existing_boards_with_a_reason():
    assert set(EXEMPT) <= set(TASKS)
    assert all(len(reason) > 40 for reason in EXEMPT.values())


def test_archived_boards_load_under_their_own_protocol():
    boards = all_archived_boards(DEFAULT_ROOT)
    assert boards, "no archived board versions"
    for board in boards:
        task = board.protocol.task
        current = load_protocol(DEFAULT_ROOT, task)
        assert board.protocol.version < current.version
        assert board.protocol.sha256 != current.sha256
        assert board.rows, f"{task} v{board.protocol.version}: no rows"
        for row in board.rows:  # kept as evaluated: the old metric, the old protocol's hash
            assert row.results["protocol"]["version"] == board.protocol.version
            assert row.results["metric"] == board.protocol.metric


def test_an_edited_archived_row_is_refused(tmp_path):
    import shutil

    task = "cmab/CascadeOffline"
    assert 1 in archived_versions(DEFAULT_ROOT, task)
    shutil.copytree(DEFAULT_ROOT / task / "archive", tmp_path / task / "archive")
    shutil.copytree(DEFAULT_ROOT / "protocols", tmp_path / "protocols")
    board = load_archived_board(tmp_path, task, 1)
    results = board.rows[0].folder / "results.json"
    results.write_text(results.read_text().replace('"return"', '"return" ', 1))
    with pytest.raises(ValueError, match="sha256"):
        load_archived_board(tmp_path, task, 1)


def test_cascade_board_ranks_clcb_emp_cucb_offline_as_the_paper():
    """The n = 100 cascade track: CLCB < EMP < CUCB-Offline in exact gap, CLCB's CI clear of
    EMP's (the other cascade tracks, where it is not so, are explained in a results file)."""
    board = load_board(DEFAULT_ROOT, load_protocol(DEFAULT_ROOT, "cmab/CascadeOffline"))
    agg = {
        r.results["agent"]["entry_point"].rsplit(":", 1)[1]: r.results["aggregate"]
        for r in board.rows
        if r.results["agent"].get("entry_point", "").startswith("gymforge.agents.cmab.agent:")
    }
    clcb, emp, cucb = agg["clcb_agent"], agg["emp_agent"], agg["cucb_offline_agent"]
    assert clcb["mean"] < emp["mean"] < cucb["mean"]
    assert clcb["ci95"][1] < emp["ci95"][0]
