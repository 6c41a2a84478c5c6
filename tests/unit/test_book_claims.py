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
    ledger.check("beats", observed=0.31, at_least=0.15, says="A beats B", paper="+0.30")
    ledger.check("small", observed=0.2, at_most=0.05, says="C is small", expect=False)
    ledger.check("slope", observed=-2.1, between=(-2.5, -1.5), says="slope near -2")
    records = read_records(claims_file)
    assert [r["id"] for r in records] == ["beats", "small", "slope"]
    assert [r["holds"] for r in records] == [True, False, True]
    assert records[1]["expect"] is False
    assert records[0] == {"id": "beats", "says": "A beats B", "observed": 0.31, "op": "at_least", "threshold": 0.15,
                          "paper": "+0.30", "holds": True, "expect": True, "chapter": "specgd",
                          "notebook": "chapters/x/01_a.md"}
    json.dumps(records)  # plain JSON


def test_boundaries_hold_and_nan_never_holds(claims_file):
    ledger = Ledger("specgd")
    ledger.check("edge-low", observed=0.15, at_least=0.15, says="edge")
    ledger.check("edge-high", observed=0.05, at_most=0.05, says="edge")
    ledger.check("nan", observed=math.nan, at_least=0, says="nan")
    assert [c.holds for c in ledger.claims] == [True, True, False]
    assert read_records(claims_file)[2]["observed"] is None


def test_a_claim_tests_other_observations_as_it_tested_its_own(claims_file):
    ledger = Ledger("specgd")
    ledger.check("low", observed=0.3, at_least=0.15, says="s")
    ledger.check("high", observed=0.3, at_most=0.5, says="s")
    ledger.check("band", observed=0.3, between=(0.1, 0.5), says="s")
    low, high, band = ledger.claims
    assert low.passes(0.15) and not low.passes(0.1) and not low.passes(math.nan)
    assert high.passes(0.5) and not high.passes(0.6)
    assert band.passes(0.1) and not band.passes(0.51)
    with pytest.raises(ValueError, match="observed"):
        low.passes("many")


def test_without_build_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv("REPRO_CLAIMS_FILE", raising=False)
    Ledger("specgd").check("a", observed=1, at_least=0, says="s")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kwargs, message", [
    (dict(observed=1, says="s"), "exactly one"),
    (dict(observed=1, at_least=0, at_most=2, says="s"), "exactly one"),
    (dict(observed="high", at_least=0, says="s"), "observed must be a real number"),
    (dict(observed=1, between=(2, 1), says="s"), "lo > hi"),
    (dict(observed=1, at_least=0, says=""), "needs says="),
])
def test_bad_checks_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Ledger("specgd").check("a", **kwargs)


def test_ids_are_validated_and_unique():
    ledger = Ledger("specgd")
    with pytest.raises(ValueError, match="lower-case"):
        ledger.check("Bad Id", observed=1, at_least=0, says="s")
    ledger.check("a", observed=1, at_least=0, says="s")
    with pytest.raises(ValueError, match="checked twice"):
        ledger.check("a", observed=1, at_least=0, says="s")
    with pytest.raises(ValueError, match="chapter slug"):
        Ledger("Not a slug")


def test_markdown_table_has_a_row_per_claim():
    records = [{"id": "a", "says": "s", "observed": 0.123456, "op": "between", "threshold": [0, 1], "paper": "",
                "holds": True, "expect": True}]
    table = claims_markdown(records)
    assert "| `a` | s | — | 0.1235 | in [0, 1] | ✓ held |" in table
    assert format_test("at_least", 0.15) == "≥ 0.15"
