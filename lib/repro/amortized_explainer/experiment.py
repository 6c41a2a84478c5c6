"""The chapter's experiment on one task and one seed: priors, the filtered pool, five trained explainers, the ten
metrics under two baselines, mean ranks and the time per explained input.

Explained in chapters/amortized-explainer/02_experiments.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .faithfulness.metrics import METRICS, evaluate, mean_ranks
from ..common.checks import check_choice, check_int
from ..common.timing import stopwatch
from .explainer import DynamicAlpha, Explainer, tokens, train_explainer
from .priors import PRIORS, explain, explain_all
from .supervision import dedup, filter_maps, pool
from .tasks import make_task

__all__ = ["SIZES", "SETTINGS", "LEARNED", "TaskResult", "run_task", "time_per_input", "pool_fc_gain_ci",
           "worst_gap_ci"]

#: What changes with the scale.
SIZES = {"ci": dict(n_train=100, n_test=40, epochs=30, batch=25, target_steps=300),
         "full": dict(n_train=200, n_test=80, epochs=60, batch=25, target_steps=300)}
#: What does not (fixed on development seed 100).
SETTINGS = dict(delta=0.6, p=0.2, k=16, lr=1e-3, width=32, layers=2, heads=4, eps=1e-4, window=5, c=10.0,
                n_subsets=100, noise_sd=1.0, timing_repeats=10,
                timing_rows=512)
#: The learned explainers, as (label, loss, pool).
LEARNED = (("DeepFaith", "obj", "filtered"), ("L_PC only", "pc", "filtered"), ("L_LC only", "lc", None),
           ("L_PC unfiltered", "pc", "unfiltered"), ("L2E (IG teacher)", "pc", "IG"))


@dataclass
class TaskResult:
    """Everything one task's run produced (see ``run_task``); explained in chapters/amortized-explainer/02_experiments.md."""

    name: str
    accuracy: float
    n_train: int
    n_test: int
    n_groups: int
    kept: dict              # maps kept per prior: after dedup, after the filter
    pool_fc: dict           # mean FC of the pool's maps: unfiltered (after dedup) and filtered
    logs: dict              # label -> TrainLog
    scores: dict            # baseline -> method -> metric -> mean over test inputs
    ranks: dict             # baseline -> method -> mean rank
    per_metric_ranks: dict  # baseline -> metric -> method -> rank
    seconds: dict           # method -> seconds per explained input (batched)
    train_seconds: dict     # label -> seconds to train
    item_scores: dict = None  # baseline -> method -> metric -> (n_test,) scores per test input (for intervals)
    pool_items: dict = None   # FC of every prior's map per training input (n_train, n_priors), masks dedup, filtered


def time_per_input(fn, n: int, repeats: int = 3) -> float:
    """The smallest of ``repeats`` wall times of ``fn()``, divided by ``n`` inputs.

    Explained in chapters/amortized-explainer/02_experiments.md.
    """
    best = float("inf")
    for _ in range(check_int("repeats", repeats)):
        with stopwatch() as watch:
            fn()
        best = min(best, watch.seconds)
    return best / n


def _pool_stack(attrs, keys):
    return torch.stack([attrs[k] for k in keys], 1)


def run_task(name: str, scale: str = "ci", seed: int = 0, settings: dict | None = None) -> TaskResult:
    """Run the chapter's experiment on task ``name`` at ``scale`` with ``seed``.

    Explained in chapters/amortized-explainer/02_experiments.md.
    """
    check_choice("scale", scale, tuple(SIZES))
    z, st = SIZES[scale], {**SETTINGS, **(settings or {})}
    seed = check_int("seed", seed, 0)
    task = make_task(name, z["n_train"], z["n_test"], seed=seed, steps=z["target_steps"])
    ref = task.x_train[:20]
    pools, kept, pool_fc, pool_items = _prior_pools(task, ref, st, seed)
    logs, learned, train_secs, deepfaith = _train_learned(task, pools, z, st, seed)
    scores, ranks, per_metric, items, secs = _evaluate_methods(task, ref, learned, st, seed)
    secs.update(_batched_seconds(task, deepfaith, st))
    return TaskResult(name, task.accuracy, len(task.x_train), len(task.x_test), task.n_groups, kept, pool_fc, logs,
                      scores, ranks, per_metric, secs, train_secs, items, pool_items)


def _prior_pools(task, ref, st: dict, seed: int):
    """Step 1: the priors' maps on the explainer-training inputs, deduplicated, scored and filtered into pools."""
    g, G = task.groups, task.n_groups
    train_maps, _ = explain_all(task.prob, task.x_train, g, G, reference=ref, seed=seed)
    stack = _pool_stack(train_maps, PRIORS)
    keep_d = dedup(stack, st["delta"])
    per = [evaluate(task.prob, task.x_train, stack[:, k], groups=g, n_subsets=st["n_subsets"], seed=seed)
           for k in range(len(PRIORS))]
    scores_k = {m: torch.stack([p[m] for p in per], 1) for m in METRICS}
    keep_f = filter_maps(scores_k, keep_d, st["p"])
    pools = {"filtered": pool(stack, keep_f), "unfiltered": pool(stack, keep_d),
             "IG": [train_maps["IG"][i][None] for i in range(len(task.x_train))]}
    kept = {m: (int(keep_d[:, k].sum()), int(keep_f[:, k].sum())) for k, m in enumerate(PRIORS)}
    fc = scores_k["FC"]
    pool_fc = {"unfiltered": float(fc[keep_d].mean()), "filtered": float(fc[keep_f].mean()),
               "inputs without a kept map": int((keep_f.sum(1) == 0).sum())}
    pool_items = {"fc": fc.detach().numpy().astype(float), "dedup": keep_d.numpy().astype(bool),
                  "filtered": keep_f.numpy().astype(bool)}
    return pools, kept, pool_fc, pool_items


def _train_learned(task, pools: dict, z: dict, st: dict, seed: int):
    """Step 2: train each learned explainer of LEARNED on its pool; its maps of the test inputs."""
    g, G = task.groups, task.n_groups
    tok_test = tokens(task.x_test, g, G)
    logs, learned, train_secs, deepfaith = {}, {}, {}, None
    for label, mode, src in LEARNED:
        torch.manual_seed(seed)
        phi = Explainer(G, task.token_dim, st["width"], st["layers"], st["heads"])
        with stopwatch() as watch:
            logs[label] = train_explainer(phi, task.x_train, g, G, model=task.prob,
                                          targets=pools["filtered" if src is None else src], mode=mode,
                                          epochs=z["epochs"], batch=z["batch"], k=st["k"], lr=st["lr"],
                                          alpha=DynamicAlpha(st["eps"], st["window"], st["c"]), seed=seed)
        train_secs[label] = watch.seconds
        phi.eval()
        with torch.no_grad():
            learned[label] = phi(tok_test)
        if label == "DeepFaith":
            deepfaith = phi
    return logs, learned, train_secs, deepfaith


def _evaluate_methods(task, ref, learned: dict, st: dict, seed: int):
    """Step 3: every method's scores on the test inputs, under baseline 0 and under Gaussian noise, and their ranks;
    also the priors' seconds per input."""
    g, G = task.groups, task.n_groups
    test_maps, secs = explain_all(task.prob, task.x_test, g, G, reference=ref, seed=seed)
    methods = {**test_maps, **learned}
    noise = st["noise_sd"] * torch.randn(task.x_test.shape, generator=torch.Generator().manual_seed(seed + 7))
    scores, ranks, per_metric, items = {}, {}, {}, {}
    for bname, b in (("zero", 0.0), ("noise", noise)):
        items[bname] = {k: {m: v.detach().numpy().astype(float)
                            for m, v in evaluate(task.prob, task.x_test, a, baseline=b, groups=g,
                                                 n_subsets=st["n_subsets"], seed=seed + 1).items()}
                        for k, a in methods.items()}
        scores[bname] = {k: {m: float(v.mean()) for m, v in per.items()} for k, per in items[bname].items()}
        ranks[bname], per_metric[bname] = mean_ranks(scores[bname])
    return scores, ranks, per_metric, items, secs


def _batched_seconds(task, deepfaith, st: dict) -> dict:
    """Step 4: time per explained input, batched: DeepFaith's forward pass against IG on the test inputs tiled to
    `timing_rows` rows, each the best of `timing_repeats` runs (on a few dozen rows both take milliseconds, and
    per-call overhead and the machine's load decide the ratio); the other priors were timed once, in step 3."""
    g, G = task.groups, task.n_groups
    reps, rows = st["timing_repeats"], st["timing_rows"]
    xt = task.x_test.repeat(-(-rows // len(task.x_test)), *([1] * (task.x_test.ndim - 1)))[:rows]
    with torch.no_grad():
        deepfaith_s = time_per_input(lambda: deepfaith(tokens(xt, g, G)), rows, reps)
    return {"DeepFaith": deepfaith_s, "IG": time_per_input(lambda: explain("IG", task.prob, xt, g, ig_steps=20),
                                                             rows, reps)}


def _resample_weights(n: int, n_resamples: int, rng) -> np.ndarray:
    """(n_resamples, n) counts: how often each of n items is drawn in each bootstrap resample."""
    draws = rng.integers(n, size=(n_resamples, n))
    return np.stack([np.bincount(d, minlength=n) for d in draws]).astype(float)


def pool_fc_gain_ci(results, tasks, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95) -> tuple:
    """(gain, low, high): the filtered pool's mean FC minus the deduplicated pool's (both means over the maps they
    keep), averaged over `tasks`, with a percentile interval from a bootstrap over the explainer-training inputs,
    resampled within each task (an input brings all its maps). Explained in chapters/amortized-explainer/02_experiments.md.
    """
    check_int("n_resamples", n_resamples, 2)
    rng = np.random.default_rng(check_int("seed", seed, 0))
    point, boot = [], []
    for k in tasks:
        p = results[k].pool_items
        if p is None:
            raise ValueError(f"task {k!r} has no per-input pool record (pool_items)")
        fc = p["fc"]
        sums = {s: np.where(p[s], fc, 0.0).sum(1) for s in ("filtered", "dedup")}
        counts = {s: p[s].sum(1).astype(float) for s in ("filtered", "dedup")}
        point.append(sums["filtered"].sum() / counts["filtered"].sum() - sums["dedup"].sum() / counts["dedup"].sum())
        w = _resample_weights(len(fc), n_resamples, rng)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot.append(w @ sums["filtered"] / (w @ counts["filtered"]) - w @ sums["dedup"] / (w @ counts["dedup"]))
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(np.mean(boot, 0), [alpha, 1 - alpha])
    return float(np.mean(point)), float(lo), float(hi)


def worst_gap_ci(results, tasks, a: str, b: str, metric: str, baseline: str = "zero", n_resamples: int = 2000,
                 seed: int = 0, confidence: float = 0.95) -> tuple:
    """(gap, low, high): the smaller over `tasks` of the mean paired difference, method `a` minus method `b`, of
    `metric` over the test inputs, with a percentile interval of that same minimum from a bootstrap of the
    per-input differences, resampled within each task. Explained in chapters/amortized-explainer/02_experiments.md.
    """
    check_int("n_resamples", n_resamples, 2)
    rng = np.random.default_rng(check_int("seed", seed, 0))
    point, boot = [], []
    for k in tasks:
        per = results[k].item_scores
        if per is None:
            raise ValueError(f"task {k!r} has no per-input scores (item_scores)")
        d = per[baseline][a][metric] - per[baseline][b][metric]
        point.append(d.mean())
        boot.append(_resample_weights(len(d), n_resamples, rng) @ d / len(d))
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(np.min(boot, 0), [alpha, 1 - alpha])
    return float(np.min(point)), float(lo), float(hi)
