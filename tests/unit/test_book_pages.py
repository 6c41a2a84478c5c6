"""Generated content: markers are replaced by tables made from the build report (repro.book.pages)."""
from repro.book.pages import fill_markers

REPORT = {"scale": "ci", "seed": 0, "device": "cpu", "jobs": 2, "environment": {"torch": "2.13.0"}, "notebooks": [
    {"path": "chapters/specgd/02_experiments.md", "chapter": "specgd", "seconds": 41.5, "status": "ok", "error": "",
     "claims": [{"id": "spec-beats-gd", "says": "SpecGD beats GD early", "observed": 0.301, "op": "at_least",
                 "threshold": 0.15, "paper": "+0.30", "holds": True, "expect": True, "kind": "paper"},
                {"id": "depth-gap", "says": "depth amplifies the gap", "observed": -0.01, "op": "at_least",
                 "threshold": 0.0, "paper": "falls (abstract)", "holds": False, "expect": False, "kind": "paper"},
                {"id": "exact", "says": "two code paths agree", "observed": 0.0, "op": "at_most", "threshold": 1e-9,
                 "paper": "", "holds": True, "expect": True, "kind": "check"}]}],
    "full_runs": {"specgd": {"commit": "0123456789abcdef", "date": "2026-12-03T08:00:00+00:00",
                             "machine": "Linux x86_64, 2 cores",
                             "notebooks": [{"path": "chapters/specgd/02_experiments.md", "seconds": 600.0}],
                             "claims": [{"id": "spec-beats-gd", "says": "SpecGD beats GD early", "observed": 0.25,
                                         "op": "at_least", "threshold": 0.15, "paper": "+0.30", "holds": True,
                                         "expect": True, "kind": "paper"},
                                        {"id": "digits", "says": "Muon beats SGD on digits", "observed": 0.02,
                                         "op": "at_least", "threshold": 0.0, "paper": "beats (abstract)",
                                         "holds": True, "expect": True, "kind": "paper"}]}}}


def test_chapter_claims_marker_becomes_its_table():
    page = fill_markers("# SpecGD\n\n<!-- repro:claims specgd -->\n\nMore text.\n", REPORT)
    assert "repro:claims" not in page
    assert "| `spec-beats-gd` | SpecGD beats GD early | +0.30 | ≥ 0.15 | 0.301 ✓ | 0.25 ✓ |" in page
    assert "| `digits` | Muon beats SGD on digits | beats (abstract) | ≥ 0 | — (full scale only) | 0.02 ✓ |" in page
    assert "-0.01 ✗ (expected)" in page and page.endswith("More text.\n")
    assert page.index("The paper's claims") < page.index("`depth-gap`") < page.index("Checks") < page.index("`exact`")
    assert "commit `0123456789`, 2026-12-03, 10.0 minutes" in page


def test_a_chapter_that_did_not_run_says_so():
    assert "No claims were recorded" in fill_markers("<!-- repro:claims other -->", REPORT)


def test_scoreboard_and_status():
    board = fill_markers("<!-- repro:scoreboard -->", REPORT)
    assert "| {doc}`specgd </chapters/specgd/index>` | 1 / 1 / 0 | 2 / 0 / 0 | 0 / 0 | 1 / 1 | yes |" in board
    assert "**1 reproduced**, **1 did not reproduce** and **0 were untestable here**" in board
    assert "`exact`" not in board
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


def test_full_scoreboard_lists_every_claim_by_kind_with_ci_and_full():
    board = fill_markers("<!-- repro:scoreboard-full -->", REPORT)
    assert "repro:" not in board and "-full" not in board.splitlines()[1]
    for claim_id in ("spec-beats-gd", "depth-gap", "exact", "digits"):
        assert f"`{claim_id}`" in board
    assert "| specgd | `spec-beats-gd` | SpecGD beats GD early | +0.30 | ≥ 0.15 | 0.301 ✓ | 0.25 ✓ |" in board
    assert "| specgd | `exact` | two code paths agree | — | ≤ 1e-09 | 0 ✓ | — (not in the record) |" in board
    assert board.index("## The paper's claims") < board.index("## Checks")


def test_the_authors_code_page_sets_their_numbers_beside_ours(tmp_path):
    import json

    import pytest

    from repro.book.authors import check_authors_record

    record = {"chapter": "specgd", "repository": "https://github.com/o/n", "commit": "a" * 40,
              "command": "python run.py", "environment": "python 3.11", "date": "2026-12-07",
              "data": "our digits", "rows": [{"quantity": "gap", "theirs": 0.31, "ours": 0.3, "note": "same seed"}],
              "agreement": "They agree within noise."}
    page = fill_markers("<!-- repro:authors-code -->", {**REPORT, "authors_code": {"specgd": record}})
    assert "| gap | 0.31 | 0.3 | same seed |" in page and "`aaaaaaaaaa`" in page and "They agree" in page
    assert "| {doc}`specgd </chapters/specgd/index>` | [https://github.com/o/n]" in page
    empty = fill_markers("<!-- repro:authors-code -->", REPORT)
    assert "No chapter has a record" in empty and "| {doc}`specgd </chapters/specgd/index>` | no record yet" in empty
    with pytest.raises(ValueError, match="missing agreement"):
        check_authors_record({k: v for k, v in record.items() if k != "agreement"}, "data/specgd/authors-code.json")
    with pytest.raises(ValueError, match="40-hex-digit"):
        check_authors_record({**record, "commit": "main"}, "x")
    with pytest.raises(ValueError, match="row 0 lacks ours"):
        check_authors_record({**record, "rows": [{"quantity": "q", "theirs": 1}]}, "x")


def test_the_full_record_is_counted_under_the_kinds_of_today():
    import copy

    report = copy.deepcopy(REPORT)
    report["notebooks"][0]["claims"][0]["kind"] = "ours"       # spec-beats-gd relabelled since the record was made
    board = fill_markers("<!-- repro:scoreboard -->", report)
    assert "| {doc}`specgd </chapters/specgd/index>` | 0 / 1 / 0 | 1 / 0 / 0 |" in board
    assert "**0 reproduced**, **1 did not reproduce** and **0 were untestable here**" in board
