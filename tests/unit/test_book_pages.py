"""Generated content: markers are replaced by tables made from the build report (repro.book.pages)."""
from repro.book.pages import fill_markers

REPORT = {"scale": "ci", "seed": 0, "device": "cpu", "jobs": 2, "environment": {"torch": "2.13.0"}, "notebooks": [
    {"path": "chapters/specgd/02_experiments.md", "chapter": "specgd", "seconds": 41.5, "status": "ok", "error": "",
     "claims": [{"id": "spec-beats-gd", "says": "SpecGD beats GD early", "observed": 0.301, "op": "at_least",
                 "threshold": 0.15, "paper": "+0.30", "holds": True, "expect": True},
                {"id": "depth-gap", "says": "depth amplifies the gap", "observed": -0.01, "op": "at_least",
                 "threshold": 0.0, "paper": "", "holds": False, "expect": False}]}]}


def test_chapter_claims_marker_becomes_its_table():
    page = fill_markers("# SpecGD\n\n<!-- repro:claims specgd -->\n\nMore text.\n", REPORT)
    assert "repro:claims" not in page
    assert "| `spec-beats-gd` | SpecGD beats GD early | +0.30 | 0.301 | ≥ 0.15 | ✓ held |" in page
    assert "not held (as expected: not reproduced)" in page and page.endswith("More text.\n")


def test_a_chapter_that_did_not_run_says_so():
    assert "No claims were recorded" in fill_markers("<!-- repro:claims other -->", REPORT)


def test_scoreboard_and_status():
    board = fill_markers("<!-- repro:scoreboard -->", REPORT)
    assert "| {doc}`specgd </chapters/specgd/index>` | 1 / 2 | 1 | yes |" in board
    status = fill_markers("<!-- repro:status -->", REPORT)
    assert "| `chapters/specgd/02_experiments.md` | ok | 41.5 |" in status
    assert "| specgd | 41.5 | yes |" in status and "| torch | `2.13.0` |" in status


def test_markers_inside_text_are_left_alone():
    text = "Write `<!-- repro:claims specgd -->` in your index.md."
    assert fill_markers(text, REPORT) == text


def test_generated_table_ends_before_the_next_paragraph():
    page = fill_markers("Intro.\n\n<!-- repro:scoreboard -->\n\nNext paragraph.\n", REPORT)
    table_end = page.index("| yes |") + len("| yes |")
    assert page[table_end:].startswith("\n\n"), "a blank line must separate the table from the next paragraph"
