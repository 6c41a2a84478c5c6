"""Render the staged book with jupyter-book 1.x (DESIGN.md §2, step 3): the site, and on request the PDF.

Notebooks arrive executed, so jupyter-book's execution is off (`execute_notebooks: "off"` in _config.yml); warnings
are errors (`-W -n --keep-going`). jupyter-book 2.x cannot build HTML offline, hence the pinned 1.x.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*m")


#: What the PDF needs beside Python: xelatex and latexmk (Debian's packages are named in .ci/run and the README).
PDF_TOOLS = ("xelatex", "latexmk")


def render_pdf(stage: Path, out_root: Path) -> tuple[bool, str, Path]:
    """Build the whole book as one PDF from `stage` (the executed, staged book that `render` reads) with jupyter-book's
    LaTeX builder and xelatex; return (ok, the log's last lines, the PDF's path `out_root/_build/latex/book.pdf`)."""
    missing = [tool for tool in PDF_TOOLS if shutil.which(tool) is None]
    if missing:
        raise FileNotFoundError(f"the PDF needs {', '.join(missing)}: install TeX (apt-get install --no-install-recommends "
                                "texlive-xetex texlive-latex-extra texlive-fonts-recommended texlive-plain-generic "
                                "latexmk, as .ci/run does)")
    if not (stage / "_toc.yml").exists():
        raise FileNotFoundError(f"no staged book in {stage}: build it first (make book)")
    pdf = out_root / "_build" / "latex" / "book.pdf"
    pdf.unlink(missing_ok=True)
    cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
           "build", str(stage), "--path-output", str(out_root), "--builder", "pdflatex"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = ANSI.sub("", proc.stdout + proc.stderr).strip()
    errors = [line for line in log.splitlines() if line.startswith("!") or "Error" in line]
    ok = proc.returncode == 0 and pdf.exists()
    return ok, "\n".join(errors[-20:] or log.splitlines()[-15:]), pdf


def render(stage: Path, out_root: Path, everything: bool = False) -> tuple[bool, str]:
    """Build HTML from `stage` into `out_root/_build/html`; return (ok, the log's last lines).

    Sphinx re-reads only changed pages, so a warning on an unchanged page is not repeated; after a failed render
    pass `everything=True` so that the next one re-reads every page and cannot pass by forgetting the warning.
    """
    cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",  # the module has no __main__
           "build", str(stage), "--path-output", str(out_root), "--builder", "html", "-W", "-n", "--keep-going"]
    if everything:
        cmd.append("--all")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = ANSI.sub("", proc.stdout + proc.stderr).strip()
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    tail = "\n".join(warnings[-30:] or log.splitlines()[-15:])
    return proc.returncode == 0, tail
