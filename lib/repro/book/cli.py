"""The command line: `python -m repro.book build [--scale ci|full] [--jobs N] [--only SLUG…] [--force] [--record]
[--executor local|dask [--scheduler ADDRESS]]`, `seeds --seeds 0-9 [--only SLUG…] [--record]` (a seed sweep, see
`repro.book.seeds`), `list`, `pdf` (the built book as one PDF), and `ship SLUG [--seed N] [--allow-dirty]` (remake a
chapter's shipped models or run logs, see `repro.book.ship`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..common.timing import stopwatch
from .build import BuildOptions, build, succeeded
from .executors import EXECUTORS
from .machine import available_cores
from .params import BookParameterError, DEVICES, SCALES
from .records import failed_runs, write_seed_records
from .render import render_pdf
from .seeds import parse_seeds, sweep
from .ship import SHIPPERS, ship
from .toc import notebooks
from .verdicts import KINDS, as_expected, expected_outcome, format_value, outcome


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m repro.book", description="Build and check the book.")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the book's root folder (default: here)")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="execute the notebooks (cached), stage and render the book")
    b.add_argument("--scale", choices=SCALES, default="ci")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--device", choices=DEVICES, default="cpu")
    b.add_argument("--jobs", type=int, default=min(2, available_cores()), help="notebooks run at once")
    b.add_argument("--only", nargs="+", metavar="SLUG", help="execute only these chapters")
    b.add_argument("--force", action="store_true", help="ignore the cache")
    b.add_argument("--no-render", action="store_true", help="execute only; skip staging and rendering")
    b.add_argument("--record", action="store_true",
                   help="with --scale full --only SLUG…: write data/<slug>/full-run.json, the run's evidence")
    _executor_arguments(b)
    s = sub.add_parser("seeds", help="run chapters at many seeds (no render) and report each claim's verdicts")
    s.add_argument("--seeds", required=True, help="e.g. 0-9, or 0,1,2, or 0-4,7")
    s.add_argument("--scale", choices=SCALES, default="ci")
    s.add_argument("--device", choices=DEVICES, default="cpu")
    s.add_argument("--jobs", type=int, default=min(2, available_cores()), help="notebooks run at once")
    s.add_argument("--only", nargs="+", metavar="SLUG", help="sweep only these chapters")
    s.add_argument("--force", action="store_true", help="ignore the cache")
    s.add_argument("--record", action="store_true", help="write data/<slug>/seeds-run.json for each chapter")
    _executor_arguments(s)
    sub.add_parser("list", help="list the notebooks in reading order")
    sub.add_parser("pdf", help="the built book as one PDF, _build/latex/book.pdf (after build; needs TeX)")
    h = sub.add_parser("ship", help="retrain and rewrite a chapter's shipped models or run logs under data/ (CPU-hours "
                                    "for some); refuses uncommitted code")
    h.add_argument("slug", metavar="SLUG", help=f"one of: {', '.join(SHIPPERS)}")
    h.add_argument("--seed", type=int, help="only this seed's files (chapters that ship one file set per seed)")
    h.add_argument("--allow-dirty", action="store_true",
                   help="write even when lib/ or requirements.lock differ from the commit (recorded as dirty: true)")
    return parser


def _executor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--executor", choices=EXECUTORS, default="local",
                        help="local: --jobs notebooks at once here; dask: each notebook a task on a Dask cluster")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="with --executor dask: a running scheduler (tcp://host:8786); default: a LocalCluster "
                             "of --jobs workers on this machine")


def seeds_summary(result: dict) -> str:
    """The table printed at the end of a seed sweep: per claim, held at k of n seeds; fragile claims first."""
    lines = [f"{'chapter':26s} {'claim':40s} {'kind':6s} held  expected at every seed"]
    rows = [(slug, c) for slug, ch in result["chapters"].items() for c in ch["claims"]]
    for slug, c in sorted(rows, key=lambda r: not r[1]["fragile"]):
        n = len(result["chapters"][slug]["seeds"])
        mark = "yes" if c["as_expected"] else "NO" + (" (fragile)" if c["fragile"] else "")
        lines.append(f"{slug:26s} {c['id'][:40]:40s} {c['kind']:6s} {c['held']:>2d}/{n:<2d} {mark}")
    for slug, ch in result["chapters"].items():
        if ch["why"]:
            lines.append(f"{slug}: seeds {', '.join(map(str, ch['seeds']))} only: {ch['why']}")
    lines += [f"failed: {f}" for f in failed_runs(result)]
    lines += [f"recorded {path}" for path in result.get("recorded", [])]
    if result.get("record_error"):
        lines.append(f"NOT RECORDED: {result['record_error']}")
    lines.append(f"total {result['seconds']:.1f} s at scale={result['scale']} with the {result['executor']} executor "
                 f"(--jobs {result['jobs']}); _build/seeds.json has every value")
    return "\n".join(lines)


def _seeds(args, root: Path) -> int:
    opts = BuildOptions(root=root, scale=args.scale, device=args.device, jobs=args.jobs, only=args.only,
                        force=args.force, render=False, executor=args.executor, scheduler=args.scheduler)
    result = sweep(opts, parse_seeds(args.seeds))
    if args.record:
        try:
            result["recorded"] = [p.relative_to(root).as_posix() for p in write_seed_records(result, root)]
        except ValueError as err:
            result["record_error"] = str(err)
    print(seeds_summary(result))
    return 1 if failed_runs(result) or result.get("record_error") else 0


def summary(report: dict) -> str:
    """The table printed at the end of a build."""
    lines = [f"{'notebook':52s} {'status':7s} {'seconds':>8s}  held/stated: paper  ours  checks"]
    for nb in report["notebooks"]:
        claims = nb.get("claims", [])
        counts = "  ".join(f"{sum(c['holds'] is True for c in claims if c.get('kind') == k)}/"
                           f"{sum(c.get('kind') == k for c in claims)}" for k in KINDS)
        lines.append(f"{nb['path']:52s} {nb['status']:7s} {nb['seconds']:8.1f}  {counts}")
        if nb.get("error"):
            lines.append(f"    error: {nb['error']}")
        for c in claims:
            if not as_expected(c):
                lines.append(f"    claim {c['id']}: {outcome(c['holds'])} but the chapter expects "
                             f"{expected_outcome(c.get('expect', True))} "
                             f"(observed {format_value(c['observed'])})")
    render = report.get("render")
    if render is not None:
        lines.append("render: ok" if render["ok"] else "render: FAILED\n" + render["log"])
    lines += [f"recorded {path}" for path in report.get("recorded", [])]
    if report.get("record_error"):
        lines.append(f"NOT RECORDED: {report['record_error']}")
    lines.append(f"total {report['seconds']:.1f} s at scale={report['scale']}")
    # repeated last, so that a log cut to its tail (as CI shows it) still names what failed or was retried
    lines += [f"FAILED {nb['path']}: {nb.get('error') or 'no error message'}" for nb in report["notebooks"]
              if nb["status"] == "failed"]
    lines += [f"retried {nb['path']}: {nb['note']}" for nb in report["notebooks"]
              if nb.get("note") and nb["status"] != "failed"]
    return "\n".join(lines)


def _pdf(root: Path) -> int:
    with stopwatch() as watch:
        ok, log, pdf = render_pdf(root / "_build" / "stage", root)
    if not ok:
        print("pdf: FAILED\n" + log, file=sys.stderr)
        return 1
    print(f"pdf: {pdf} ({pdf.stat().st_size / 1e6:.1f} MB) in {watch.seconds:.0f} s")
    return 0


def _ship(args, root: Path) -> int:
    with stopwatch() as watch:
        for path in ship(args.slug, args.seed, args.allow_dirty, root):
            print(f"wrote {path}")
    print(f"ship {args.slug}: {watch.seconds:.0f} s")
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    root = args.root.resolve()
    try:
        if args.command == "list":
            for page in notebooks(root):
                print(page.source.relative_to(root).as_posix())
            return 0
        if args.command == "pdf":
            return _pdf(root)
        if args.command == "ship":
            return _ship(args, root)
        if args.command == "seeds":
            return _seeds(args, root)
        opts = BuildOptions(root=root, scale=args.scale, seed=args.seed, device=args.device, jobs=args.jobs,
                            only=args.only, force=args.force, render=not args.no_render, record=args.record,
                            executor=args.executor, scheduler=args.scheduler)
        report = build(opts)
    except (BookParameterError, ValueError, FileNotFoundError) as err:
        print(f"repro.book: {err}", file=sys.stderr)
        return 2
    print(summary(report))
    if report.get("render", {}).get("ok"):
        print(f"book: {root / '_build' / 'html' / 'index.html'}")
    return 0 if succeeded(report) else 1
