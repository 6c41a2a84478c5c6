"""Fixtures of the book tests: the build report, the toc and the rendered site (run after `make book`)."""
import html
import json
import re
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
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


LAYOUT_SCRIPT = Path(__file__).with_name("layout.js")


def layout_problems(html_file: Path, width: int, profile: str) -> list[str]:
    """What overflows its container without a scroll bar on the page at a window `width` px wide (tests/book/layout.js
    measures it in headless Chromium, after MathJax). The script runs in a copy of the page beside it, removed after."""
    probe = html_file.with_name(f".layout-{width}-{html_file.name}")
    page = html_file.read_text()
    probe.write_text(page.replace("</body>", LAYOUT_SCRIPT.read_text() + "</body>", 1))
    try:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--virtual-time-budget=15000", f"--window-size={width},900",
               "--hide-scrollbars", "--dump-dom", probe.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink(missing_ok=True)
    found = re.search(r'data-fit="([^"]*)"', proc.stdout)
    if found is None:
        return [f"the layout probe did not run in Chromium (exit {proc.returncode}): {proc.stderr[-300:]}"]
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="session")
def layouts(pages) -> dict:
    """layout_problems for every page of the toc at each width of WIDTHS, measured three pages at a time."""
    jobs = [(page.name, width) for page in pages for width in WIDTHS.values()]

    def probe(job):   # one Chromium profile per thread: two browsers cannot share one
        name, width = job
        return layout_problems(HTML / f"{name}.html", width, f"/tmp/repro-chromium-layout-{threading.get_ident()}")

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(jobs, pool.map(probe, jobs)))


WIDTHS = {"desktop": 1280, "phone": 390}
