"""Seed sweeps (DESIGN.md §4; chapters/appendix/robustness.md): `python -m repro.book seeds --seeds 0-9`.

A claim that holds at one seed is an anecdote. The sweep runs every notebook of the chosen chapters at each seed
(no render; cached per notebook and seed like the build; on the local executor or a Dask cluster) and writes
`_build/seeds.json`: for each claim its kind, the verdict the chapter expects, its verdict and observed value at each
seed, and whether the verdict was the expected one at every seed. With `--record` it also writes
`data/<slug>/seeds-run.json` for each chapter, naming the commit it ran from, as the full-run record does; the
robustness page of the appendix is generated from those records.

A chapter that can run only some seeds (it reads training runs shipped for seeds 0, 1, 2 at ci, say) declares them in
the front matter of its `index.md`, and the sweep runs those only, saying why:

    seeds:
      only: [0, 1, 2]
      why: its ci notebooks read the training runs shipped for these seeds (data/moe-grokking/runs/seed<k>-*.npz)
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from ..common.timing import stopwatch
from .build import BuildOptions, environment, execute_pages
from .verdicts import UNTESTABLE, expected_outcome, outcome
from .course import front_matter
from .params import check_parameters
from .toc import notebooks

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_seeds(spec: str) -> list[int]:
    """'0-9' → 0..9, '0,3,5-7' → [0, 3, 5, 6, 7]; a clear ValueError for anything else."""
    seeds: list[int] = []
    for part in str(spec).split(","):
        match = _RANGE.match(part.strip())
        if not match:
            raise ValueError(f"--seeds {spec!r}: write seeds as a range and/or a list, e.g. 0-9 or 0,1,2 or 0-4,7")
        lo, hi = int(match.group(1)), int(match.group(2) or match.group(1))
        if hi < lo:
            raise ValueError(f"--seeds {spec!r}: the range {part.strip()} runs backwards")
        seeds += [s for s in range(lo, hi + 1) if s not in seeds]
    return seeds


def chapter_seeds(root: Path, slug: str, wanted: list[int]) -> tuple[list[int], str]:
    """The seeds of `wanted` that chapter `slug` can run, and why it runs fewer (from its index.md front matter)."""
    meta = front_matter(Path(root) / "chapters" / slug / "index.md").get("seeds") or {}
    if not meta:
        return list(wanted), ""
    only, why = meta.get("only"), meta.get("why")
    if not isinstance(only, list) or not all(isinstance(s, int) for s in only) or not isinstance(why, str):
        raise ValueError(f"chapters/{slug}/index.md: `seeds:` needs `only: [seeds…]` and `why: <text>` "
                         "(see lib/repro/book/seeds.py)")
    return [s for s in wanted if s in only], why.strip()


def _verdicts(entries: list[dict], seeds: list[int]) -> list[dict]:
    """Per claim (in the notebooks' order): kind, expect, says, and at each seed its verdict and observed value."""
    claims: dict[str, dict] = {}
    for entry in entries:
        for c in entry.get("claims", []):
            row = claims.setdefault(c["id"], {"id": c["id"], "kind": c.get("kind", "paper"), "says": c.get("says", ""),
                                              "expect": c.get("expect", True), "notebook": entry["path"],
                                              "holds": {}, "observed": {}})
            row["holds"][str(entry["seed"])] = c["holds"] if c["holds"] is None else bool(c["holds"])
            row["observed"][str(entry["seed"])] = c.get("observed")
    for row in claims.values():
        ran = [s for s in seeds if str(s) in row["holds"]]
        verdicts = [outcome(row["holds"][str(s)]) for s in ran]
        row["missing"] = [s for s in seeds if s not in ran]
        row["held"] = verdicts.count("held")
        row["untestable_at"] = verdicts.count(UNTESTABLE)
        row["fragile"] = len(set(verdicts)) > 1
        row["as_expected"] = not row["missing"] and all(v == expected_outcome(row["expect"]) for v in verdicts)
    return list(claims.values())


def summarise(root: Path, entries: list[dict], chapters: dict[str, tuple[list[int], str]]) -> dict:
    """The sweep's result per chapter: its seeds, why fewer, its notebooks' runs and its claims (`_verdicts`)."""
    out = {}
    for slug, (seeds, why) in chapters.items():
        mine = [e for e in entries if e["chapter"] == slug]
        out[slug] = {"seeds": seeds, "why": why,
                     "runs": [{"path": e["path"], "seed": e["seed"], "status": e["status"], "seconds": e["seconds"],
                               "error": e["error"]} for e in mine],
                     "claims": _verdicts(mine, seeds)}
    return out


def sweep(opts: BuildOptions, seeds: list[int]) -> dict:
    """Run the chosen chapters' notebooks at every seed; return (and write to `_build/seeds.json`) the sweep."""
    for seed in seeds:
        check_parameters(opts.scale, seed, opts.device)
    if not seeds:
        raise ValueError("--seeds: no seed to run")
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with stopwatch() as watch:
        pages = notebooks(opts.root, opts.only)
        chapters = {slug: chapter_seeds(opts.root, slug, seeds) for slug in dict.fromkeys(p.chapter for p in pages)}
        plan = [(page, chapters[page.chapter][0]) for page in pages]   # one batch: the executor sees every job at once
        entries = execute_pages(plan, opts, lambda s: opts.build_dir / "seeds" / f"seed{s}")
    result = {"scale": opts.scale, "seeds": seeds, "device": opts.device, "executor": opts.executor,
              "jobs": opts.jobs, "started": started, "seconds": round(watch.seconds, 1),
              "environment": environment(), "chapters": summarise(opts.root, entries, chapters)}
    opts.build_dir.mkdir(exist_ok=True)
    (opts.build_dir / "seeds.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return result
