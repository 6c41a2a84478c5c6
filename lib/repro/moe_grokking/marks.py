"""Marks of memorization and generalization, and the numbers behind the chapter's claims.

Explained in chapters/moe-grokking/02_experiments.md: crossing times and onsets (`time_to_reach`,
`generalization_onset`), per-sample memorization times, the fall of a curve from its peak, rank correlations, the
per-group times of one run (`group_times`) and every quantity the claims check (`claim_quantities`).
"""
from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr

from ..common import centred_mean

__all__ = ["MEMORIZED", "GENERALIZED", "FITTED", "LEARNS_RULE", "time_to_reach", "generalization_onset",
           "memorization_times", "drop_from_peak", "value_at", "rank_correlation", "group_times",
           "claim_quantities", "lag_correlation", "monitor_correlations", "sample_consistency",
           "consistency_rise_interval"]


def time_to_reach(steps, values, threshold: float) -> float:
    """The first step at which `values` reaches `threshold` (>=); NaN if it never does.

    Explained in chapters/moe-grokking/02_experiments.md.
    """
    steps, values = np.asarray(steps), np.asarray(values, dtype=float)
    if steps.shape != values.shape or steps.ndim != 1:
        raise ValueError(f"steps and values must be 1-d and of equal length, got {steps.shape} and {values.shape}")
    hit = np.nonzero(values >= threshold)[0]
    return float(steps[hit[0]]) if hit.size else float("nan")


def generalization_onset(steps, test_acc, chance: float) -> float:
    """First step where test accuracy exceeds chance + 0.5*(final - chance) (the brief's definition); NaN when the
    final accuracy is not above chance. Explained in chapters/moe-grokking/02_experiments.md."""
    test_acc = np.asarray(test_acc, dtype=float)
    final = test_acc[-1]
    if final <= chance:
        return float("nan")
    steps = np.asarray(steps)
    hit = np.nonzero(test_acc > chance + 0.5 * (final - chance))[0]
    return float(steps[hit[0]]) if hit.size else float("nan")


def memorization_times(steps, correct, loss, eps: float = 0.1) -> np.ndarray:
    """Per sample, the first checkpoint from which it stays argmax-correct with loss < `eps` to the end (NaN if it
    never settles). `correct` and `loss` are (checkpoints, samples).
    Explained in chapters/moe-grokking/02_experiments.md."""
    steps = np.asarray(steps)
    ok = np.asarray(correct, dtype=bool) & (np.asarray(loss, dtype=float) < eps)
    if ok.ndim != 2 or ok.shape[0] != steps.size:
        raise ValueError(f"correct and loss must be (checkpoints={steps.size}, samples), got {ok.shape}")
    stays = np.flip(np.cumprod(np.flip(ok, 0), 0), 0).astype(bool)     # ok at this checkpoint and every later one
    first = np.argmax(stays, axis=0)
    return np.where(stays.any(0), steps[first].astype(float), np.nan)


def drop_from_peak(steps, values, start: float) -> float:
    """(peak - last) / peak, the peak taken over steps >= `start`: how far a curve falls from its post-`start`
    maximum to the end of training. Explained in chapters/moe-grokking/02_experiments.md."""
    steps, values = np.asarray(steps), np.asarray(values, dtype=float)
    after = values[steps >= start]
    if after.size == 0 or not np.isfinite(start):
        return float("nan")
    peak = after.max()
    return float((peak - values[-1]) / peak) if peak > 0 else 0.0


def value_at(steps, values, step: float) -> float:
    """The value at the first checkpoint at or after `step`. Explained in chapters/moe-grokking/02_experiments.md."""
    steps, values = np.asarray(steps), np.asarray(values, dtype=float)
    i = np.searchsorted(steps, step)
    return float(values[min(i, len(values) - 1)]) if np.isfinite(step) else float("nan")


def rank_correlation(x, y) -> float:
    """Spearman's rank correlation, NaN when either series is constant.

    Explained in chapters/moe-grokking/02_experiments.md.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"x and y must have the same length of at least 3, got {x.shape} and {y.shape}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


#: Marks of memorization and generalization. The brief's: training accuracy 0.99, test accuracy 0.9. Ours (fixed
#: after seeing seed 0, before reading seeds 1 and 2; chapters/moe-grokking/02_experiments says why):
#: a group is fitted at training accuracy 0.95 and counts as learning its rule if it ends at test accuracy 0.5.
MEMORIZED, GENERALIZED, FITTED, LEARNS_RULE = 0.99, 0.9, 0.95, 0.5


def group_times(log: dict, control: int, chance: float) -> dict:
    """Per group of one run's log: the steps `t_mem` (train acc. 0.99), `t_fit` (0.95), `t_gen` (test acc. 0.9) and
    the generalization `onset` (NaN where never), and the lists `rules` (every group but `control`), `generalizing`
    (rule groups that reach test acc. 0.9) and `learners` (rule groups that end at test acc. 0.5 or more).

    The random-label `control` may never reach 0.95 or 0.99; its times are then the step of its best training accuracy.
    Explained in chapters/moe-grokking/02_experiments.md.
    """
    steps, train, test = log["steps"], log["train_acc"], log["test_acc"]
    n_groups = train.shape[1]
    if not 0 <= control < n_groups:
        raise ValueError(f"control must index one of the log's {n_groups} groups, got {control!r}")
    times = {name: np.array([time_to_reach(steps, curve[:, g], level) for g in range(n_groups)])
             for name, curve, level in [("t_mem", train, MEMORIZED), ("t_fit", train, FITTED),
                                        ("t_gen", test, GENERALIZED)]}
    times["onset"] = np.array([generalization_onset(steps, test[:, g], chance) for g in range(n_groups)])
    for name in ("t_mem", "t_fit"):
        if not np.isfinite(times[name][control]):
            times[name][control] = steps[np.argmax(train[:, control])]
    rules = [g for g in range(n_groups) if g != control]
    times.update(rules=rules, generalizing=[g for g in rules if np.isfinite(times["t_gen"][g])],
                 learners=[g for g in rules if test[-1, g] >= LEARNS_RULE])
    return times


def _ratio(a: float, b: float) -> float:
    return float(a / b) if np.isfinite(a) and np.isfinite(b) and b > 0 else float("nan")


def _spread(times: np.ndarray) -> float:
    """Slowest over fastest of two or more times; NaN with fewer."""
    return _ratio(np.max(times), np.min(times)) if len(times) >= 2 else float("nan")


def claim_quantities(logs: dict, control: int, chance: float, n_experts: int, min_drop: float = 0.10) -> dict:
    """The numbers behind every claim of chapters/moe-grokking/02_experiments, from the logs of one seed's runs
    ({variant: log}, at least "main" and "frozen"). The routing metrics are smoothed over 3 evaluations first.

    Returns the main run's `group_times`, the per-group arrays `drop` (pathway distance, relative fall from its peak
    after the fitted step to the end) and `c_rise` (consistency, end minus fitted step), and the scalars the
    chapter checks: `n_grok`, `async_ratio` (brief's marks), `n_lag`, `onset_async` (ours), `drop_min`, `drop_mean`,
    `control_ratio` (the control's drop over the rule groups' mean drop; NaN unless that mean reaches `min_drop`,
    the claim's own 10%, since "less than half as much" compares with a fall), `c_rise_min`, `frozen_move`,
    `frozen_drop_mean`, `load_frac` (the main run's mean load entropy over log `n_experts`, first evaluation left
    out). Pathway checks read the `learners`, or every rule group when none learns.
    """
    missing = {"main", "frozen"} - set(logs)
    if missing:
        raise ValueError(f"logs lack the run(s) {sorted(missing)}; they have {sorted(logs)}")
    main, frozen = logs["main"], logs["frozen"]
    t = group_times(main, control, chance)
    t_fit, onset, rules = t["t_fit"], t["onset"], t["rules"]
    gen = t["learners"] or rules
    n_groups, steps = len(t_fit), main["steps"]
    sm = {(v, key): np.stack([centred_mean(logs[v][key][:, g]) for g in range(n_groups)], 1)
          for v in ("main", "frozen") for key in ("pathway_distance", "consistency")}
    drop = np.array([drop_from_peak(steps, sm["main", "pathway_distance"][:, g], t_fit[g]) for g in range(n_groups)])
    c_rise = np.array([sm["main", "consistency"][-1, g] - value_at(steps, sm["main", "consistency"][:, g], t_fit[g])
                       for g in range(n_groups)])
    f_times = group_times(frozen, control, chance)
    f_steps = frozen["steps"]
    f_move = [abs(sm["frozen", "consistency"][-1, g] - value_at(f_steps, sm["frozen", "consistency"][:, g],
                                                               f_times["t_fit"][g])) for g in rules]
    f_drop = [drop_from_peak(f_steps, sm["frozen", "pathway_distance"][:, g], f_times["t_fit"][g]) for g in gen]
    lag = [_ratio(t["t_gen"][g], t["t_mem"][g]) for g in t["generalizing"]]
    onset_lag = [_ratio(onset[g], t_fit[g]) for g in t["learners"]]
    gen_times, learner_onsets = t["t_gen"][t["generalizing"]], onset[t["learners"]]
    drop_mean = float(np.mean(drop[gen]))
    paper = _paper_quantities(main, t, gen, control, min_drop) if "paper_distance" in main else {}
    return {**t, **paper, "lag_rho": lag_correlation(main, control)["rho"], "smoothed": sm, "drop": drop,
            "c_rise": c_rise,
            "n_grok": int(sum(r >= 2 for r in lag)), "async_ratio": _spread(gen_times),
            "n_lag": int(sum(r >= 2 for r in onset_lag)), "onset_async": _spread(learner_onsets),
            "drop_min": float(np.min(drop[gen])), "drop_mean": drop_mean,
            "control_ratio": _ratio(drop[control], drop_mean) if drop_mean >= min_drop else float("nan"),
            "c_rise_min": float(np.min(c_rise[gen])), "c_rise_mean": float(np.mean(c_rise[gen])),
            "frozen_move": float(np.nanmax(f_move)) if np.isfinite(f_move).any() else float("nan"),
            "frozen_drop_mean": float(np.nanmean(f_drop)) if np.isfinite(f_drop).any() else float("nan"),
            "load_frac": float(main["load_entropy"][1:].mean() / np.log(n_experts))}


def _paper_quantities(main: dict, t: dict, gen: list, control: int, min_drop: float) -> dict:
    """`claim_quantities`' numbers on the paper's own metrics (raw distance, C_i), smoothed like ours."""
    steps, n_groups = main["steps"], main["paper_distance"].shape[1]
    dist = np.stack([centred_mean(main["paper_distance"][:, g]) for g in range(n_groups)], 1)
    ci = np.stack([centred_mean(main["paper_consistency"][:, g]) for g in range(n_groups)], 1)
    drop = np.array([drop_from_peak(steps, dist[:, g], t["t_fit"][g]) for g in range(n_groups)])
    ci_change = np.array([ci[-1, g] - value_at(steps, ci[:, g], t["t_fit"][g]) for g in range(n_groups)])
    r = {g: monitor_correlations(steps, main["test_acc"][:, g], {"distance": main["paper_distance"][:, g],
                                                                   "ci": main["paper_consistency"][:, g]},
                                 t["t_fit"][g]) for g in gen}
    drop_mean = float(np.mean(drop[gen]))
    return {"paper_drop": drop, "paper_drop_min": float(np.min(drop[gen])), "paper_drop_mean": drop_mean,
            "paper_control_ratio": _ratio(drop[control], drop_mean) if drop_mean >= min_drop else float("nan"),
            "paper_ci_change": ci_change, "paper_ci_change_max": float(np.max(ci_change[gen])),
            "table1_r": r, "table1_distance": float(np.nanmax([r[g]["distance"] for g in gen])),
            "table1_ci": float(np.nanmin([r[g]["ci"] for g in gen]))}


def lag_correlation(log: dict, control: int, level: float = LEARNS_RULE) -> dict:
    """Do groups that are memorized later lag longer? Per rule group of one run: `t_fit` (training accuracy 0.95),
    `t_rule` (test accuracy `level`) and `lag` = t_rule - t_fit; and `rho`, Spearman's rank correlation over the
    fitted rule groups between t_fit and lag (the paper's "harder groups lag longer" as a number).

    A group that never reaches `level` within the run has lag +inf: it ranks as lagging longest (ties with any
    other such group), since its lag is at least the rest of the run. Groups that never fit are left out; `rho` is
    NaN with fewer than three groups left. Explained in chapters/moe-grokking/02_experiments.md.
    """
    steps, train, test = log["steps"], log["train_acc"], log["test_acc"]
    rules = [g for g in range(train.shape[1]) if g != control]
    t_fit = np.array([time_to_reach(steps, train[:, g], FITTED) for g in rules])
    t_rule = np.array([time_to_reach(steps, test[:, g], level) for g in rules])
    lag = np.where(np.isfinite(t_rule), t_rule - t_fit, np.inf)
    ok = np.isfinite(t_fit)
    rho = float("nan")
    if ok.sum() >= 3 and np.ptp(t_fit[ok]) > 0 and len(set(lag[ok].tolist())) > 1:
        rho = float(spearmanr(t_fit[ok], lag[ok]).statistic)
    return {"rules": rules, "t_fit": t_fit, "t_rule": t_rule, "lag": lag, "rho": rho}


def monitor_correlations(steps, test_acc, monitors: dict, start: float, min_points: int = 4) -> dict:
    """Pearson's r between test accuracy and each monitor over the checkpoints from `start` on (the paper's Table 1
    correlates its two metrics with downstream accuracy over checkpoints): {name: r}, NaN with fewer than
    `min_points` checkpoints or a constant series. `monitors` maps names to 1-d arrays aligned with `steps`.
    Explained in chapters/moe-grokking/02_experiments.md.
    """
    steps, test_acc = np.asarray(steps), np.asarray(test_acc, dtype=float)
    after = steps >= (start if np.isfinite(start) else steps[0])
    out = {}
    for name, values in monitors.items():
        values = np.asarray(values, dtype=float)
        if values.shape != steps.shape:
            raise ValueError(f"monitor {name!r} has shape {values.shape}, steps {steps.shape}")
        x, y = values[after], test_acc[after]
        enough = after.sum() >= min_points and np.ptp(x) > 0 and np.ptp(y) > 0
        out[name] = float(pearsonr(x, y).statistic) if enough else float("nan")
    return out


def sample_consistency(log: dict, top_k: int, evals=None) -> np.ndarray:
    """Our layer consistency of each monitored sample at the evaluations `evals` (indices; default: every one),
    (evals, groups, samples), recomputed from
    the log's stored router probabilities (8-bit) and router rows (16-bit): the top-`top_k` probabilities of each
    prompt token renormalised (the gates), averaged over the prompt tokens, then `metrics.layer_consistency`. The log
    keeps only the group means, computed in training from unrounded numbers, so these agree with them up to the
    rounding. Explained in chapters/moe-grokking/02_experiments.md.
    """
    if "router_probs" not in log or "router_weights" not in log:
        raise ValueError("this log has no stored router probabilities (made before they were logged); retrain it")
    which = slice(None) if evals is None else np.asarray(evals, dtype=int)
    P = np.asarray(log["router_probs"][which], dtype=np.float64) / 255.0       # (evals, groups, n, L, T, E)
    W = np.asarray(log["router_weights"][which], dtype=np.float64)             # (evals, L, E, d)
    if not 1 <= int(top_k) <= P.shape[-1]:
        raise ValueError(f"top_k must be between 1 and {P.shape[-1]}, got {top_k!r}")
    top = np.argsort(-P, axis=-1, kind="stable")[..., :int(top_k)]
    gates = np.zeros_like(P)
    np.put_along_axis(gates, top, np.take_along_axis(P, top, -1), -1)
    gates /= np.maximum(gates.sum(-1, keepdims=True), 1e-12)
    e = np.einsum("tgnle,tled->tgnld", gates.mean(4), W)
    e /= np.maximum(np.linalg.norm(e, axis=-1, keepdims=True), 1e-12)
    return (e[..., :-1, :] * e[..., 1:, :]).sum(-1).mean(-1)


def consistency_rise_interval(log: dict, t_fit, groups, top_k: int, n_resamples: int = 2000, seed: int = 0,
                              confidence: float = 0.95) -> dict:
    """The 95% interval of `claim_quantities`' `c_rise_min`, the smallest over `groups` of our consistency's change
    from the fitted step to the end (running means over 3 evaluations), from a bootstrap over each group's monitored
    samples: each resample draws every group's samples with replacement and takes the smallest group mean. The
    per-sample changes are recomputed by `sample_consistency` and shifted within each group to the logged group
    mean, so that the interval sits around the logged value. Returns `low`, `high` and `recompute_gap`, the largest
    distance between a recomputed and a logged group change (the effect of the stored rounding); NaNs where a group
    never fits. Explained in chapters/moe-grokking/02_experiments.md.
    """
    steps = np.asarray(log["steps"])
    groups = list(groups)
    if not groups:
        raise ValueError("groups must name at least one group")
    t_fit = np.asarray(t_fit, dtype=float)
    nan = {"low": float("nan"), "high": float("nan"), "recompute_gap": float("nan")}
    if not np.isfinite(t_fit[groups]).all():
        return nan
    last = len(steps) - 1
    at = {g: min(int(np.searchsorted(steps, t_fit[g])), last) for g in groups}
    window = {i: list(range(max(0, i - 1), min(i + 2, last + 1))) for i in {*at.values(), last}}   # running mean of 3
    needed = sorted({j for js in window.values() for j in js})
    c = dict(zip(needed, sample_consistency(log, top_k, needed)))              # evaluation -> (groups, n)
    sm = {i: np.mean([c[j] for j in js], axis=0) for i, js in window.items()}
    rng = np.random.default_rng(seed)
    n = c[last].shape[1]
    means, gap = [], 0.0
    for g in groups:
        i = at[g]
        change = sm[last][g] - sm[i][g]                                          # (n,) per sample
        logged = centred_mean(log["consistency"][:, g])
        target = float(logged[-1] - logged[i])
        gap = max(gap, abs(float(change.mean()) - target))
        draws = rng.multinomial(n, np.full(n, 1 / n), size=n_resamples)
        means.append(draws @ (change - change.mean() + target) / n)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(np.min(means, axis=0), [alpha, 1 - alpha])
    return {"low": float(lo), "high": float(hi), "recompute_gap": gap}
