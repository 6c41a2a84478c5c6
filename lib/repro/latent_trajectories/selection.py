"""Choosing one of k sampled traces: majority vote, shortest, random, sequential LT selection with a calibrated
threshold, LT-Combined, and early selection (a random forest on the per-step signals, and an ST-BoN-style
consistency baseline).

Explained in chapters/latent-trajectories/02_experiments.md. Conventions follow the official notebooks
(`multi_sample_experiments.ipynb`, `early_sample_experiments.ipynb` of martinagvilas/LT-signals): the samples of a
question are tried in their order 0..k-1; the cost of a selection is the thinking tokens of the samples drawn.
Arrays shaped (Q, k) hold one value per question and sample.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, ShuffleSplit

from ..common import check_between, check_int

LOW_IS_GOOD = {"cum", "think_tokens", "layer_ang", "cum_by_step"}


def auc(correct, score) -> float:
    """ROC-AUC of `score` for telling correct (True) from wrong traces, NaN scores dropped (as the official code).

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    y, s = np.asarray(correct, dtype=bool), np.asarray(score, dtype=float)
    keep = np.isfinite(s)
    if len(np.unique(y[keep])) < 2:
        return float("nan")
    return float(roc_auc_score(y[keep], s[keep]))


def grid(rows: pd.DataFrame, column: str) -> np.ndarray:
    """`column` of a trace table as a (Q, k) array, questions in increasing order, samples in order.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    if column not in rows:
        raise ValueError(f"column must be a column of the trace table, got {column!r}")
    return rows.pivot(index="question", columns="repeat", values=column).to_numpy()


def majority_vote(answers: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Per question, whether the plurality answer of the k samples is right (ties: the tied answer drawn first;
    traces without an answer do not vote). Explained in chapters/latent-trajectories/02_experiments.md."""
    out = np.zeros(len(answers), dtype=bool)
    for q, (a, c) in enumerate(zip(answers, correct)):
        votes = [x for x in a if x >= 0]
        if not votes:
            continue
        counts = {x: votes.count(x) for x in votes}
        best = max(counts.values())
        winner = next(x for x in votes if counts[x] == best)
        out[q] = bool(c[list(a).index(winner)])
    return out


def _sequential_choice(values, threshold: float, correct, answers, tokens, low_is_good: bool = False):
    """Per question of `sequential`: whether the selection is right, the tokens it used, whether it accepted a sample
    early, and the index of the last sample drawn."""
    values = np.asarray(values, dtype=float)
    passes = (values <= threshold) if low_is_good else (values >= threshold)
    passes &= np.isfinite(values)
    hit = passes.any(1)
    first = np.where(hit, passes.argmax(1), values.shape[1] - 1)
    rows = np.arange(len(values))
    mv = majority_vote(answers, correct)
    ok = np.where(hit, correct[rows, first], mv)
    used = np.where(hit, np.cumsum(tokens, axis=1)[rows, first], tokens.sum(1))
    return ok, used, hit, first


def sequential(values, threshold: float, correct, answers, tokens, low_is_good: bool = False) -> dict:
    """Accept the first sample whose value passes `threshold` (>=, or <= when `low_is_good`); when none passes, fall
    back to the majority vote of all k. Returns accuracy, tokens used, the fraction of questions accepted early and
    the mean number of samples drawn. Explained in chapters/latent-trajectories/02_experiments.md."""
    ok, used, hit, first = _sequential_choice(values, threshold, correct, answers, tokens, low_is_good)
    return {"accuracy": float(ok.mean()), "tokens": float(used.sum()), "accepted": float(hit.mean()),
            "samples": float((first + 1).mean())}


def calibrated_threshold(values, correct, answers, tokens, low_is_good: bool = False, top_k: int = 2,
                         min_incorrect: int = 15) -> float:
    """The official calibration: sweep thresholds over the 20th..99th percentiles of the wrong traces' values, score
    each by the sequential accuracy, keep the median of the `top_k` best (the median of all values when fewer than
    `min_incorrect` wrong traces). Explained in chapters/latent-trajectories/02_experiments.md."""
    wrong = values[~correct.astype(bool) & np.isfinite(values)]
    if len(wrong) < min_incorrect:
        return float(np.nanmedian(values))
    grid_ = np.unique(np.quantile(wrong, np.arange(0.20, 1.0, 0.01)))
    scores = np.array([sequential(values, t, correct, answers, tokens, low_is_good)["accuracy"] for t in grid_])
    order = np.argsort(-scores, kind="stable")
    return float(np.median(grid_[order[:top_k]]))


def cross_validated(values, correct, answers, tokens, low_is_good: bool = False, n_splits: int = 3,
                    train_size: float = 0.3, seed: int = 42) -> dict:
    """Sequential selection with thresholds calibrated on 30% of the questions and tested on the other 70%, over
    `n_splits` ShuffleSplit folds (the official protocol); means over folds of accuracy, tokens used as a fraction of
    all k samples' tokens (MV@k's cost), the fraction accepted early and the threshold; and `items`, the test items of
    every fold: `question` (the question's row in `values`) and `correct` (whether the selection was right), so that a
    paired comparison can be bootstrapped over questions.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_between("train_size", train_size, 0.0, 1.0)
    folds = ShuffleSplit(n_splits=check_int("n_splits", n_splits), train_size=train_size,
                         test_size=1 - train_size, random_state=seed)
    out, items = [], []
    for tr, te in folds.split(values):
        thr = calibrated_threshold(values[tr], correct[tr], answers[tr], tokens[tr], low_is_good)
        r = sequential(values[te], thr, correct[te], answers[te], tokens[te], low_is_good)
        r["tokens"] /= tokens[te].sum()
        r["mv_accuracy"] = float(majority_vote(answers[te], correct[te]).mean())
        out.append(r | {"threshold": thr})
        items.append((te, _sequential_choice(values[te], thr, correct[te], answers[te], tokens[te], low_is_good)[0]))
    summary = {k: float(np.mean([r[k] for r in out])) for k in out[0]}
    return summary | {"items": {"question": np.concatenate([te for te, _ in items]),
                                "correct": np.concatenate([ok for _, ok in items]).astype(bool)}}


def combined_signal(rows: pd.DataFrame, calibration: np.ndarray, signals=("net", "cum", "aligned")) -> np.ndarray:
    """LT-Combined: z-score each signal with the calibration traces' mean and sd (ddof=0), flip Cum's sign, and sum
    the signals weighted by their |Pearson r| with correctness on the calibration traces (normalised to sum to 1).

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    calibration = np.asarray(calibration, dtype=bool)
    if calibration.shape != (len(rows),) or not calibration.any():
        raise ValueError("calibration must be a boolean mask over the rows with at least one True")
    y = rows["correct"].to_numpy(float)[calibration]
    parts, weights = [], []
    for s in signals:
        x = rows[s].to_numpy(float) * (-1.0 if s in LOW_IS_GOOD else 1.0)
        c = x[calibration]
        ok = np.isfinite(c)
        r = np.corrcoef(c[ok], y[ok])[0, 1] if ok.sum() > 2 else np.nan
        weights.append(0.0 if np.isnan(r) else abs(r))
        parts.append((x - np.nanmean(c)) / (np.nanstd(c) or 1.0))
    w = np.array(weights) / (sum(weights) or 1.0)
    return sum(wi * p for wi, p in zip(w, parts))


def at_step(steps: list[dict], K: int) -> np.ndarray:
    """Per trace, (net_by_step, cum_by_step, tokens read) after K steps, or after its last step when it has fewer (the
    official `groupby(...).tail(1)`); NaN for traces with no step. Explained in
    chapters/latent-trajectories/02_experiments.md."""
    check_int("K", K)
    out = np.full((len(steps), 3), np.nan)
    for i, s in enumerate(steps):
        n = len(s["net_by_step"])
        if n:
            j = min(K, n) - 1
            out[i] = s["net_by_step"][j], s["cum_by_step"][j], s["tokens_read"][j]
    return out


def _early_cost(rows, chosen, read):
    """Tokens saved by stopping every sample but the chosen one after `read` tokens (the official accounting)."""
    total = rows["think_tokens"].to_numpy(float)
    stopped = np.minimum(total, np.nan_to_num(read, nan=0.0))
    used = np.where(chosen, total, stopped)
    return float(1 - used.sum() / total.sum())


def early_forest(rows: pd.DataFrame, steps: list[dict], K: int, seed: int = 42, n_trees: int = 200) -> dict:
    """Early selection: a random forest (`n_trees`) on (net_by_step, cum_by_step) after K steps predicts each trace's
    correctness out of fold (GroupKFold(3) by question); per question the sample with the highest P(correct) is kept,
    the others are stopped. Returns its accuracy, the fraction of tokens saved and the out-of-fold AUC.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    from sklearn.ensemble import RandomForestClassifier

    feats = at_step(steps, K)
    X, y, g = np.nan_to_num(feats[:, :2]), rows["correct"].to_numpy(int), rows["question"].to_numpy()
    proba = np.zeros(len(rows))
    for tr, te in GroupKFold(n_splits=3).split(X, y, groups=g):
        clf = RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1).fit(X[tr], y[tr])
        proba[te] = clf.predict_proba(X[te])[:, 1] if len(clf.classes_) == 2 else float(clf.classes_[0])
    chosen = _argmax_per_question(rows, proba)
    return {"accuracy": float(rows["correct"].to_numpy()[chosen].mean()),
            "saved": _early_cost(rows, chosen, feats[:, 2]), "auc": auc(y.astype(bool), proba)}


def _argmax_per_question(rows, score) -> np.ndarray:
    chosen = np.zeros(len(rows), dtype=bool)
    frame = pd.DataFrame({"q": rows["question"].to_numpy(), "s": np.nan_to_num(score, nan=-np.inf)})
    chosen[frame.groupby("q", sort=False)["s"].idxmax().to_numpy()] = True
    return chosen


def early_consistency(rows: pd.DataFrame, segments: list[np.ndarray], steps: list[dict], K: int) -> dict:
    """An ST-BoN-style baseline (our reconstruction): after K steps, keep per question the sample whose mean hidden
    state over its first K+1 segments (all layers) is closest, on average, to the other samples'; stop the others.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_int("K", K)
    emb = np.stack([s[:, :K + 1].mean(1).ravel() if s.shape[1] else np.full(s.shape[0] * s.shape[2], np.nan)
                    for s in segments])
    score = np.full(len(rows), np.nan)
    q = rows["question"].to_numpy()
    for question in np.unique(q):
        idx = np.flatnonzero(q == question)
        e = np.nan_to_num(emb[idx], nan=1e6)
        d = np.linalg.norm(e[:, None] - e[None], axis=-1).sum(1) / max(1, len(idx) - 1)
        score[idx] = -d
    chosen = _argmax_per_question(rows, score)
    return {"accuracy": float(rows["correct"].to_numpy()[chosen].mean()),
            "saved": _early_cost(rows, chosen, at_step(steps, K)[:, 2])}


def _question_draws(questions, n_resamples: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(draws, inverse): how often each question is drawn in each of `n_resamples` resamples of the questions with
    replacement, (B, Q), and each item's question as an index into them."""
    _, inverse = np.unique(np.asarray(questions), return_inverse=True)
    Q = int(inverse.max()) + 1 if len(inverse) else 0
    if Q < 2:
        raise ValueError(f"need items of at least 2 questions for a bootstrap over questions, got {Q}")
    return rng.multinomial(Q, np.full(Q, 1 / Q), size=check_int("n_resamples", n_resamples)).astype(float), inverse


def question_bootstrap_ci(values, questions, n_resamples: int = 2000, seed: int = 0,
                          confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean of per-item `values` and its percentile interval from a bootstrap over questions,
    each drawn question bringing all of its items (`questions[i]` names item i's question).
    Explained in chapters/latent-trajectories/02_experiments.md."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) != len(questions):
        raise ValueError(f"values and questions must be 1-d and of one length, got {x.shape} and {len(questions)}")
    draws, inverse = _question_draws(questions, n_resamples, np.random.default_rng(seed))
    sums, counts = np.bincount(inverse, weights=x), np.bincount(inverse).astype(float)
    means = (draws @ sums) / (draws @ counts)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(x.mean()), float(lo), float(hi)


def _weighted_auc(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ROC-AUC of scores `s` for labels `y` with item weights `w` (B, n), one AUC per row of `w`; ties count one
    half, as in `roc_auc_score`, which it equals for unit weights."""
    order = np.argsort(s, kind="stable")
    s, y, w = s[order], y[order], w[:, order]
    new = np.r_[True, s[1:] != s[:-1]]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], len(s)]
    group = np.cumsum(new) - 1
    neg = w * ~y
    below = np.concatenate([np.zeros((len(w), 1)), np.cumsum(neg, 1)], 1)       # negative weight before each index
    under = below[:, starts[group]]
    tied = below[:, ends[group]] - under
    pos = w * y
    with np.errstate(invalid="ignore", divide="ignore"):
        return (pos * (under + 0.5 * tied)).sum(1) / (pos.sum(1) * neg.sum(1))


def auc_replicates(correct, scores, questions, n_resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """The AUC of each score in `scores` (a list of per-trace arrays) under resamples of the questions, each drawn
    question bringing all of its samples: (n_resamples, len(scores)), every score on the same resamples, so that
    differences between them are paired. NaN scores are dropped, as `auc` drops them.
    Explained in chapters/latent-trajectories/02_experiments.md."""
    y = np.asarray(correct, dtype=bool)
    draws, inverse = _question_draws(questions, n_resamples, np.random.default_rng(seed))
    out = np.empty((len(draws), len(scores)))
    for j, score in enumerate(scores):
        sc = np.asarray(score, dtype=float)
        if sc.shape != y.shape:
            raise ValueError(f"score {j} has shape {sc.shape}, correct {y.shape}")
        keep = np.isfinite(sc)
        for b in range(0, len(draws), 250):                                       # chunks bound the memory
            out[b:b + 250, j] = _weighted_auc(y[keep], sc[keep], draws[b:b + 250][:, inverse[keep]])
    return out
