"""Thin notebooks (DESIGN.md §1; issue 44, part 5): a notebook shows and explains; orchestration lives in its
chapter's package, where it is tested. A code cell that draws nothing has at most `MAX_LOGIC_LINES` lines of code
(comments and blank lines left out). `LONG_CELLS` holds today's exceptions, counted per notebook: the test fails on a
new one, and when a notebook has fewer than listed (lower the count then), so the list only shrinks.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import repro

ROOT = Path(repro.__file__).resolve().parents[2]
MAX_LOGIC_LINES = 30
DRAWS = re.compile(r"\bplt\.|\bfig\b|\bax\b|\baxes\b|subplots")
#: notebook -> how many of its non-figure code cells are over MAX_LOGIC_LINES today (issue 44 moves them out).
LONG_CELLS = {
    "chapters/and-or-templates/02_experiments.md": 1,
    "chapters/causal-divergence/02_experiments.md": 2,
    "chapters/fraud-agents/02_experiments.md": 1,
    "chapters/moe-grokking/02_experiments.md": 3,
    "chapters/moe-multilingual/02_experiments.md": 2,
    "chapters/multilayer-changepoints/02_localisation.md": 1,
    "chapters/multilayer-changepoints/03_inference.md": 1,
    "chapters/multimodal-sae/02_experiments.md": 1,
    "chapters/neuroadapter/02_experiments.md": 1,
    "chapters/scorer/02_experiments.md": 3,
    "chapters/temporal-sae/02_experiments.md": 2,
    "chapters/transferability-benchmarks/02_experiments.md": 1,
}


def logic_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def long_cells(page: Path) -> list[int]:
    """The logic-line counts of `page`'s code cells that draw nothing and are over MAX_LOGIC_LINES."""
    import jupytext

    cells = [c.source for c in jupytext.read(page).cells if c.cell_type == "code"]
    return [n for n in map(logic_lines, (c for c in cells if not DRAWS.search(c))) if n > MAX_LOGIC_LINES]


def pages() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "chapters").glob("*/*.md")
                  if "code-cell" in p.read_text(encoding="utf-8"))


def test_the_counter_skips_comments_and_figures(tmp_path):
    import jupytext
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    body = "\n".join(f"x{i} = {i}" for i in range(31))
    notebook = new_notebook(cells=[new_markdown_cell("# A page"), new_code_cell(f"# a comment\n\n{body}"),
                                   new_code_cell(f"fig, ax = plt.subplots()\n{body}"), new_code_cell("y = 1")])
    page = tmp_path / "nb.md"
    jupytext.write(notebook, page, fmt="md:myst")
    assert long_cells(page) == [31]


@pytest.mark.parametrize("page", pages())
def test_a_code_cell_that_draws_nothing_is_short(page):
    found, allowed = long_cells(ROOT / page), LONG_CELLS.get(page, 0)
    assert len(found) <= allowed, (f"{page}: {len(found)} non-figure code cells over {MAX_LOGIC_LINES} lines "
                                   f"({found}); move the orchestration into the chapter's package")
    assert len(found) >= allowed, f"{page}: {len(found)} long cells now, LONG_CELLS says {allowed}: lower it"
