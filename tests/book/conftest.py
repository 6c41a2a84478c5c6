"""Fixtures of the book tests: the build report, the toc and the rendered site (run after `make book`)."""
import json
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "_build"
HTML = BUILD / "html"


@pytest.fixture(scope="session")
def report() -> dict:
    path = BUILD / "report.json"
    if not path.exists():
        pytest.fail("no _build/report.json: build the book first (make book, or make test which builds it)")
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def pages():
    from repro.book.toc import read_toc

    return read_toc(ROOT)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.fail("headless Chromium is needed for the site tests: `apt-get install chromium` (.ci/run does it)")


@lru_cache(maxsize=None)
def rendered_dom(html_file: Path) -> str:
    """The page's DOM after its scripts ran (MathJax included), from headless Chromium."""
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=/tmp/repro-chromium-profile", "--virtual-time-budget=15000", "--dump-dom",
           html_file.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or "<html" not in proc.stdout:
        pytest.fail(f"Chromium could not render {html_file}: {proc.stderr[-500:]}")
    return proc.stdout
