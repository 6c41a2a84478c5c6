"""The claim ledger: verdicts, validation and the JSON records the build collects (repro.book.claims)."""
import json
import math

import pytest

from repro.book.claims import Ledger, claims_markdown, format_test, read_records


@pytest.fixture
def claims_file(tmp_path, monkeypatch):
    path = tmp_path / "claims.jsonl"
    monkeypatch.setenv("REPRO_CLAIMS_FILE", str(path))
    monkeypatch.setenv("REPRO_NOTEBOOK", "chapters/x/01_a.md")
    return path


def test_checks_write_one_json_record_each(claims_file):
    ledger = Ledger("specgd")
    ledger.check("beats", kind="paper", observed=0.31, at_least=0.15, says="A beats B", paper="+0.30")
    ledger.check("small", kind="ours", observed=0.2, at_most=0.05, says="C is small", expect=False)
    ledger.check("slope", kind="ours", observed=-2.1, between=(-2.5, -1.5), says="slope near -2")
    records = read_records(claims_file)
    assert [r["id"] for r in records] == ["beats", "small", "slope"]
    assert [r["holds"] for r in records] == [True, False, True]
    assert records[1]["expect"] is False
    assert records[0] == {"id": "beats", "says": "A beats B", "observed": 0.31, "op": "at_least", "threshold": 0.15,
                          "paper": "+0.30", "holds": True, "expect": True, "kind": "paper", "chapter": "specgd",
                          "notebook": "chapters/x/01_a.md"}
    json.dumps(records)  # plain JSON


def test_boundaries_hold_and_nan_never_holds(claims_file):
    ledger = Ledger("specgd")
    ledger.check("edge-low", kind="ours", observed=0.15, at_least=0.15, says="edge")
    ledger.check("edge-high", kind="ours", observed=0.05, at_most=0.05, says="edge")
    ledger.check("nan", kind="ours", observed=math.nan, at_least=0, says="nan")
    assert [c.holds for c in ledger.claims] == [True, True, False]
    assert read_records(claims_file)[2]["observed"] is None


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
    assert "| `c` | u | — | ≤ 1 | 0 ✓ | — (not in the record) |" in table
    assert "— (no record) |" in claims_markdown(records, full_record={"claims": []})


def test_claims_glue_their_numbers_under_names_from_their_id():
    from repro.book.claims import glue_names

    assert glue_names("spec-beats-gd", "at_least") == {"observed": "spec-beats-gd-observed",
                                                       "threshold": "spec-beats-gd-threshold"}
    assert glue_names("slope", "between") == {"observed": "slope-observed", "low": "slope-low", "high": "slope-high"}


def test_glued_numpy_scalars_are_read_as_numbers():
    from repro.book.records import as_number_or_text

    assert as_number_or_text("np.float64(0.25)") == 0.25
    assert as_number_or_text("np.int64(3)") == 3.0
    assert as_number_or_text("0.5") == 0.5
    assert as_number_or_text("'commit abc'") == "commit abc"
    assert as_number_or_text(1.5) == 1.5
    from repro.book.records import _recorded
    assert _recorded("np.float64(0.25)") == 0.25 and _recorded("2.0") == "2.0" and _recorded(0.5) == 0.5
