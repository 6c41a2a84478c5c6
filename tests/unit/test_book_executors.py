"""The Dask executor and the seed sweep on the fixture book (repro.book.executors, repro.book.seeds,
repro.book.robustness): the same report as the local executor, a worker killed mid-notebook retried once or
reported as failed while every other notebook keeps its output, and a claim that fails at one seed listed as fragile."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from repro.book.build import BuildOptions, build, succeeded
from repro.book.cli import main
from repro.book.pages import fill_markers
from repro.book.records import read_seed_records
from repro.book.seeds import chapter_seeds, parse_seeds, sweep

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "minibook"

NOTEBOOK = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# {title}

```{{code-cell}} ipython3
:tags: [parameters]
scale = "ci"
seed = 0
device = "cpu"
```

```{{code-cell}} ipython3
{body}
```
"""

# The kernel's parent is the `repro.book.execute` process, whose parent is the Dask worker: kill that worker, the
# first time only (a marker file beside the notebook remembers), or every time.
KILL_WORKER = """import pathlib, psutil
marker = pathlib.Path("{marker}")
if {always} or not marker.exists():
    marker.write_text("killed once")
    psutil.Process().parent().parent().kill()
    import time; time.sleep(30)
print("survived")"""

FLAKY = """from repro.book import Ledger, setup
run = setup(scale=scale, seed=seed, device=device)
Ledger("flaky").check("seed-is-positive", kind="ours", observed=float(run.seed), at_least=1,
                      says="the seed is at least one")"""


def _book(tmp_path: Path, extra: dict[str, dict[str, str]], root: Path) -> Path:
    """The fixture book plus chapters {slug: {notebook stem: code}} added to its toc."""
    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    (book / "lib" / "repro").mkdir(parents=True)
    (book / "lib" / "repro" / "stand_in.py").write_text("VALUE = 1\n")
    (book / "requirements.lock").write_text("")
    toc = (book / "_toc.yml").read_text()
    for slug, pages in extra.items():
        chapter = book / "chapters" / slug
        chapter.mkdir()
        (chapter / "index.md").write_text(f"---\ncourse:\n  level: introductory\n  prerequisites: none\n---\n# {slug}\n")
        toc += f"  - file: chapters/{slug}/index\n    sections:\n"
        for stem, body in pages.items():
            (chapter / f"{stem}.md").write_text(NOTEBOOK.format(title=f"{slug} {stem}", body=body))
            toc += f"      - file: chapters/{slug}/{stem}\n"
    (book / "_toc.yml").write_text(toc)
    if (root / "node_modules").is_dir():
        (book / "node_modules").symlink_to(root / "node_modules")
    return book


def _comparable(report: dict) -> list[tuple]:
    return [(nb["path"], nb["status"], nb["error"], json.dumps(nb["claims"], sort_keys=True))
            for nb in report["notebooks"]]


@pytest.mark.slow
def test_the_dask_executor_gives_the_same_report_as_the_local_one(tmp_path, root):
    book = _book(tmp_path, {}, root)
    local = build(BuildOptions(root=book, jobs=2, render=False))
    executed = book / "_build" / "executed" / "chapters" / "good" / "01_ok.ipynb"
    local_nb = json.loads(executed.read_text())
    executed.unlink()
    dask = build(BuildOptions(root=book, jobs=2, render=False, force=True, executor="dask"))
    assert _comparable(dask) == _comparable(local)
    assert [nb["status"] for nb in dask["notebooks"]] == ["ok", "failed"]
    dask_nb = json.loads(executed.read_text())   # written back from the worker's bytes
    assert [c["source"] for c in dask_nb["cells"]] == [c["source"] for c in local_nb["cells"]]
    again = build(BuildOptions(root=book, jobs=2, render=False, executor="dask", only=["good"]))
    assert again["notebooks"][0]["status"] == "cached"   # the dask run filled the cache


@pytest.mark.slow
def test_a_killed_worker_is_retried_once_then_reported_and_the_others_keep_their_output(tmp_path, root):
    once, always = tmp_path / "once.marker", tmp_path / "always.marker"
    book = _book(tmp_path, {"dies": {"01_once": KILL_WORKER.format(marker=once, always=False),
                                     "02_always": KILL_WORKER.format(marker=always, always=True)}}, root)
    report = build(BuildOptions(root=book, jobs=2, render=False, executor="dask"))
    nbs = {nb["path"]: nb for nb in report["notebooks"]}
    assert nbs["chapters/dies/01_once.md"]["status"] == "ok", nbs["chapters/dies/01_once.md"]["error"]
    assert once.exists()
    failed = nbs["chapters/dies/02_always.md"]
    assert failed["status"] == "failed" and "died" in failed["error"] and "retried" in failed["error"]
    assert nbs["chapters/good/01_ok.md"]["status"] == "ok" and nbs["chapters/good/01_ok.md"]["claims"]
    assert nbs["chapters/bad/01_fails.md"]["status"] == "failed"
    assert "fails on purpose" in nbs["chapters/bad/01_fails.md"]["error"]
    executed = book / "_build" / "executed" / "chapters"
    assert (executed / "good" / "01_ok.ipynb").exists() and (executed / "dies" / "01_once.ipynb").exists()
    assert not succeeded(report)


def test_bad_executor_options_get_clear_errors(tmp_path, root, capsys):
    book = _book(tmp_path, {}, root)
    with pytest.raises(ValueError, match="add --executor dask"):
        build(BuildOptions(root=book, render=False, only=["good"], scheduler="tcp://127.0.0.1:1"))
    import time

    from repro.book.executors import PORT_PROBE_S, _port_accepts

    started = time.perf_counter()
    assert main(["--root", str(book), "build", "--no-render", "--only", "good", "--executor", "dask",
                 "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "no Dask scheduler answered there" in capsys.readouterr().err
    assert time.perf_counter() - started < PORT_PROBE_S + 3   # a refused port answers at once, no 20 s connect wait
    assert "tcp://HOST:PORT" in _port_accepts("tcp://nohost")


def test_parse_seeds():
    assert parse_seeds("0-9") == list(range(10))
    assert parse_seeds("0,3,5-7") == [0, 3, 5, 6, 7]
    assert parse_seeds("2") == [2]
    for bad in ("", "a-b", "5-2", "1,,2"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)


def _commit_all(book: Path) -> None:
    def git(*args):
        subprocess.run(["git", *args], cwd=book, check=True, capture_output=True, text=True)

    if not (book / ".git").exists():
        git("init", "-q")
    (book / ".gitignore").write_text("_build/\nnode_modules\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture")


@pytest.mark.slow
def test_a_claim_that_fails_at_one_seed_is_listed_as_fragile_and_recorded(tmp_path, root, capsys):
    book = _book(tmp_path, {"flaky": {"01_flaky": FLAKY}}, root)
    index = book / "chapters" / "good" / "index.md"
    index.write_text(index.read_text().replace("---\n#", "seeds:\n  only: [0, 1]\n  why: it ships two runs\n---\n#", 1))
    _commit_all(book)
    assert chapter_seeds(book, "good", [0, 1, 2]) == ([0, 1], "it ships two runs")
    result = sweep(BuildOptions(root=book, jobs=2, render=False, only=["good", "flaky"]), parse_seeds("0-2"))
    flaky = result["chapters"]["flaky"]["claims"][0]
    assert flaky["holds"] == {"0": False, "1": True, "2": True} and flaky["fragile"] and not flaky["as_expected"]
    assert flaky["held"] == 2 and flaky["observed"] == {"0": 0.0, "1": 1.0, "2": 2.0}
    good = result["chapters"]["good"]
    assert good["seeds"] == [0, 1] and good["why"] == "it ships two runs"
    assert good["claims"][0]["as_expected"] and not good["claims"][0]["fragile"]
    assert json.loads((book / "_build" / "seeds.json").read_text())["chapters"]["flaky"]["claims"][0]["fragile"]
    # the CLI: the table lists the fragile claim first, the run is cached, --record writes a record per chapter
    capsys.readouterr()
    assert main(["--root", str(book), "seeds", "--seeds", "0-2", "--only", "flaky", "good", "--record"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("flaky") and "NO (fragile)" in out
    assert "running" not in out   # every (notebook, seed) came from the cache
    records = read_seed_records(book)
    assert set(records) == {"good", "flaky"} and records["flaky"]["seeds"] == [0, 1, 2]
    assert records["flaky"]["command"] == "python -m repro.book seeds --seeds 0-2 --only flaky --scale ci --record"
    # the record does not change the cache key (no notebook reads it), and the generated pages show it
    report = build(BuildOptions(root=book, render=False, only=["flaky"]))
    assert report["notebooks"][0]["status"] == "cached" and set(report["seed_runs"]) == {"good", "flaky"}
    page = fill_markers("<!-- repro:robustness -->", report)
    assert page.index("seed-is-positive") < page.index("## Every swept claim")   # fragile first
    assert "(robustness-flaky)=" in page and "Only these seeds: it ships two runs." in page
    line = fill_markers("<!-- repro:claims flaky -->", report)
    assert "Across 3 seeds" in line and "fragile: `seed-is-positive`" in line and "robustness-flaky" in line


@pytest.mark.slow
def test_a_sweep_with_a_failed_run_records_nothing(tmp_path, root, capsys):
    book = _book(tmp_path, {}, root)
    _commit_all(book)
    assert main(["--root", str(book), "seeds", "--seeds", "0", "--only", "bad", "--record"]) == 1
    out = capsys.readouterr().out
    assert "failed: chapters/bad/01_fails.md at seed 0" in out and "NOT RECORDED" in out
    assert not (book / "data" / "bad" / "seeds-run.json").exists()


# A notebook that hangs on its first try only (a marker file beside it remembers), or on every try.
HANG = """import pathlib, time
marker = pathlib.Path("{marker}")
if {always} or not marker.exists():
    marker.write_text("hung once")
    time.sleep(60)
print("went on")"""


#: Long enough for the kernel to start and reach the hanging cell on a loaded 2-core machine, short enough not to wait.
HANG_TIMEOUT_S = 8


@pytest.mark.slow
@pytest.mark.parametrize("always", [False, True])
def test_a_notebook_that_times_out_is_tried_once_more_and_the_stuck_cell_is_named(tmp_path, always):
    from repro.book.execute import execute

    source = tmp_path / "hang.md"
    source.write_text(NOTEBOOK.format(title="Hangs", body=HANG.format(marker=tmp_path / "marker", always=always)))
    result = execute(source, tmp_path / "out" / "hang.ipynb", {"scale": "ci", "seed": 0, "device": "cpu"},
                     threads=1, timeout=HANG_TIMEOUT_S, name="hang.md")
    assert f"try 1 timed out after {HANG_TIMEOUT_S} s, in cell 3: import pathlib, time" in result.note  # papermill adds cell 2
    if always:
        assert result.status == "failed" and "try 2 timed out" in result.error
    else:
        assert result.status == "ok" and not result.error and "try 2" not in result.note


def test_the_build_summary_ends_with_what_failed_or_was_retried():
    from repro.book.cli import summary

    nbs = [{"path": "a.md", "status": "failed", "seconds": 1.0, "error": "cell 3: ValueError: bad"},
           {"path": "b.md", "status": "ok", "seconds": 2.0, "error": "", "note": "try 1 timed out after 600 s"},
           {"path": "c.md", "status": "ok", "seconds": 3.0, "error": ""}]
    tail = summary({"notebooks": nbs, "seconds": 6.0, "scale": "ci"}).splitlines()[-2:]
    assert tail == ["FAILED a.md: cell 3: ValueError: bad", "retried b.md: try 1 timed out after 600 s"]
