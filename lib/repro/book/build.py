"""`python -m repro.book build`: execute, cache, stage, render, report (DESIGN.md §2).

One failing notebook never stops the others: each runs in its own process, its error is recorded with the cell that
failed, the rest still execute and render, and the exit status is non-zero.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from ..common.timing import stopwatch
from .authors import read_authors_records
from .cache import Cache, cache_key
from .course import chapter_facts
from .execute import Execution
from .executors import Job, run_jobs
from .machine import available_cores, environment
from .params import check_parameters
from .records import read_record, read_seed_records, write_records
from .render import render
from .stage import stage_files, sync_stage
from .toc import Page, notebooks

TIMEOUT_S = {"ci": 600, "full": 4 * 3600}


@dataclass
class BuildOptions:
    root: Path
    scale: str = "ci"
    seed: int = 0
    device: str = "cpu"
    jobs: int = 1
    only: list | None = None
    force: bool = False
    render: bool = True
    record: bool = False
    executor: str = "local"
    scheduler: str | None = None

    @property
    def build_dir(self) -> Path:
        return self.root / "_build"


def _params(opts: BuildOptions) -> dict:
    return {"scale": opts.scale, "seed": opts.seed, "device": opts.device}


def _entry(page: Page, opts: BuildOptions, key: str) -> dict:
    return {"path": page.source.relative_to(opts.root).as_posix(), "chapter": page.chapter, "key": key}


def _from_cache(page: Page, opts: BuildOptions, cache: Cache, key: str, hit: dict) -> dict:
    target = opts.build_dir / "executed" / f"{page.name}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cache.notebook(key), target)
    return {**_entry(page, opts, key), "seconds": hit["seconds"], "status": "cached", "error": "",
            "claims": hit["claims"]}


def _job(page: Page, opts: BuildOptions, params: dict, key: str, output: Path, threads: int) -> Job:
    return Job(root=opts.root, source=page.source, output=output, params=params, threads=threads,
               timeout=TIMEOUT_S[opts.scale], name=page.source.relative_to(opts.root).as_posix(), key=key)


def _announce(job: Job) -> None:
    seed = f"seed {job.params['seed']}, " if job.params["seed"] else ""
    print(f"  running {job.name} ({seed}{job.threads} thread{'s' if job.threads > 1 else ''})", flush=True)


def _finished(cache: Cache) -> Callable[[Job, Execution], None]:
    """What happens when a job ends: a good run goes into the cache, and the end is printed."""
    def done(job: Job, result: Execution) -> None:
        if result.status == "ok":
            cache.put(job.key, job.output, {"seconds": result.seconds, "claims": result.claims})
        seed = f" (seed {job.params['seed']})" if job.params["seed"] else ""
        print(f"  {result.status:6s} {job.name}{seed} in {result.seconds:.1f} s"
              + (f": {result.error}" if result.error else "") + (f" ({result.note})" if result.note and
                                                                  result.status == "ok" else ""), flush=True)
    return done


def execute_pages(plan: list[tuple[Page, list[int]]], opts: BuildOptions, output_dir) -> list[dict]:
    """Execute (or take from the cache) each page of `plan` at each of its seeds, in one batch of jobs for
    `opts.executor`; `output_dir(seed)` is where that seed's executed notebooks go. One entry per (page, seed)."""
    cache = Cache(opts.build_dir / "cache")
    threads = max(1, available_cores() // opts.jobs)
    entries, jobs, slots = [], [], []
    for page, seeds in plan:
        for seed in seeds:
            params = {**_params(opts), "seed": seed}
            key = cache_key(page.source, params, opts.root)
            output = output_dir(seed) / f"{page.name}.ipynb"
            hit = None if opts.force else cache.get(key)
            entry = {**_entry(page, opts, key), "seed": seed}
            if hit:
                output.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(cache.notebook(key), output)
                entry.update(seconds=hit["seconds"], status="cached", error="", claims=hit["claims"])
            else:
                jobs.append(_job(page, opts, params, key, output, threads))
                slots.append(len(entries))
            entries.append(entry)
    results = run_jobs(jobs, executor=opts.executor, workers=opts.jobs, scheduler=opts.scheduler,
                       on_start=_announce, on_done=_finished(cache))
    for slot, result in zip(slots, results):
        entries[slot].update(seconds=result.seconds, status=result.status, error=result.error, claims=result.claims,
                             **({"note": result.note} if result.note else {}))
    return entries


def _cached_others(opts: BuildOptions, cache: Cache, selected: list[Page]) -> list[dict]:
    """With --only, the other chapters' notebooks come from the cache where their key is there (never re-run)."""
    chosen = {p.name for p in selected}
    entries = []
    for page in notebooks(opts.root):
        key = cache_key(page.source, _params(opts), opts.root)
        hit = cache.get(key) if page.name not in chosen else None
        if hit:
            entries.append(_from_cache(page, opts, cache, key, hit))
    return entries


def _prune_executed(executed_dir: Path, keep: set[str]) -> None:
    """Remove executed notebooks that this build did not produce (renamed or removed sources, other scales), so that
    nbval and the stage see exactly this build's notebooks."""
    for path in executed_dir.rglob("*") if executed_dir.is_dir() else []:
        if path.is_file() and path.suffix in (".ipynb", ".jsonl", ".txt"):
            source = path.relative_to(executed_dir).as_posix().split(".")[0] + ".md"
            if source not in keep:
                path.unlink()


def execute_all(opts: BuildOptions) -> list[dict]:
    """Execute (or take from the cache) every selected notebook, `opts.jobs` at a time, with `opts.executor`."""
    check_parameters(opts.scale, opts.seed, opts.device)
    if opts.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {opts.jobs}")
    selected = notebooks(opts.root, opts.only)
    entries = execute_pages([(page, [opts.seed]) for page in selected], opts, lambda seed: opts.build_dir / "executed")
    for entry in entries:
        del entry["seed"]
    if opts.only:
        entries += _cached_others(opts, Cache(opts.build_dir / "cache"), selected)
    else:
        _prune_executed(opts.build_dir / "executed", {e["path"] for e in entries})
    order = {p.name: i for i, p in enumerate(notebooks(opts.root))}
    return sorted(entries, key=lambda e: order[str(Path(e["path"]).with_suffix(""))])


def _last_render_ok(build_dir: Path) -> bool:
    """Whether the previous build's render succeeded (False when there was none or it failed)."""
    try:
        return bool(json.loads((build_dir / "report.json").read_text())["render"]["ok"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def check_record_options(opts: BuildOptions) -> None:
    """`--record` needs `--scale full` and `--only` (a record is made for each chapter named there)."""
    if not opts.record:
        return
    if opts.scale != "full":
        raise ValueError("--record keeps the evidence of full-scale runs: add --scale full")
    if not opts.only:
        raise ValueError("--record needs --only SLUG… (the chapters whose data/<slug>/full-run.json to write)")
    if opts.seed != 0:
        raise ValueError("--record keeps the default seed's run (seed 0); drop --seed")


def full_runs(root: Path) -> dict:
    """Every chapter's full-run record ({slug: record}; chapters without one are left out)."""
    slugs = sorted({page.chapter for page in notebooks(root)})
    return {slug: record for slug in slugs if (record := read_record(root, slug))}


def build(opts: BuildOptions) -> dict:
    """Run the whole pipeline; return the report (also written to `_build/report.json`)."""
    check_record_options(opts)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with stopwatch() as watch:
        course = chapter_facts(opts.root)   # before anything runs: a chapter without its course metadata stops here
        entries = execute_all(opts)
        report = {"scale": opts.scale, "seed": opts.seed, "device": opts.device, "jobs": opts.jobs, "started": started,
                  "notebooks": entries, "environment": environment()}
        if opts.record:
            try:
                written = write_records(opts.only, entries, report, opts.root)
                report["recorded"] = [p.relative_to(opts.root).as_posix() for p in written]
            except ValueError as err:  # a failed notebook or uncommitted code: no record, and the build fails
                report["record_error"] = str(err)
        report["full_runs"] = full_runs(opts.root)
        report["seed_runs"] = read_seed_records(opts.root)
        report["authors_code"] = read_authors_records(opts.root)
        report["course"] = course
        if opts.render:
            executed = {str(Path(e["path"]).with_suffix("")): opts.build_dir / "executed" /
                        Path(e["path"]).with_suffix(".ipynb") for e in entries}
            sync_stage(opts.build_dir / "stage", stage_files(opts.root, executed, report))
            ok, log = render(opts.build_dir / "stage", opts.root, everything=not _last_render_ok(opts.build_dir))
            report["render"] = {"ok": ok, "log": log}
    report["seconds"] = round(watch.seconds, 1)
    opts.build_dir.mkdir(exist_ok=True)
    (opts.build_dir / "report.json").write_text(json.dumps(report, indent=1))
    return report


def succeeded(report: dict) -> bool:
    """True when every notebook ran (or was cached) and the render, if any, succeeded."""
    return (all(nb["status"] != "failed" for nb in report["notebooks"])
            and report.get("render", {"ok": True})["ok"] and not report.get("record_error"))
