"""Fixtures of the book tests: the build report, the toc and the rendered site (run after `make book`)."""
import json
import shutil
import subprocess
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


WIDTHS = {"desktop": 1280, "phone": 390}
RENDERER = Path(__file__).with_name("render.mjs")
PLAYWRIGHT = ROOT / "node_modules" / "playwright-core"


class Site:
    """Every page of the toc as headless Chromium shows it: the DOM after its scripts ran (MathJax included) and, at
    each width of WIDTHS, what overflows its container (tests/book/layout.js). One browser renders them all
    (tests/book/render.mjs, with playwright-core from package.json), four pages at a time."""

    def __init__(self, results: dict):
        self.results = results

    def _result(self, name: str) -> dict:
        found = self.results.get(name)
        if found is None:
            pytest.fail(f"{name} is in _toc.yml but the build rendered no {name}.html")
        if "error" in found:
            pytest.fail(f"Chromium could not render {name}: {found['error']}")
        return found

    def dom(self, name: str) -> str:
        return self._result(name)["dom"]

    def layout_problems(self, name: str, width: int) -> list[str]:
        return self._result(name)["problems"][str(width)]


def render(files: list[Path], work: Path, widths=tuple(sorted(WIDTHS.values())), concurrency: int = 4) -> dict:
    """Each page as headless Chromium shows it: {"<file>": {"problems": {"<width>": [...]}, "dom": ...}}, or for a page
    that did not render {"<file>": {"error": ...}} (tests/book/render.mjs). The page loads at the first width."""
    if not PLAYWRIGHT.exists():
        pytest.fail("the site tests drive Chromium with playwright-core: run `npm ci` (make env does it)")
    jobs = [{"key": str(file), "file": str(file), "widths": list(widths)} for file in files]
    (work / "jobs.json").write_text(json.dumps({"chromium": chromium(), "concurrency": concurrency,
                                                "timeout_ms": 60_000, "jobs": jobs}))
    proc = subprocess.run(["node", str(RENDERER), str(work / "jobs.json"), str(work / "out.json")],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        pytest.fail(f"tests/book/render.mjs failed (exit {proc.returncode}): {proc.stderr[-800:]}")
    return json.loads((work / "out.json").read_text())


@pytest.fixture(scope="session")
def site(pages, tmp_path_factory) -> Site:
    files = {page.name: HTML / f"{page.name}.html" for page in pages}
    results = render([f for f in files.values() if f.exists()], tmp_path_factory.mktemp("site"))
    return Site({name: results[str(file)] for name, file in files.items() if file.exists()})
