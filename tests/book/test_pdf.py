"""The PDF (`make pdf`, built by `make test`): every chapter's title and every claim of the build are in it.
Read with poppler's pdftotext (installed by .ci/run)."""
import json
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT

PDF = BUILD / "latex" / "book.pdf"


def _normal(text: str) -> str:
    """Lower case, quotes made straight, no spaces or hyphens: immune to line breaks and LaTeX's hyphenation."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"[\s\-\u2010\u00ad]", "", text)


@pytest.fixture(scope="module")
def pdf_text() -> str:
    if not PDF.exists():
        pytest.fail(f"no {PDF.relative_to(ROOT)}: make pdf (make test builds it)")
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext is needed to read the PDF: apt-get install poppler-utils (.ci/run does)")
    proc = subprocess.run(["pdftotext", str(PDF), "-"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-500:]
    return _normal(proc.stdout)


def _titles(pages) -> dict[str, str]:
    titles = {}
    for page in pages:
        if page.chapter and page.name.endswith("/index"):
            line = next(l for l in page.source.read_text(encoding="utf-8").splitlines() if l.startswith("# "))
            titles[page.chapter] = line[2:].strip()
    return titles


def test_every_chapter_title_is_in_the_pdf(pdf_text, pages):
    titles = _titles(pages)
    assert titles, "no chapter index pages in the toc"
    missing = [t for t in titles.values() if _normal(t) not in pdf_text]
    assert not missing, f"chapter titles missing from the PDF: {missing}"


def test_every_claim_of_the_build_is_in_the_pdf(pdf_text, report):
    claims = [(nb["chapter"], c["id"]) for nb in report["notebooks"] for c in nb.get("claims", [])]
    assert claims, "the build recorded no claims"
    missing = [f"{slug}: {cid}" for slug, cid in claims if _normal(cid) not in pdf_text]
    assert not missing, f"claims missing from the PDF's claim tables: {missing[:10]}"
    assert "claim" in pdf_text and "statement" in pdf_text, "the PDF has no claim tables"
