"""Every notebook ran, every claim's verdict is what its chapter expects, every chapter keeps its time budget."""
from collections import defaultdict
from pathlib import Path

import pytest

from repro.book.verdicts import KINDS, as_expected, expected_outcome, outcome
from repro.book.pages import CHAPTER_BUDGET_S


def test_every_notebook_of_the_toc_ran(report, pages):
    ran = {nb["path"]: nb for nb in report["notebooks"]}
    for page in pages:
        if page.is_notebook:
            rel = page.source.relative_to(Path(__file__).resolve().parents[2]).as_posix()
            assert rel in ran, f"{rel} is in _toc.yml but not in the build report"
            assert ran[rel]["status"] in ("ok", "cached"), f"{rel} failed: {ran[rel]['error']}"


def test_claim_verdicts_equal_their_expect(report):
    wrong = [f"{nb['path']}: {c['id']} {outcome(c['holds'])}, expected {expected_outcome(c['expect'])} "
             f"(observed {c['observed']})" for nb in report["notebooks"] for c in nb["claims"] if not as_expected(c)]
    assert not wrong, "claims whose verdict differs from what the chapter expects:\n" + "\n".join(wrong)


def test_every_chapter_states_claims(report):
    per_chapter = defaultdict(int)
    for nb in report["notebooks"]:
        per_chapter[nb["chapter"]] += len(nb["claims"])
    empty = [slug for slug, n in per_chapter.items() if n == 0]
    assert not empty, f"chapters with no claim checked: {empty}"


def test_chapters_keep_the_ci_time_budget(report):
    """Every chapter runs in CHAPTER_BUDGET_S at scale='ci', except a chapter listed in OVER_TIME_BUDGET
    (tests/book/debts.py), which must stay under the cap written there until its issue brings it under the budget."""
    from debts import OVER_TIME_BUDGET

    if report["scale"] != "ci":
        pytest.skip("the time budget is for scale='ci'")
    seconds = defaultdict(float)
    for nb in report["notebooks"]:
        seconds[nb["chapter"]] += nb["seconds"]
    over = {slug: round(s, 1) for slug, s in seconds.items() if s > OVER_TIME_BUDGET.get(slug, CHAPTER_BUDGET_S)}
    assert not over, (f"chapters over the {CHAPTER_BUDGET_S} s budget at scale='ci' (or over their cap in "
                      f"tests/book/debts.py): {over}")


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
            if not as_expected(c):
                wrong.append(f"{slug}: {c['id']} {outcome(c['holds'])} but expected "
                             f"{expected_outcome(c['expect'])} in the full record")
    assert not wrong, "the recorded full runs contradict their chapters:\n" + "\n".join(wrong)


# --- DESIGN.md §4: sources, intervals, positive controls, seed records -------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _claims(report):
    return [(nb["chapter"], c) for nb in report["notebooks"] for c in nb["claims"]]


def test_every_paper_claim_names_where_the_paper_states_it(report):
    missing = [f"{slug}: {c['id']}" for slug, c in _claims(report)
               if c.get("kind") == "paper" and not str(c.get("source") or "").strip()]
    assert not missing, "paper claims without source= (DESIGN.md §4):\n" + "\n".join(missing)


def _tie_passes(c) -> bool:
    """A paper or ours claim at threshold 0 decided on a point estimate: a tie (or noise) passes it."""
    return (c.get("kind") in ("paper", "ours") and c["op"] in ("at_least", "at_most") and c["threshold"] == 0
            and c.get("interval") is None)


def test_no_claim_at_threshold_zero_is_decided_on_a_point_estimate(report):
    """DESIGN.md §4: a difference of noisy quantities is decided on its 95% interval. The claims listed in
    POINT_ESTIMATE_AT_ZERO (tests/book/debts.py) wait for their chapter's issue; the list may only shrink."""
    from debts import POINT_ESTIMATE_AT_ZERO

    found = {f"{slug}:{c['id']}" for slug, c in _claims(report) if _tie_passes(c)}
    new, paid = found - POINT_ESTIMATE_AT_ZERO, POINT_ESTIMATE_AT_ZERO - found
    assert not new, "claims at threshold 0 without interval= (give the 95% interval):\n" + "\n".join(sorted(new))
    assert not paid, "remove from tests/book/debts.py (now decided on an interval or gone):\n" + "\n".join(sorted(paid))


def test_every_paper_claim_that_does_not_reproduce_has_a_positive_control(report):
    """DESIGN.md §4: a non-reproduction is a finding only when a positive control shows the test could succeed.
    Chapters still without one are listed in tests/book/debts.py; the list may only shrink."""
    from debts import NO_POSITIVE_CONTROL

    claims = _claims(report)
    controlled = {(slug, c["controls"]) for slug, c in claims if c.get("controls")}
    found = {f"{slug}:{c['id']}" for slug, c in claims
             if c.get("kind") == "paper" and c["holds"] is not True and (slug, c["id"]) not in controlled}
    new, paid = found - NO_POSITIVE_CONTROL, NO_POSITIVE_CONTROL - found
    assert not new, "paper claims not reproduced or untestable, without a positive control:\n" + "\n".join(sorted(new))
    assert not paid, "remove from tests/book/debts.py (controlled now, or reproduced):\n" + "\n".join(sorted(paid))


def test_every_chapter_ships_a_seed_record_of_its_current_claims(report):
    from repro.book.records import read_seed_records

    records = read_seed_records(ROOT)
    wrong = []
    for slug in dict.fromkeys(nb["chapter"] for nb in report["notebooks"]):
        if slug not in records:
            wrong.append(f"{slug}: no data/{slug}/seeds-run.json (python -m repro.book seeds --seeds 0-9 --only "
                         f"{slug} --record)")
            continue
        ledger = {c["id"] for nb in report["notebooks"] if nb["chapter"] == slug for c in nb["claims"]}
        swept = {c["id"] for c in records[slug]["claims"]}
        if swept != ledger:
            wrong.append(f"{slug}: the seed record's claims differ from the chapter's: only in the record "
                         f"{sorted(swept - ledger)}, only in the chapter {sorted(ledger - swept)}")
    assert not wrong, "seed records missing or stale (rerun the sweep with --record):\n" + "\n".join(wrong)


def test_no_record_nests_the_values_it_read():
    """A full run records what it computed, never the `full-…` values its notebooks read from the previous record."""
    from repro.book.records import FULL_PREFIX, read_record

    nested = []
    for chapter in sorted(p for p in (ROOT / "data").iterdir() if p.is_dir()):
        record = read_record(ROOT, chapter.name) or {}
        nested += [f"{chapter.name}: {k}" for g in record.get("glued", {}).values() for k in g
                   if k.startswith(FULL_PREFIX)]
    assert not nested, f"records holding read-back values ({len(nested)}), first ten:\n" + "\n".join(nested[:10])
