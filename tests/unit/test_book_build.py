"""The pipeline on a fixture book: a failing notebook is reported with its cell while the good one still builds,
renders and is cached (repro.book.build, execute, stage, render, cli)."""
import json
import shutil
from pathlib import Path

import pytest

from repro.book.build import BuildOptions, build, succeeded
from repro.book.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "minibook"


ROOT = Path(__file__).resolve().parents[2]


def _make_minibook(book: Path) -> Path:
    shutil.copytree(FIXTURE, book)
    (book / "lib" / "repro").mkdir(parents=True)  # a stand-in library: its files feed the cache key
    (book / "lib" / "repro" / "stand_in.py").write_text("VALUE = 1\n")
    (book / "requirements.lock").write_text("")
    if (ROOT / "node_modules").is_dir():
        (book / "node_modules").symlink_to(ROOT / "node_modules")
    return book


@pytest.fixture
def minibook(tmp_path):
    """The fixture book, never built."""
    return _make_minibook(tmp_path / "book")


@pytest.fixture(scope="session")
def executed_minibook(tmp_path_factory):
    """The fixture book built once for the session (both chapters, two at a time, no render), and its report."""
    book = _make_minibook(tmp_path_factory.mktemp("executed") / "book")
    return book, build(BuildOptions(root=book, jobs=2, render=False))


@pytest.fixture
def built_minibook(executed_minibook, tmp_path):
    """A copy of the session's executed fixture book: its cache holds the good notebook until an input changes."""
    return shutil.copytree(executed_minibook[0], tmp_path / "book", symlinks=True)


def _by_path(report):
    return {nb["path"]: nb for nb in report["notebooks"]}


@pytest.mark.slow
def test_a_failing_notebook_is_reported_and_the_good_one_still_builds(executed_minibook):
    minibook, report = executed_minibook
    nbs = _by_path(report)
    good, bad = nbs["chapters/good/01_ok.md"], nbs["chapters/bad/01_fails.md"]
    assert good["status"] == "ok" and good["error"] == ""
    assert [c["id"] for c in good["claims"]] == ["two-plus-two"] and good["claims"][0]["holds"]
    assert bad["status"] == "failed"
    assert bad["error"].startswith("cell ") and "RuntimeError: this notebook fails on purpose" in bad["error"]
    assert not succeeded(report)
    # the report on disk has the documented shape
    on_disk = json.loads((minibook / "_build" / "report.json").read_text())
    assert {"scale", "started", "notebooks"} <= set(on_disk)
    assert {"path", "seconds", "status", "error", "claims"} <= set(on_disk["notebooks"][0])
    assert (minibook / "_build" / "executed" / "chapters" / "good" / "01_ok.ipynb").exists()


@pytest.mark.slow
def test_second_build_executes_nothing_and_a_library_edit_reexecutes(built_minibook):
    minibook = built_minibook
    again = build(BuildOptions(root=minibook, render=False, only=["good"]))
    assert _by_path(again)["chapters/good/01_ok.md"]["status"] == "cached"
    (minibook / "lib" / "repro" / "stand_in.py").write_text("VALUE = 2\n")
    edited = build(BuildOptions(root=minibook, render=False, only=["good"]))
    assert _by_path(edited)["chapters/good/01_ok.md"]["status"] == "ok"


@pytest.mark.slow
def test_cli_exit_status_and_bad_arguments(built_minibook, capsys):
    minibook = built_minibook
    assert main(["--root", str(minibook), "build", "--no-render", "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "this notebook fails on purpose" in out
    assert main(["--root", str(minibook), "build", "--no-render", "--only", "nosuchchapter"]) == 2
    assert "no chapter named nosuchchapter" in capsys.readouterr().err
    assert main(["--root", str(minibook), "list"]) == 0
    assert capsys.readouterr().out.split() == ["chapters/good/01_ok.md", "chapters/bad/01_fails.md"]


@pytest.mark.slow
def test_bad_scale_stops_the_notebook_with_the_message(built_minibook):
    minibook = built_minibook
    report = build(BuildOptions(root=minibook, render=False, only=["good"]))
    assert report["notebooks"][0]["status"] == "cached"   # it ran ok in the session's build
    nb = minibook / "chapters" / "good" / "01_ok.md"
    nb.write_text(nb.read_text().replace('scale = "ci"', 'scale = "huge"').replace(
        "run = setup(scale=scale", "run = setup(scale='huge'"))
    failed = build(BuildOptions(root=minibook, render=False, only=["good"]))["notebooks"][0]
    assert failed["status"] == "failed"
    assert "BookParameterError: scale='huge' is not a scale of this book; use one of 'ci', 'full'" in failed["error"]


@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / "node_modules" / "mathjax").is_dir(),
                    reason="needs node_modules/mathjax (npm ci)")
@pytest.mark.slow
def test_render_shows_the_good_page_and_fills_the_claims_table(built_minibook):
    minibook = built_minibook
    report = build(BuildOptions(root=minibook, jobs=2))
    html = minibook / "_build" / "html"
    assert report["render"]["ok"], report["render"]["log"]
    good_page = (html / "chapters" / "good" / "01_ok.html").read_text()
    assert "A notebook that works" in good_page
    index = (html / "chapters" / "good" / "index.html").read_text()
    assert "two-plus-two" in index and "repro:claims" not in index
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists()


@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / "node_modules" / "mathjax").is_dir(),
                    reason="needs node_modules/mathjax (npm ci)")
@pytest.mark.slow
def test_a_render_warning_fails_the_build_and_keeps_failing_until_fixed(built_minibook):
    minibook = built_minibook
    intro = minibook / "chapters" / "intro.md"
    intro.write_text(intro.read_text() + "\nSee {doc}`no-such-page`.\n")
    first = build(BuildOptions(root=minibook, only=["good"]))
    assert not first["render"]["ok"] and "unknown document" in first["render"]["log"]
    again = build(BuildOptions(root=minibook, only=["good"]))  # nothing changed: the warning must not be forgotten
    assert not again["render"]["ok"] and not succeeded(again)
    intro.write_text(intro.read_text().replace("See {doc}`no-such-page`.", ""))
    assert build(BuildOptions(root=minibook, only=["good"]))["render"]["ok"]


@pytest.mark.slow
def test_a_data_file_of_the_chapter_feeds_the_cache_key(minibook):
    data = minibook / "data" / "good"
    data.mkdir(parents=True)
    (data / "weights.pt").write_bytes(b"one")
    assert _by_path(build(BuildOptions(root=minibook, render=False, only=["good"])))["chapters/good/01_ok.md"][
        "status"] == "ok"
    assert _by_path(build(BuildOptions(root=minibook, render=False, only=["good"])))["chapters/good/01_ok.md"][
        "status"] == "cached"
    (data / "weights.pt").write_bytes(b"two")
    assert _by_path(build(BuildOptions(root=minibook, render=False, only=["good"])))["chapters/good/01_ok.md"][
        "status"] == "ok"
    (data / "weights.pt").unlink()  # a removed file re-executes too, so its error shows instead of old outputs
    assert _by_path(build(BuildOptions(root=minibook, render=False, only=["good"])))["chapters/good/01_ok.md"][
        "status"] == "ok"


def _commit_all(book: Path) -> str:
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=book, check=True, capture_output=True, text=True).stdout.strip()

    if not (book / ".git").exists():
        git("init", "-q")
    (book / ".gitignore").write_text("_build/\nnode_modules\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture")
    return git("rev-parse", "HEAD")


@pytest.mark.slow
def test_record_writes_the_full_run_evidence_and_the_report_carries_it(minibook):
    from repro.book.full_run import FullRun

    commit = _commit_all(minibook)
    report = build(BuildOptions(root=minibook, scale="full", render=False, only=["good"], record=True))
    assert succeeded(report) and report["recorded"] == ["data/good/full-run.json"]
    record = json.loads((minibook / "data" / "good" / "full-run.json").read_text())
    assert record["commit"] == commit and record["scale"] == "full" and record["chapter"] == "good"
    assert [nb["path"] for nb in record["notebooks"]] == ["chapters/good/01_ok.md"]
    assert [c["id"] for c in record["claims"]] == ["two-plus-two"] and record["claims"][0]["kind"] == "check"
    assert record["glued"]["chapters/good/01_ok.md"]["two-plus-two-observed"] == 4
    full = FullRun.load("good", root=minibook)
    assert full.commit == commit[:10] and full.observed("two-plus-two") == 4 and full.holds("two-plus-two")
    with pytest.raises(KeyError, match="not in data/good/full-run.json"):
        full.claim("no-such-claim")
    ci = build(BuildOptions(root=minibook, render=False, only=["good"]))
    assert ci["full_runs"]["good"]["commit"] == commit


@pytest.mark.slow
def test_record_refuses_uncommitted_code_failed_notebooks_and_wrong_options(minibook):
    from repro.book.full_run import FullRun

    _commit_all(minibook)
    (minibook / "lib" / "repro" / "stand_in.py").write_text("VALUE = 3\n")
    report = build(BuildOptions(root=minibook, scale="full", render=False, only=["good"], record=True))
    assert "commit your changes first" in report["record_error"] and not succeeded(report)
    _commit_all(minibook)
    report = build(BuildOptions(root=minibook, scale="full", render=False, only=["bad"], record=True))
    assert "runs failed: chapters/bad/01_fails.md" in report["record_error"]
    assert not (minibook / "data" / "bad" / "full-run.json").exists()
    with pytest.raises(ValueError, match="add --scale full"):
        build(BuildOptions(root=minibook, render=False, only=["good"], record=True))
    with pytest.raises(ValueError, match="needs --only"):
        build(BuildOptions(root=minibook, scale="full", render=False, record=True))
    with pytest.raises(FileNotFoundError, match="python -m repro.book build --scale full --only good --record"):
        FullRun.load("good", root=minibook)


def test_a_missing_record_may_be_missing_at_full_scale(tmp_path):
    from repro.book.full_run import FullRun

    empty = FullRun.load("nochapter", root=tmp_path, missing_ok=True)
    assert empty.record["claims"] == [] and empty.glue() is None
