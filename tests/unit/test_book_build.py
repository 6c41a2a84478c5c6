"""The pipeline on a fixture book: a failing notebook is reported with its cell while the good one still builds,
renders and is cached (repro.book.build, execute, stage, render, cli)."""
import json
import shutil
from pathlib import Path

import pytest

from repro.book.build import BuildOptions, build, succeeded
from repro.book.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "minibook"


@pytest.fixture
def minibook(tmp_path, root):
    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    (book / "lib" / "repro").mkdir(parents=True)  # a stand-in library: its files feed the cache key
    (book / "lib" / "repro" / "stand_in.py").write_text("VALUE = 1\n")
    (book / "requirements.lock").write_text("")
    if (root / "node_modules").is_dir():
        (book / "node_modules").symlink_to(root / "node_modules")
    return book


def _by_path(report):
    return {nb["path"]: nb for nb in report["notebooks"]}


def test_a_failing_notebook_is_reported_and_the_good_one_still_builds(minibook):
    report = build(BuildOptions(root=minibook, jobs=2, render=False))
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


def test_second_build_executes_nothing_and_a_library_edit_reexecutes(minibook):
    build(BuildOptions(root=minibook, render=False, only=["good"]))
    again = build(BuildOptions(root=minibook, render=False, only=["good"]))
    assert _by_path(again)["chapters/good/01_ok.md"]["status"] == "cached"
    (minibook / "lib" / "repro" / "stand_in.py").write_text("VALUE = 2\n")
    edited = build(BuildOptions(root=minibook, render=False, only=["good"]))
    assert _by_path(edited)["chapters/good/01_ok.md"]["status"] == "ok"


def test_cli_exit_status_and_bad_arguments(minibook, capsys):
    assert main(["--root", str(minibook), "build", "--no-render", "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "this notebook fails on purpose" in out
    assert main(["--root", str(minibook), "build", "--no-render", "--only", "nosuchchapter"]) == 2
    assert "no chapter named nosuchchapter" in capsys.readouterr().err
    assert main(["--root", str(minibook), "list"]) == 0
    assert capsys.readouterr().out.split() == ["chapters/good/01_ok.md", "chapters/bad/01_fails.md"]


def test_bad_scale_stops_the_notebook_with_the_message(minibook):
    report = build(BuildOptions(root=minibook, render=False, only=["good"]))
    assert report["notebooks"][0]["status"] == "ok"
    nb = minibook / "chapters" / "good" / "01_ok.md"
    nb.write_text(nb.read_text().replace('scale = "ci"', 'scale = "huge"').replace(
        "run = setup(scale=scale", "run = setup(scale='huge'"))
    failed = build(BuildOptions(root=minibook, render=False, only=["good"]))["notebooks"][0]
    assert failed["status"] == "failed"
    assert "BookParameterError: scale='huge' is not a scale of this book; use one of 'ci', 'full'" in failed["error"]


@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / "node_modules" / "mathjax").is_dir(),
                    reason="needs node_modules/mathjax (npm ci)")
def test_render_shows_the_good_page_and_fills_the_claims_table(minibook):
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
def test_a_render_warning_fails_the_build_and_keeps_failing_until_fixed(minibook):
    intro = minibook / "chapters" / "intro.md"
    intro.write_text(intro.read_text() + "\nSee {doc}`no-such-page`.\n")
    first = build(BuildOptions(root=minibook, only=["good"]))
    assert not first["render"]["ok"] and "unknown document" in first["render"]["log"]
    again = build(BuildOptions(root=minibook, only=["good"]))  # nothing changed: the warning must not be forgotten
    assert not again["render"]["ok"] and not succeeded(again)
    intro.write_text(intro.read_text().replace("See {doc}`no-such-page`.", ""))
    assert build(BuildOptions(root=minibook, only=["good"]))["render"]["ok"]
