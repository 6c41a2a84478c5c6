"""Every notebook ran, every claim's verdict is what its chapter expects, every chapter keeps its time budget."""
from collections import defaultdict
from pathlib import Path

import pytest

from repro.book.claims import KINDS
from repro.book.pages import CHAPTER_BUDGET_S


def test_every_notebook_of_the_toc_ran(report, pages):
    ran = {nb["path"]: nb for nb in report["notebooks"]}
    for page in pages:
        if page.is_notebook:
            rel = page.source.relative_to(Path(__file__).resolve().parents[2]).as_posix()
            assert rel in ran, f"{rel} is in _toc.yml but not in the build report"
            assert ran[rel]["status"] in ("ok", "cached"), f"{rel} failed: {ran[rel]['error']}"


def test_claim_verdicts_equal_their_expect(report):
    wrong = [f"{nb['path']}: {c['id']} holds={c['holds']} expect={c['expect']} (observed {c['observed']})"
             for nb in report["notebooks"] for c in nb["claims"] if c["holds"] != c["expect"]]
    assert not wrong, "claims whose verdict differs from what the chapter expects:\n" + "\n".join(wrong)


def test_every_chapter_states_claims(report):
    per_chapter = defaultdict(int)
    for nb in report["notebooks"]:
        per_chapter[nb["chapter"]] += len(nb["claims"])
    empty = [slug for slug, n in per_chapter.items() if n == 0]
    assert not empty, f"chapters with no claim checked: {empty}"


def test_chapters_keep_the_ci_time_budget(report):
    if report["scale"] != "ci":
        pytest.skip("the time budget is for scale='ci'")
    seconds = defaultdict(float)
    for nb in report["notebooks"]:
        seconds[nb["chapter"]] += nb["seconds"]
    over = {slug: round(s, 1) for slug, s in seconds.items() if s > CHAPTER_BUDGET_S}
    assert not over, f"chapters over the {CHAPTER_BUDGET_S} s budget at scale='ci': {over}"


def test_every_claim_has_a_kind(report):
    wrong = [f"{nb['path']}: {c['id']} kind={c.get('kind')!r}" for nb in report["notebooks"] for c in nb["claims"]
             if c.get("kind") not in KINDS]
    assert not wrong, "claims without a kind (paper, ours or check):\n" + "\n".join(wrong)


def test_the_full_record_agrees_with_the_declared_expectations(report):
    """A claim's expect is the same at ci and in the full record, unless the chapter declares it by scale."""
    from repro.book.records import read_record

    root = Path(__file__).resolve().parents[2]
    wrong = []
    for slug in {nb["chapter"] for nb in report["notebooks"]}:
        for c in (read_record(root, slug) or {}).get("claims", []):
            if c["holds"] != c["expect"]:
                wrong.append(f"{slug}: {c['id']} held={c['holds']} but expect={c['expect']} in the full record")
    assert not wrong, "the recorded full runs contradict their chapters:\n" + "\n".join(wrong)
