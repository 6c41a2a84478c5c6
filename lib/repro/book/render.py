"""Render the staged book with jupyter-book 1.x (DESIGN.md §2, step 3).

Notebooks arrive executed, so jupyter-book's execution is off (`execute_notebooks: "off"` in _config.yml); warnings
are errors (`-W -n --keep-going`). jupyter-book 2.x cannot build HTML offline, hence the pinned 1.x.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*m")


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
