"""Board notes: each names a board that exists, and render prints it on that board."""

from __future__ import annotations

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.board_notes import NOTES, board_note
from gymforge.leaderboards.protocol import list_tasks


def test_every_note_names_a_board_and_is_on_its_rendered_page():
    tasks = set(list_tasks(DEFAULT_ROOT))
    assert NOTES, "no notes: drop the module or this test"
    for task, note in NOTES.items():
        assert task in tasks, f"note for {task}, which has no protocol"
        page = (DEFAULT_ROOT / task / "LEADERBOARD.md").read_text(encoding="utf-8")
        assert board_note(task)[0] in page, f"{task}: render the boards again"
        assert note.rstrip(".") == note, "the sentence's full stop is added by board_note"


def test_a_board_without_a_note_gets_none():
    assert board_note("minmax/NoSuchBoard") == []
