"""The book's layout follows DESIGN.md §1 and §3: chapter folders, notebooks, parameters, toc, README."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p for p in (ROOT / "chapters").iterdir() if p.is_dir() and p.name not in {"appendix", "_static"})
NOTEBOOKS = sorted(nb for d in CHAPTERS for nb in d.glob("[0-9][0-9]_*.md"))
TOC = (ROOT / "_toc.yml").read_text()


def cells(text: str):
    """(tags, source) of every code cell of a MyST notebook."""
    for match in re.finditer(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S):
        body = match.group(1)
        tags = re.search(r"^:tags:\s*\[(.*?)\]", body, re.M)
        yield ([t.strip().strip("'\"") for t in tags.group(1).split(",")] if tags else []), body


def test_there_are_chapters():
    assert CHAPTERS and NOTEBOOKS


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_chapter_folder(chapter):
    index = chapter / "index.md"
    assert index.exists(), f"{chapter.name}: no index.md"
    assert f"<!-- repro:claims {chapter.name} -->" in index.read_text(), \
        f"{chapter.name}/index.md must hold the generated claim table marker"
    assert list(chapter.glob("[0-9][0-9]_*.md")), f"{chapter.name}: no numbered notebook"
    for page in [index, *chapter.glob("[0-9][0-9]_*.md")]:
        assert page.relative_to(ROOT).with_suffix("").as_posix() in TOC, f"{page.name} is not in _toc.yml"
    assert not list(chapter.rglob("*.ipynb")), "executed notebooks are build products, not sources"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_anatomy(notebook):
    text = notebook.read_text()
    header = text.split("---")[1]
    assert "jupytext" in header and "format_name: myst" in header and "kernelspec" in header
    assert re.search(rf"^\({notebook.parent.name}-[\w-]+\)=\s*\n+# ", text, re.M), "needs a (slug-topic)= label, a title"
    all_cells = list(cells(text))
    params = [body for tags, body in all_cells if "parameters" in tags]
    assert len(params) == 1, "exactly one cell tagged `parameters`"
    assigned = set(re.findall(r"^(\w+)\s*=", params[0], re.M))
    assert assigned == {"scale", "seed", "device"}, f"the parameters cell sets {sorted(assigned)}"
    assert re.search(r'^scale\s*=\s*"ci"', params[0], re.M) and re.search(r"^seed\s*=\s*0", params[0], re.M)
    assert any("nbval-check-output" in tags for tags, _ in all_cells), "needs a cell tagged nbval-check-output"
    assert re.search(r'^run(, ledger)? = (start\("[a-z0-9-]+", |setup\()scale=scale, seed=seed, device=device[,)]',
                     text, re.M), "validate the parameters with repro.book.start (or setup)"
    assert not re.search(r"from repro[\w.]* import \*", text), "import explicitly from repro"
    assert "{exercise}" in text and "{solution}" in text, "end with exercises and their solutions"


def test_readme_gives_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_references_parse_and_cover_the_papers():
    from pybtex.database import parse_file

    entries = parse_file(ROOT / "references.bib").entries
    iclr = [k for k, e in entries.items() if "ICLR" in e.fields.get("booktitle", "")]
    assert len(iclr) >= 19, f"references.bib has {len(iclr)} ICLR 2026 papers, the book has 19"
    cited = set()
    for md in (ROOT / "chapters").rglob("*.md"):
        cited |= set(re.findall(r"\{cite[:\w]*\}`([^`]+)`", md.read_text()))
    keys = {k for c in cited for k in c.split(",")}
    assert keys <= set(entries), f"cited but not in references.bib: {sorted(keys - set(entries))}"


# --- the prose (DESIGN.md §3: numbers in prose are glued) -------------------------------------------------------

PAGES_WITH_PROSE = sorted(p for d in CHAPTERS for p in [d / "index.md", *d.glob("[0-9][0-9]_*.md")])


@pytest.mark.parametrize("page", PAGES_WITH_PROSE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_prose_types_no_number_that_code_should_glue(page):
    from prose import typed_numbers

    found = [f"{page.relative_to(ROOT)}:{n}: {number!r} in: {line[:100]}" for n, number, line in typed_numbers(page)]
    assert not found, ("numbers typed into prose (glue them from the code that makes them, write settings as math, or "
                       "say whose number a quoted one is):\n" + "\n".join(found))


def test_the_prose_check_catches_typed_numbers(tmp_path):
    from prose import typed_numbers

    page = tmp_path / "01_x.md"
    page.write_text("---\njupytext: {}\n---\n# T\n\nWe trained three runs and reached 0.93 accuracy, 12% better.\n"
                    "The paper reports 0.42 (Table 1). Glued: {glue:text}`acc:.2f`, math $0.5$, code `0.7`.\n"
                    "```{code-cell} ipython3\nx = 0.25\n```\n")
    assert [number for _, number, _ in typed_numbers(page)] == ["0.93", "12%", "three runs"]
    page.write_text("# T\n\nAs the paper's Sec. 3 puts it, the rate is\n0.42 per step. Ours is 0.5.\n")
    assert [number for _, number, _ in typed_numbers(page)] == ["0.5"]


# --- the anatomy of a chapter (DESIGN.md §3) ----------------------------------------------------------------------

def figure_cells(text: str):
    """The code cells of a notebook that draw a figure (call matplotlib's plt.subplots, plt.figure or plt.show)."""
    return [body for _, body in cells(text) if re.search(r"plt\.(subplots|figure|show)\(", body)]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_figure_is_captioned_and_named(notebook):
    for body in figure_cells(notebook.read_text()):
        header = body.split("\n---\n", 1)[0] if body.startswith("---") else ""
        first = next((line for line in body.splitlines() if line and not line.startswith(("---", " ", ":"))), "")
        assert "figure:" in header and "caption:" in header and re.search(r"^\s+name:\s*fig-", header, re.M), \
            f"a figure without mystnb figure caption and name (fig-…): the cell starting {first[:60]!r}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_experiments_notebooks_close_with_their_claims(notebook):
    text = notebook.read_text()
    if "ledger.check(" not in text or notebook.name.startswith("01_"):
        pytest.skip("not an experiments notebook (a theory notebook, or one that checks no claim)")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings.count("Claims") == 1, f"one `## Claims` section, found {headings.count('Claims')}"
    after = headings[headings.index("Claims") + 1:]
    assert set(after) <= {"Summary", "Exercises"}, f"`## Claims` closes the experiments; after it come {after}"
    section = text[text.index("\n## Claims\n"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    assert "ledger.table()" in section, "the `## Claims` section shows ledger.table()"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_has_exercises_with_solutions(chapter):
    notebooks = list(chapter.glob("[0-9][0-9]_*.md"))
    with_exercises = [nb for nb in notebooks if re.search(r"^## Exercises$", nb.read_text(), re.M)]
    assert with_exercises, f"{chapter.name}: no notebook has an `## Exercises` section"
    for nb in with_exercises:
        text = nb.read_text()[nb.read_text().index("\n## Exercises\n"):]
        assert "{exercise}" in text and "{solution}" in text and ":class: dropdown" in text, \
            f"{nb.name}: the exercises need their solutions, folded (:class: dropdown)"


def test_toc_parts_are_numbered_without_gaps():
    import yaml

    captions = [part["caption"] for part in yaml.safe_load(TOC)["parts"]]
    numerals = [c.split(".")[0] for c in captions if re.match(r"^[IVX]+\. ", c)]
    roman = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
    assert numerals == roman[:len(numerals)], f"the toc's parts are numbered {numerals}"


# --- full-scale evidence (DESIGN.md §5) ---------------------------------------------------------------------------

def chapter_sources(chapter: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(chapter.glob("[0-9][0-9]_*.md")))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_ships_the_record_of_its_full_run(chapter):
    from repro.book.records import read_record, rerun_command

    record = read_record(ROOT, chapter.name)
    assert record, f"{chapter.name}: no data/{chapter.name}/full-run.json; make it with `{rerun_command(chapter.name)}`"
    assert re.fullmatch(r"[0-9a-f]{40}", record["commit"]) and record["scale"] == "full"
    assert all(nb["status"] in ("ok", "cached") for nb in record["notebooks"])
    sources = chapter_sources(chapter)
    stale = [c["id"] for c in record["claims"] if f'"{c["id"]}"' not in sources]
    assert not stale, (f"{chapter.name}: its full-run record names claims the chapter no longer checks: {stale}; "
                       f"the record is stale, rerun `{rerun_command(chapter.name)}`")
    assert all(c.get("kind") in ("paper", "ours", "check") for c in record["claims"])


# --- robustness across seeds (DESIGN.md §4; chapters/appendix/robustness.md) ---------------------------------------

#: The chapters whose seed records were made when the seed sweep arrived (issue 30); every later chapter adds its own.
SWEPT_FIRST = ("specgd", "multilayer-changepoints", "temporal-sae", "causal-divergence", "scorer", "moe-grokking")


@pytest.mark.parametrize("slug", SWEPT_FIRST)
def test_the_first_chapters_ship_their_seed_record(slug):
    from repro.book.records import seeds_record_path

    assert seeds_record_path(ROOT, slug).exists(), (
        f"{slug}: no data/{slug}/seeds-run.json; make it with "
        f"`python -m repro.book seeds --seeds 0-9 --only {slug} --record`")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_a_seed_record_is_complete_and_not_stale(chapter):
    from repro.book.records import seeds_record_path

    path = seeds_record_path(ROOT, chapter.name)
    if not path.exists():
        pytest.skip(f"{chapter.name} has no seed record yet")
    import json

    record = json.loads(path.read_text())
    assert re.fullmatch(r"[0-9a-f]{40}", record["commit"]) and len(record["seeds"]) >= 3
    assert all(r["status"] in ("ok", "cached") for r in record["runs"])
    assert all(not c["missing"] for c in record["claims"]), f"{chapter.name}: a claim is missing at some seed"
    sources = chapter_sources(chapter)
    stale = [c["id"] for c in record["claims"] if f'"{c["id"]}"' not in sources]
    assert not stale, (f"{chapter.name}: its seed record names claims the chapter no longer checks: {stale}; rerun "
                       f"`{record['command']}`")
