"""The course guide's facts (repro.book.course) and its page (repro.book.pages.course_guide)."""
import shutil
from pathlib import Path

import pytest

from repro.book.course import chapter_facts, course_metadata, suggested_order
from repro.book.pages import course_guide

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "minibook"


def _index(tmp_path, front: str) -> Path:
    path = tmp_path / "index.md"
    path.write_text(front + "# A chapter\n")
    return path


def test_course_metadata_reads_the_front_matter(tmp_path):
    meta = course_metadata(_index(tmp_path, "---\ncourse:\n  level: advanced\n  prerequisites: RL\n"
                                            "  builds_on: [scorer]\n---\n"))
    assert meta == {"level": "advanced", "prerequisites": "RL", "builds_on": ["scorer"]}


@pytest.mark.parametrize("front, message", [
    ("", "no `course:` block"),
    ("---\ncourse:\n  level: hard\n  prerequisites: RL\n---\n", "course.level must be one of"),
    ("---\ncourse:\n  level: advanced\n---\n", "course.prerequisites"),
    ("---\ncourse:\n  level: advanced\n  prerequisites: RL\n  builds_on: scorer\n---\n", "must be a list"),
])
def test_missing_or_wrong_course_metadata_is_a_clear_error(tmp_path, front, message):
    with pytest.raises(ValueError, match=message):
        course_metadata(_index(tmp_path, front))


def _facts(*rows):
    return [{"slug": slug, "level": level, "builds_on": builds, "read_minutes": 10, "exercises": 2,
             "title": slug, "part": "I", "prerequisites": "none", "words": 2000, "substrate": []}
            for slug, level, builds in rows]


def test_the_order_puts_a_chapter_after_what_it_builds_on_then_easier_levels_first():
    facts = _facts(("a", "advanced", []), ("b", "introductory", ["a"]), ("c", "introductory", []),
                   ("d", "intermediate", []))
    assert suggested_order(facts) == ["c", "d", "a", "b"]


def test_a_cycle_in_builds_on_is_a_clear_error():
    with pytest.raises(ValueError, match="cycle"):
        suggested_order(_facts(("a", "advanced", ["b"]), ("b", "advanced", ["a"])))


def test_facts_and_guide_of_the_fixture_book(tmp_path):
    root = tmp_path / "book"
    shutil.copytree(FIXTURE, root)
    facts = chapter_facts(root)
    assert [f["slug"] for f in facts] == ["good", "bad"]
    assert all(f["words"] > 0 and f["read_minutes"] >= 1 for f in facts)
    report = {"scale": "ci", "course": facts,
              "notebooks": [{"chapter": "good", "seconds": 3.2, "claims": [{"id": "x"}], "status": "ok"}]}
    page = course_guide(report)
    assert "{doc}`good </chapters/good/index>`" in page and "Week 2:" in page
    assert "| 3 |" in page            # the good chapter's run time, rounded to seconds


def test_every_chapter_of_the_book_has_its_course_metadata():
    facts = chapter_facts(Path(__file__).resolve().parents[2])
    assert facts and all(f["level"] and f["prerequisites"] for f in facts)
