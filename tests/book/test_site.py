"""The rendered site, as a reader's browser shows it (headless Chromium): every page of the toc exists, notebook
pages show their figures, math is typeset, pages fit a desktop's and a phone's width, and no output shows a
traceback, a warning or unfilled generated text."""
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import BUILD, HTML, ROOT, WIDTHS, render
from repro.book.pages import MARKER
from repro.book.toc import read_toc

PAGES = read_toc(ROOT)


def html_file(page) -> Path:
    return HTML / f"{page.name}.html"


def visible_text(soup: BeautifulSoup) -> str:
    for tag in soup(["script", "style", "pre", "code", "mjx-assistive-mml"]):
        tag.decompose()
    return soup.get_text(" ")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_exists_with_generated_content_filled(page):
    path = html_file(page)
    assert path.exists(), f"{page.name} is in _toc.yml but {path.relative_to(ROOT)} was not rendered"
    soup = BeautifulSoup(path.read_text(), "html.parser")
    if MARKER.search(page.source.read_text()):
        assert soup.select("main table, article table"), "the page's generated table is missing"
        assert "No claims were recorded" not in soup.get_text(), "a chapter's claims are missing from the build"
    text = visible_text(soup)
    assert "{glue" not in text and "{cite" not in text and "{doc" not in text, "a MyST role was not rendered"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_math_is_typeset(page, site):
    raw = html_file(page).read_text()
    if 'class="math' not in raw:
        pytest.skip("the page has no math")
    dom = site.dom(page.name)
    soup = BeautifulSoup(dom, "html.parser")
    assert soup.find("mjx-container"), "the page has math but MathJax typeset none of it"
    text = visible_text(soup)
    raw_math = [m for m in ("\\(", "\\)", "\\[", "\\]", "$$") if m in text]
    assert not raw_math, f"raw LaTeX delimiters left on the page: {raw_math}"


@pytest.mark.parametrize("width", WIDTHS, ids=WIDTHS)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_fits_its_width(page, width, site):
    """Nothing is clipped or runs past the content column at a desktop's and a phone's width: what is wider than the
    column (a table, a code cell) must scroll inside it. Long inline math is clipped by the theme on a phone: write
    it as display math. Measured by tests/book/layout.js in headless Chromium."""
    problems = site.layout_problems(page.name, WIDTHS[width])
    assert not problems, f"at {WIDTHS[width]} px: " + "; ".join(problems)


NOTEBOOK_PAGES = [p for p in PAGES if p.is_notebook]


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_notebook_page_shows_its_figures(page):
    executed = json.loads((BUILD / "executed" / f"{page.name}.ipynb").read_text())
    images = sum("image/png" in out.get("data", {}) or "image/svg+xml" in out.get("data", {})
                 for cell in executed["cells"] for out in cell.get("outputs", []))
    soup = BeautifulSoup(html_file(page).read_text(), "html.parser")
    shown = [img for img in soup.select("div.cell_output img, figure img")]
    assert len(shown) >= images, f"the notebook made {images} figures, the page shows {len(shown)}"
    for img in shown:
        src = img.get("src", "")
        assert src.startswith("data:") or (html_file(page).parent / src).exists(), f"missing image {src}"


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_no_traceback_or_warning_in_outputs(page):
    soup = BeautifulSoup(html_file(page).read_text(), "html.parser")
    outputs = soup.select("div.cell_output")
    text = "\n".join(o.get_text(" ") for o in outputs)
    assert not soup.select("div.cell_output .traceback, div.output.traceback"), "an output shows a traceback"
    assert "Traceback (most recent call last)" not in text, "an output shows a traceback"
    assert not soup.select("div.output.stderr"), "an output cell wrote to stderr (a warning or a progress bar)"
    # a dollar pair around something that reads as math (a letter, a backslash, ^, _ or braces); a Sokoban board
    # printed in its standard notation ($ box, # wall, . target, @ player) is not math
    raw_math = [m for m in re.findall(r"\$[^$\s][^$]*\$", text) if re.search(r"[A-Za-z\\^_{}]", m)]
    assert not raw_math, f"an output shows raw LaTeX (cell outputs do not typeset $...$): {raw_math[:3]}"
    warnings = re.findall(r"\b\w*Warning\b:", text)
    assert not warnings, f"an output shows a warning: {warnings[:3]}"


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_notebook_page_offers_the_executed_notebook_and_its_source(page, site):
    soup = BeautifulSoup(site.dom(page.name), "html.parser")
    links = {a.get_text(strip=True): a["href"] for a in soup.select(".dropdown-download-buttons a[href]")}
    assert {".ipynb", ".md"} <= set(links), f"the download menu offers {sorted(links)}, not .ipynb and .md"
    ipynb = (html_file(page).parent / links[".ipynb"]).resolve()
    cells = json.loads(ipynb.read_text())["cells"]
    assert any(cell.get("outputs") for cell in cells), f"{links['.ipynb']} is not the executed notebook"
    md = (html_file(page).parent / links[".md"]).resolve()
    assert md.exists() and md.read_bytes() == page.source.read_bytes(), f"{links['.md']} is not the page's source"


GLUE_PLAIN = "application/papermill.record/text/plain"


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: p.name)
def test_glued_values_are_plain(page):
    """A glued numpy or torch scalar is stored as its repr (np.float64(0.5)); a format such as
    {glue:text}`x:.2f` cannot read it and the page shows nothing where the number should be."""
    executed = BUILD / "executed" / f"{page.name}.ipynb"
    if not executed.exists():
        pytest.skip(f"{page.name} was not executed in this build")
    wrong = [f"{o['metadata']['scrapbook']['name']} = {o['data'][GLUE_PLAIN]}"
             for cell in json.loads(executed.read_text())["cells"] for o in cell.get("outputs", [])
             if "scrapbook" in o.get("metadata", {}) and re.match(r"(np|torch)\.|tensor\(|array\(",
                                                                   o.get("data", {}).get(GLUE_PLAIN, ""))]
    assert not wrong, ("glued values that are numpy or torch objects: wrap them in float(), int() or str() "
                       f"before glue(): {wrong}")


def test_the_scoreboard_lists_every_claim_of_the_book(report):
    from repro.book.records import read_record

    page = HTML / "chapters" / "appendix" / "scoreboard.html"
    text = BeautifulSoup(page.read_text(), "html.parser").get_text(" ")
    ids = {c["id"] for nb in report["notebooks"] for c in nb["claims"]}
    ids |= {c["id"] for slug in {nb["chapter"] for nb in report["notebooks"]}
            for c in (read_record(ROOT, slug) or {}).get("claims", [])}
    missing = sorted(i for i in ids if i not in text)
    assert not missing, f"claims missing from the rendered scoreboard: {missing}"
    text = text.replace("\u2019", "'")                      # Sphinx typesets the apostrophe
    for title in ("The paper's claims", "Our own marks", "Checks (true by construction)"):
        assert title in text, f"the scoreboard has no section {title!r}"


def test_the_layout_probe_finds_an_overflow_planted_in_a_page(tmp_path):
    """The positive control of test_page_fits_its_width: in a page whose article is 300 px wide, a box wider than the
    column at every width, one only at a phone's width and one only at a desktop's (CSS media queries: the page loads
    at one width and is resized to the other), and a wide table in a scrolling wrapper, which is allowed."""
    page = tmp_path / "planted.html"
    page.write_text("<html><head><style>article {width: 300px} #phone, #desk {width: 100px}"
                    " @media (max-width: 500px) {#phone {width: 900px}} @media (min-width: 1000px) {#desk {width: 900px}}"
                    "</style></head><body><article><p>fits</p><div id='wide' style='width:900px'>too wide</div>"
                    "<div id='phone'>phone</div><div id='desk'>desk</div>"
                    "<div style='overflow-x:auto'><table id='scrolls' style='width:900px'><tr><td>ok</td></tr></table>"
                    "</div></article></body></html>")
    found = render([page], tmp_path)[str(page)]
    assert "error" not in found, found.get("error")
    for width, problems in found["problems"].items():
        named = {box for box in ("wide", "phone", "desk", "scrolls")
                 if any(f"#{box} " in p and "past the content column" in p for p in problems)}
        only_here = {WIDTHS["phone"]: "phone", WIDTHS["desktop"]: "desk"}[int(width)]
        assert named == {"wide", only_here}, (width, problems)
