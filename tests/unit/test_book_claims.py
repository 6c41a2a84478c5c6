"""The claim ledger: verdicts, validation and the JSON records the build collects (repro.book.claims)."""
import json
import math

import pytest

from repro.book.claim_tables import claims_markdown
from repro.book.claims import Ledger
from repro.book.records import read_records
from repro.book.verdicts import format_test


@pytest.fixture
def claims_file(tmp_path, monkeypatch):
    path = tmp_path / "claims.jsonl"
    monkeypatch.setenv("REPRO_CLAIMS_FILE", str(path))
    monkeypatch.setenv("REPRO_NOTEBOOK", "chapters/x/01_a.md")
    return path


def test_checks_write_one_json_record_each(claims_file):
    ledger = Ledger("specgd")
    ledger.check("beats", kind="paper", observed=0.31, at_least=0.15, says="A beats B", paper="+0.30",
                 source="arXiv v1, Table 1")
    ledger.check("small", kind="ours", observed=0.2, at_most=0.05, says="C is small", expect=False)
    ledger.check("slope", kind="ours", observed=-2.1, between=(-2.5, -1.5), says="slope near -2")
    records = read_records(claims_file)
    assert [r["id"] for r in records] == ["beats", "small", "slope"]
    assert [r["holds"] for r in records] == [True, False, True]
    assert records[1]["expect"] is False
    assert records[0] == {"id": "beats", "says": "A beats B", "observed": 0.31, "op": "at_least", "threshold": 0.15,
                          "paper": "+0.30", "holds": True, "expect": True, "kind": "paper", "chapter": "specgd",
                          "notebook": "chapters/x/01_a.md", "source": "arXiv v1, Table 1", "interval": None,
                          "requires": [], "untestable": "", "controls": ""}
    json.dumps(records)  # plain JSON


def test_boundaries_hold_and_an_undefined_value_is_untestable(claims_file):
    ledger = Ledger("specgd")
    ledger.check("edge-low", kind="ours", observed=0.15, at_least=0.15, says="edge")
    ledger.check("edge-high", kind="ours", observed=0.05, at_most=0.05, says="edge")
    ledger.check("nan", kind="ours", observed=math.nan, at_least=0, says="nan", expect="untestable")
    assert [c.holds for c in ledger.claims] == [True, True, None]
    record = read_records(claims_file)[2]
    assert record["observed"] is None and record["holds"] is None and record["expect"] == "untestable"
    assert record["untestable"] == "the observed value is undefined" and ledger.claims[2].as_expected


def test_a_failed_precondition_makes_a_claim_untestable_not_failed(claims_file):
    ledger = Ledger("sokoban-planning")
    ledger.check("agent-competent", kind="ours", observed=0.67, at_least=0.8, says="the agent solves most levels",
                 expect=False)
    ledger.check("planning-helps", kind="paper", observed=-0.2, at_least=0.0, interval=(-0.3, -0.1),
                 source="arXiv v1, §4", paper="helps", says="planning helps", requires=["agent-competent"],
                 expect="untestable")
    ledger.check("trained", kind="check", observed=1, at_least=1, says="the agent was trained")
    ledger.check("after-training", kind="paper", observed=0.3, at_least=0.1, source="abstract", paper="+",
                 says="s", requires=["trained"])
    untestable, tested = ledger.claims[1], ledger.claims[3]
    assert untestable.holds is None and untestable.untestable == "requires agent-competent, which did not hold"
    assert untestable.as_expected and tested.holds is True
    assert read_records(claims_file)[1]["requires"] == ["agent-competent"]


@pytest.mark.parametrize("requires, message", [
    (["never-stated"], "not checked earlier in this notebook"),
    (["the-paper"], "a paper claim"),
    ("edge", "a list of claim ids"),
])
def test_preconditions_must_be_our_claims_stated_earlier(requires, message):
    ledger = Ledger("specgd")
    ledger.check("the-paper", kind="paper", observed=1, at_least=0, says="s", paper="+", source="abstract")
    ledger.check("edge", kind="ours", observed=1, at_least=0, says="s")
    with pytest.raises(ValueError, match=message):
        ledger.check("later", kind="ours", observed=1, at_least=0, says="s", requires=requires)


@pytest.mark.parametrize("test, interval, holds", [
    (dict(at_least=0.0), (0.03, 0.21), True),      # decided on the low end
    (dict(at_least=0.0), (-0.01, 0.21), False),    # the point estimate passes, the interval does not
    (dict(at_most=0.1), (0.0, 0.09), True),        # decided on the high end
    (dict(at_most=0.1), (0.0, 0.2), False),
    (dict(between=(0.0, 0.3)), (0.01, 0.29), True),  # the whole interval inside
    (dict(between=(0.0, 0.3)), (0.01, 0.31), False),
    (dict(at_least=0.0), (math.nan, 0.2), None),   # an undefined interval: untestable
])
def test_noisy_claims_are_decided_on_their_interval(test, interval, holds):
    ledger = Ledger("specgd")
    ledger.check("gap", kind="ours", observed=0.12, interval=interval, says="s", **test,
                 expect="untestable" if holds is None else holds)
    assert ledger.claims[0].holds is holds and ledger.claims[0].as_expected


def test_an_interval_is_shown_beside_its_value_and_glued_under_names_of_its_own():
    from repro.book.claim_tables import result_cell
    from repro.book.claims import glue_names

    record = {"observed": 0.12, "interval": [0.03, 0.21], "holds": True, "expect": True}
    assert result_cell(record) == "0.12 [0.03, 0.21] ✓"
    untestable = {"observed": None, "interval": None, "holds": None, "expect": "untestable",
                  "untestable": "requires agent-competent, which did not hold"}
    assert result_cell(untestable) == "n/a ○ untestable (requires agent-competent, which did not hold)"
    assert result_cell({**untestable, "expect": True}).startswith("n/a ○ (expected ✓)")
    assert glue_names("gap", "at_least", interval=True)["interval_low"] == "gap-interval-low"


def test_a_claim_tests_other_observations_as_it_tested_its_own(claims_file):
    ledger = Ledger("specgd")
    ledger.check("low", kind="ours", observed=0.3, at_least=0.15, says="s")
    ledger.check("high", kind="ours", observed=0.3, at_most=0.5, says="s")
    ledger.check("band", kind="ours", observed=0.3, between=(0.1, 0.5), says="s")
    low, high, band = ledger.claims
    assert low.passes(0.15) and not low.passes(0.1) and not low.passes(math.nan)
    assert high.passes(0.5) and not high.passes(0.6)
    assert band.passes(0.1) and not band.passes(0.51)
    with pytest.raises(ValueError, match="observed"):
        low.passes("many")


def test_without_build_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv("REPRO_CLAIMS_FILE", raising=False)
    Ledger("specgd").check("a", kind="ours", observed=1, at_least=0, says="s")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kwargs, message", [
    (dict(observed=1, says="s"), "exactly one"),
    (dict(observed=1, at_least=0, at_most=2, says="s"), "exactly one"),
    (dict(observed="high", at_least=0, says="s"), "observed must be a real number"),
    (dict(observed=1, between=(2, 1), says="s"), "lo > hi"),
    (dict(observed=1, at_least=0, says=""), "needs says="),
    (dict(observed=1, at_least=0, says="s", kind="reproduced"), "kind must be one of"),
    (dict(observed=1, at_least=0, says="s", kind="paper"), "give paper="),
    (dict(observed=1, at_least=0, says="s", kind="paper", paper="+"), "give source="),
    (dict(observed=1, at_least=0, says="s", expect="maybe"), "expect must be True, False or 'untestable'"),
    (dict(observed=1, at_least=0, says="s", interval=(2, 1)), "interval=.* has lo > hi"),
    (dict(observed=1, at_least=0, says="s", interval=(1,)), "interval must be a pair"),
])
def test_bad_checks_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Ledger("specgd").check("a", **{"kind": "ours", **kwargs})


def test_ids_are_validated_and_unique():
    ledger = Ledger("specgd")
    with pytest.raises(ValueError, match="lower-case"):
        ledger.check("Bad Id", kind="ours", observed=1, at_least=0, says="s")
    ledger.check("a", kind="ours", observed=1, at_least=0, says="s")
    with pytest.raises(ValueError, match="checked twice"):
        ledger.check("a", kind="ours", observed=1, at_least=0, says="s")
    with pytest.raises(ValueError, match="chapter slug"):
        Ledger("Not a slug")


def test_kind_is_required():
    with pytest.raises(TypeError, match="kind"):
        Ledger("specgd").check("a", observed=1, at_least=0, says="s")


def test_markdown_tables_group_claims_by_kind():
    records = [{"id": "a", "says": "s", "observed": 0.123456, "op": "between", "threshold": [0, 1], "paper": "",
                "holds": True, "expect": True, "kind": "check"},
               {"id": "b", "says": "t", "observed": 2.0, "op": "at_least", "threshold": 1, "paper": "1.5 (Table 1)",
                "holds": True, "expect": True, "kind": "paper"}]
    table = claims_markdown(records)
    assert "| `a` | s | — | in [0, 1] | 0.1235 ✓ |" in table and "✓ held" in table
    assert table.index("The paper's claims") < table.index("`b`") < table.index("Checks") < table.index("`a`")
    assert format_test("at_least", 0.15) == "≥ 0.15"


def test_markdown_table_shows_the_full_record_beside_ci():
    records = [{"id": "b", "says": "t", "observed": 2.0, "op": "at_least", "threshold": 1, "paper": "1.5",
                "holds": True, "expect": True, "kind": "paper"},
               {"id": "c", "says": "u", "observed": 0.0, "op": "at_most", "threshold": 1, "paper": "",
                "holds": True, "expect": True, "kind": "ours"}]
    full = {"commit": "abc", "claims": [{**records[0], "observed": 0.5, "holds": False, "expect": False}]}
    table = claims_markdown(records, full_record=full)
    assert "| `b` | t | 1.5 | ≥ 1 | 2 ✓ | 0.5 ✗ (expected) |" in table
    sourced = claims_markdown([{**records[0], "source": "arXiv v2, §4"}])
    assert "| `b` | t | 1.5 (arXiv v2, §4) | ≥ 1 | 2 ✓ |" in sourced
    assert "| `c` | u | — | ≤ 1 | 0 ✓ | — (not in the record) |" in table
    assert "— (no record) |" in claims_markdown(records, full_record={"claims": []})


def test_claims_glue_their_numbers_under_names_from_their_id():
    from repro.book.claims import glue_names

    assert glue_names("spec-beats-gd", "at_least") == {"observed": "spec-beats-gd-observed",
                                                       "verdict": "spec-beats-gd-verdict",
                                                       "threshold": "spec-beats-gd-threshold"}
    assert glue_names("slope", "between") == {"observed": "slope-observed", "verdict": "slope-verdict",
                                              "low": "slope-low", "high": "slope-high"}


def test_glued_numpy_scalars_are_read_as_numbers():
    from repro.book.records import as_number_or_text

    assert as_number_or_text("np.float64(0.25)") == 0.25
    assert as_number_or_text("np.int64(3)") == 3.0
    assert as_number_or_text("0.5") == 0.5
    assert as_number_or_text("'commit abc'") == "commit abc"
    assert as_number_or_text(1.5) == 1.5
    from repro.book.records import _recorded
    assert _recorded("np.float64(0.25)") == 0.25 and _recorded("2.0") == "2.0" and _recorded(0.5) == 0.5


def _notebook_gluing(path, values: dict):
    """An executed notebook whose one cell glued `values` as myst-nb does (scrapbook metadata, text/plain)."""
    prefix = "application/papermill.record/"
    outputs = [{"output_type": "display_data", "metadata": {"scrapbook": {"name": k, "mime_prefix": prefix}},
                "data": {f"{prefix}text/plain": repr(v)}} for k, v in values.items()]
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": outputs}]}))
    return path


def test_a_full_run_records_what_it_computed_never_what_it_read(tmp_path, monkeypatch):
    """The record of a full run leaves out the `full-…` values the notebook read from the previous record, so
    records never nest (no `full-full-…` key)."""
    import repro.book.full_run as full_run
    from repro.book.records import glued_values

    nb = _notebook_gluing(tmp_path / "nb.ipynb", {"gap": 0.25, "full-gap": 0.2, "full-full-gap": 0.1})
    assert glued_values(nb) == {"gap": 0.25}
    old = full_run.FullRun("x", {"commit": "abc", "date": "2026-12-07", "notebooks": [], "claims": [],
                                 "glued": {"nb": {"gap": 0.2, "full-gap": 0.1}}})
    glued = {}
    monkeypatch.setattr(full_run, "glue_quietly", glued.update)
    old.glue()
    assert glued["full-gap"] == 0.2 and not any(k.startswith("full-full-") for k in glued)


def test_a_positive_control_is_a_check_that_names_the_claim_it_controls(claims_file):
    ledger = Ledger("moe-grokking")
    ledger.positive_control("planted-pathway-found", 0.9, controls="pathway-falls", at_least=0.5,
                            says="the distance falls on a router trained to route by rule")
    record = read_records(claims_file)[0]
    assert record["kind"] == "check" and record["controls"] == "pathway-falls" and record["holds"] is True
    assert record["says"].startswith("positive control for pathway-falls")
    with pytest.raises(ValueError, match="controls= names the claim id"):
        ledger.positive_control("x", 1, controls="Not An Id", at_least=0, says="s")


def test_a_seed_sweep_counts_untestable_verdicts_apart():
    from repro.book.seeds import _verdicts

    def entry(seed, holds):
        return {"path": "chapters/x/02.md", "seed": seed,
                "claims": [{"id": "asynchrony", "kind": "paper", "says": "s", "expect": "untestable", "holds": holds,
                            "observed": None if holds is None else 1.0}]}

    steady = _verdicts([entry(s, None) for s in (0, 1, 2)], [0, 1, 2])[0]
    assert steady["untestable_at"] == 3 and steady["held"] == 0 and steady["as_expected"] and not steady["fragile"]
    mixed = _verdicts([entry(0, None), entry(1, True)], [0, 1, 2])[0]
    assert mixed["fragile"] and not mixed["as_expected"] and mixed["missing"] == [2] and mixed["held"] == 1


def test_a_claim_row_leaves_out_an_empty_part_of_its_paper_note():
    from repro.book.claims import _paper_note

    assert _paper_note("the paper's number", "abstract") == " (paper: the paper's number; abstract)"
    assert _paper_note("not in the paper", "") == " (paper: not in the paper)"       # no stray "; )"
    assert _paper_note("", "") == ""
