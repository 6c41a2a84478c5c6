"""The PDF's clear errors (repro.book.render.render_pdf): TeX missing, or no staged book to render."""
import pytest

from repro.book import render


def test_the_pdf_without_tex_names_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(render.shutil, "which", lambda tool: None)
    with pytest.raises(FileNotFoundError, match="xelatex, latexmk.*apt-get install"):
        render.render_pdf(tmp_path / "stage", tmp_path)


def test_the_pdf_without_a_built_book_says_to_build_it(tmp_path, monkeypatch):
    monkeypatch.setattr(render.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    with pytest.raises(FileNotFoundError, match="make book"):
        render.render_pdf(tmp_path / "stage", tmp_path)
