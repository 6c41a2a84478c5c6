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
    assert "setup(scale=scale, seed=seed, device=device)" in text, "validate the parameters with repro.book.setup"
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
