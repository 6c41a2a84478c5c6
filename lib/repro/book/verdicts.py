"""What a claim's verdict is and how the book writes it (DESIGN.md §4): the kinds, the three verdicts (held, not held,
untestable), the decision on a point or on a 95% interval, and the formatting every table and page shares.

The notebook API that makes claims is `repro.book.claims`; the tables that show them are `repro.book.claim_tables`.
How to read claims is told in chapters/intro.md and chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

import math

OPS = {"at_least": "≥", "at_most": "≤", "between": "in"}
KINDS = ("paper", "ours", "check")
KIND_TITLES = {"paper": "The paper's claims", "ours": "Our own marks", "check": "Checks (true by construction)"}
#: The three verdicts, as the records spell them in `expect` (and `holds`: True, False, None).
UNTESTABLE = "untestable"
MARKS = {"held": "✓", "not held": "✗", UNTESTABLE: "○"}


def outcome(holds) -> str:
    """'held', 'not held' or 'untestable' for a record's `holds` (True, False, None)."""
    return UNTESTABLE if holds is None else ("held" if holds else "not held")


def expected_outcome(expect) -> str:
    """The verdict a chapter declares with `expect` (True, False or "untestable")."""
    return UNTESTABLE if expect == UNTESTABLE else ("held" if expect else "not held")


def as_expected(record: dict) -> bool:
    """Whether a claim record's verdict is the one its chapter declares."""
    return outcome(record.get("holds")) == expected_outcome(record.get("expect", True))


def as_number(name, value) -> float:
    """`value` as a float; a ValueError naming `name` when it is not a real number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    return number


def decision_range(observed: float, interval) -> tuple[float, float]:
    """The range a claim is decided on: its interval when it has one, else the point (observed, observed)."""
    if interval is None:
        return observed, observed
    if len(interval) != 2:
        raise ValueError(f"interval must be a pair (lo, hi), the 95% interval of the observed value; got {interval!r}")
    lo, hi = (as_number("interval", v) for v in interval)
    if lo > hi:
        raise ValueError(f"interval=({lo}, {hi}) has lo > hi")
    return lo, hi


def decide(op: str, threshold, lo: float, hi: float) -> bool | None:
    """The decision on the range [lo, hi]: `at_least` on lo, `at_most` on hi, `between` on both; None when the range
    is undefined (NaN)."""
    if math.isnan(lo) or math.isnan(hi):
        return None
    if op == "at_least":
        return bool(lo >= threshold)
    if op == "at_most":
        return bool(hi <= threshold)
    return bool(threshold[0] <= lo and hi <= threshold[1])


def format_value(x) -> str:
    """A number as the book prints it: four significant digits, `n/a` for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.4g}"


def format_observed(observed, interval=None) -> str:
    """An observed value with its 95% interval when it has one: `0.12 [0.03, 0.21]`."""
    if not interval:
        return format_value(observed)
    return f"{format_value(observed)} [{format_value(interval[0])}, {format_value(interval[1])}]"


def format_test(op: str, threshold) -> str:
    """The test a claim applies, e.g. `≥ 0.15` or `in [-2.5, -1.5]`."""
    if op == "between":
        lo, hi = threshold
        return f"in [{format_value(lo)}, {format_value(hi)}]"
    return f"{OPS[op]} {format_value(threshold)}"


def verdict(holds, expect, reason: str = "") -> str:
    """Held / not held / untestable (with its reason), and whether that is what the chapter expects."""
    got, wanted = outcome(holds), expected_outcome(expect)
    text = {"held": "✓ held", "not held": "✗ not held", UNTESTABLE: f"○ untestable: {reason or 'no test'}"}[got]
    if got == wanted:
        return text + (" (as expected: not reproduced)" if got == "not held" else "")
    return f"{text} (the chapter expects {wanted})"


def verdict_mark(holds, expect) -> str:
    """The short verdict of a table cell: ✓ held, ✗ not held, ○ untestable, with a note when the chapter expects
    another verdict."""
    got, wanted = outcome(holds), expected_outcome(expect)
    if got == wanted:
        return {"held": "✓", "not held": "✗ (expected)", UNTESTABLE: "○ untestable"}[got]
    if got == "not held" and wanted == "held":
        return "✗ (unexpected)"
    return f"{MARKS[got]} (expected {MARKS[wanted]})"


#: The legend printed under every claim table.
LEGEND = ("✓ held; ✗ (expected): not held, as the chapter declares (for a paper claim: not reproduced); "
          "○ untestable: a precondition of the test failed or the observed value is undefined, so the claim was not "
          "tested here (a defect of the miniature, not a finding about the paper); ✗ (unexpected) or "
          "✓ (expected ✗) and the like: the verdict differs from the chapter's expectation, which the tests flag; "
          "[lo, hi]: the 95% interval the verdict was decided on; — not run at that scale.")
