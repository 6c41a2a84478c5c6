"""The chapter's analyses of a trained DRC: push labels, per-channel AUROC, path channels, the probe baseline, the
recurrent kernels against the shift template, and plan growth over ticks.

Explained in chapters/sokoban-planning/02_experiments.md. Samples are (live step, level, floor square); a sample's
label for direction d is 1 when, at this step or later in the episode, the box standing on that square is pushed in
direction d (the paper's "box at s will be pushed in d"). A channel's AUROC scores its activation at the square as
a detector of the label; its *sign* is the orientation (+h or -h) with the larger distance from 0.5 on its best
direction, so negatively coded channels count too.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata, spearmanr

from ..common import check_between
from .game import DELTAS
from .drc import DRC, GATES
from .rollout import Rollout

__all__ = ["push_labels", "samples", "auroc_matrix", "orient", "path_channels", "selective_directions",
           "probe_auroc", "self_kernels", "kernel_stats", "plan_growth"]


def push_labels(ro: Rollout, shape) -> np.ndarray:
    """(T, B, 4, H, W) bool: the box on square s at step t is pushed in direction d at step t or later.

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    t_max, b = ro.live.shape
    h, w = shape
    now = np.zeros((t_max, b, 4, h * w), bool)
    for t, i, sq, d in ro.pushes:
        now[t, i, d, sq] = True
    future = np.flip(np.logical_or.accumulate(np.flip(now, 0), axis=0), 0)
    return future.reshape(t_max, b, 4, h, w)


def samples(ro: Rollout, walls: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (N, D*C), labels (N, 4) and the level of each sample (N,), over live steps and floor squares.

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    if ro.hidden is None:
        raise ValueError("the rollout must be made with record=True")
    t_max, b, d, c, h, w = ro.hidden.shape
    labels = push_labels(ro, (h, w))
    keep = ro.live[:, :, None, None] & ~np.asarray(walls, bool)[None]          # (T, B, H, W)
    x = ro.hidden.transpose(0, 1, 4, 5, 2, 3).reshape(t_max, b, h, w, d * c)[keep]
    y = labels.transpose(0, 1, 3, 4, 2)[keep]
    level = np.broadcast_to(np.arange(b)[None, :, None, None], keep.shape)[keep]
    return x, y, level


def auroc_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """AUROC of every feature (column of x, (N, F)) for every label (column of y, (N, L)): (F, L), by the
    Mann-Whitney rank formula (ties get mid-ranks); NaN for a label with no positives or no negatives.

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    x, y = np.asarray(x, float), np.asarray(y, bool)
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y):
        raise ValueError("x must be (N, F) and y (N, L) with the same N")
    ranks = rankdata(x, axis=0)
    out = np.full((x.shape[1], y.shape[1]), np.nan)
    for j in range(y.shape[1]):
        pos = y[:, j]
        n1, n0 = int(pos.sum()), int((~pos).sum())
        if n1 and n0:
            out[:, j] = (ranks[pos].sum(0) - n1 * (n1 + 1) / 2) / (n1 * n0)
    return out


def orient(auc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(oriented AUROC (F, 4), sign (F,)): each channel flipped (1 - AUROC) when its farthest-from-0.5 direction
    is below 0.5. Explained in chapters/sokoban-planning/02_experiments.md."""
    dev = np.nan_to_num(auc - 0.5)
    best = np.abs(dev).argmax(1)
    sign = np.where(dev[np.arange(len(auc)), best] >= 0, 1.0, -1.0)
    return np.where(sign[:, None] > 0, auc, 1 - auc), sign


def path_channels(auc: np.ndarray, at_least: float = 0.75, margin: float = 0.10) -> dict:
    """Path channels by direction: channel f is one of direction d when its oriented AUROC for d is at least
    `at_least` and beats every other direction's by `margin`. Returns {d: [f, ...]}.

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    check_between("at_least", at_least, 0.5, 1.0, closed="both")
    oa, _ = orient(auc)
    out = {d: [] for d in range(4)}
    for f, row in enumerate(np.nan_to_num(oa, nan=0.5)):
        d = int(row.argmax())
        if row[d] >= at_least and all(row[d] - row[e] >= margin for e in range(4) if e != d):
            out[d].append(f)
    return out


def selective_directions(auc: np.ndarray, own: float = 0.85, other: float = 0.65) -> tuple[int, np.ndarray]:
    """How many directions d have a channel with oriented AUROC >= `own` for d and <= `other` for each other
    direction (the brief's selectivity test), and per direction the best such channel's AUROC (NaN if none).

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    oa, _ = orient(auc)
    oa = np.nan_to_num(oa, nan=0.5)
    best = np.full(4, np.nan)
    for d in range(4):
        others = np.delete(oa, d, axis=1)
        ok = (oa[:, d] >= own) & (others <= other).all(1)
        if ok.any():
            best[d] = oa[ok, d].max()
    return int(np.isfinite(best).sum()), best


def probe_auroc(x, y, level, seed: int = 0) -> np.ndarray:
    """The probing baseline: one logistic regression per direction on all channels at a square, trained on half
    the levels and scored (AUROC) on the other half. Returns (4,). Explained in
    chapters/sokoban-planning/02_experiments.md."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    levels = np.unique(level)
    test = np.isin(level, rng.choice(levels, len(levels) // 2, replace=False))
    scaler = StandardScaler().fit(x[~test])
    xtr, xte = scaler.transform(x[~test]), scaler.transform(x[test])
    out = np.full(4, np.nan)
    for d in range(4):
        if y[~test, d].any() and y[test, d].any() and not y[test, d].all():
            clf = LogisticRegression(max_iter=500, C=1.0).fit(xtr, y[~test, d])
            out[d] = roc_auc_score(y[test, d], clf.decision_function(xte))
    return out


def self_kernels(model: DRC, gate: str = "j") -> np.ndarray:
    """The 3x3 recurrent (h to gate) kernel of every channel onto itself: (D*C, 3, 3), channels numbered layer by
    layer. Explained in chapters/sokoban-planning/02_experiments.md."""
    if gate not in GATES:
        raise ValueError(f"gate must be one of {GATES}, got {gate!r}")
    g, c = GATES.index(gate), model.cfg.hidden
    ks = [conv.weight.detach().numpy()[g * c + k, k] for conv in model.hh for k in range(c)]
    return np.stack(ks)


def kernel_stats(kernels: np.ndarray, directions) -> tuple[np.ndarray, np.ndarray]:
    """For kernels (F, 3, 3) and one direction per kernel: (largest off-centre |weight| lies on the direction's
    axis, centre +- delta_d (F,) bool; cosine of the 8 off-centre weights with the shift template, +1 at both axis
    taps (F,)). Explained in chapters/sokoban-planning/02_experiments.md."""
    kernels = np.asarray(kernels, float)
    directions = np.asarray(directions, int)
    if kernels.ndim != 3 or kernels.shape[1:] != (3, 3) or len(directions) != len(kernels):
        raise ValueError("kernels must be (F, 3, 3) with one direction per kernel")
    off = np.ones((3, 3), bool)
    off[1, 1] = False
    on_axis, cosine = np.zeros(len(kernels), bool), np.zeros(len(kernels))
    for f, (k, d) in enumerate(zip(kernels, directions)):
        template = np.zeros((3, 3))
        dr, dc = DELTAS[d]
        template[1 + dr, 1 + dc] = template[1 - dr, 1 - dc] = 1.0
        flat = np.abs(k) * off
        r, c = np.unravel_index(flat.argmax(), (3, 3))
        on_axis[f] = template[r, c] > 0
        v, t = k[off], template[off]
        cosine[f] = float(v @ t / (np.linalg.norm(v) * np.linalg.norm(t) + 1e-12))
    return on_axis, cosine


def plan_growth(ticks_h: np.ndarray, channels, signs, grids, active: float = 0.5, rho: float = 0.8) -> dict:
    """Plan growth over the ticks of the first step. ticks_h (K, B, D, C, H, W) from `first_step_ticks`; the plan
    map at tick k is the largest oriented activation over the path `channels` (flat indices, signs from `orient`);
    its active squares are the floor squares above `active` times the level's maximum over ticks.

    Returns per tick the mean number of active squares and their mean Manhattan distance to the nearest box or
    target, and the fraction of levels whose distance rises with the tick (Spearman rho > `rho`). Explained in
    chapters/sokoban-planning/02_experiments.md.
    """
    channels = list(channels)
    if not channels:
        raise ValueError("channels must name at least one path channel")
    k_ticks, b, d, c, h, w = ticks_h.shape
    flat = ticks_h.reshape(k_ticks, b, d * c, h, w)[:, :, channels] * np.asarray(signs)[channels, None, None]
    plan = flat.max(2)                                                           # (K, B, H, W)
    grids = np.asarray(grids)
    walls = grids == 1
    rr, cc = np.mgrid[:h, :w]
    dist = np.full((b, h, w), np.inf)
    for i in range(b):
        for r, q in np.argwhere(np.isin(grids[i], (2, 3, 4, 6))):               # targets and boxes
            dist[i] = np.minimum(dist[i], np.abs(rr - r) + np.abs(cc - q))
    sizes, dists, rising = np.zeros((k_ticks, b)), np.full((k_ticks, b), np.nan), np.zeros(b, bool)
    for i in range(b):
        top = plan[:, i][:, ~walls[i]].max()
        for k in range(k_ticks):
            on = (plan[k, i] > active * top) & ~walls[i]
            sizes[k, i] = on.sum()
            if on.any():
                dists[k, i] = dist[i][on].mean()
        if np.isfinite(dists[:, i]).all() and np.ptp(dists[:, i]) > 0:
            rising[i] = spearmanr(np.arange(k_ticks), dists[:, i]).statistic > rho
    seen = np.isfinite(dists)
    distance = np.where(seen.any(1), np.nansum(dists, 1) / np.maximum(seen.sum(1), 1), np.nan)
    return {"size": sizes.mean(1), "distance": distance, "rising": float(rising.mean())}
