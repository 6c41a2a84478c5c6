"""How explanations are scored: against the ground truth (F1, IoU, boundaries) and against the black box
(sufficiency and comprehensiveness as drops in AUROC).

Explained in chapters/timeseg/02_experiments.md. F1 and IoU are per series and then averaged, as scikit-learn's
``average="samples"`` does in the official code; an empty explanation scores 0. Sufficiency keeps only the explained
steps (the rest mean-filled) and reports how many AUROC points the black box loses (lower is better);
comprehensiveness removes them (higher is better). AUROC is one-vs-rest, macro-averaged, against the true labels.
"""
from __future__ import annotations

import numpy as np
import torch

from .env import mean_fill

__all__ = ["f1_iou", "auroc", "auroc_drop", "validity", "resamples", "bootstrap_means", "bootstrap_auroc_drops"]


def f1_iou(pred, truth) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-series F1 and IoU (Jaccard) of the masks ``pred`` against ``truth``. Explained in
    chapters/timeseg/02_experiments.md."""
    p, t = torch.as_tensor(pred).bool(), torch.as_tensor(np.asarray(truth)).bool()
    if p.shape != t.shape:
        raise ValueError(f"pred must have the shape of truth {tuple(t.shape)}; got {tuple(p.shape)}")
    inter = (p & t).sum(-1).float()
    f1 = 2 * inter / (p.sum(-1) + t.sum(-1)).float().clamp_min(1)
    iou = inter / (p | t).sum(-1).float().clamp_min(1)
    return f1, iou


@torch.no_grad()
def auroc(model, x, y, mask=None, keep: bool = True) -> float:
    """AUROC (×100, one-vs-rest macro) of the black box on ``x``, on ``x`` with only ``mask`` kept (``keep``) or
    with ``mask`` removed (``keep=False``), mean-filled. Explained in chapters/timeseg/02_experiments.md."""
    from sklearn.metrics import roc_auc_score

    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    if mask is not None:
        m = torch.as_tensor(mask).bool()
        x = mean_fill(x, m if keep else ~m)
    p = torch.softmax(model(x), -1).numpy()
    y = np.asarray(y)
    if p.shape[1] == 2:
        return 100.0 * float(roc_auc_score(y, p[:, 1]))
    return 100.0 * float(roc_auc_score(y, p, multi_class="ovr", average="macro"))


def auroc_drop(model, x, y, mask, keep: bool = True) -> float:
    """AUROC points lost when only ``mask`` is kept (sufficiency, ``keep=True``) or when it is removed
    (comprehensiveness). Explained in chapters/timeseg/02_experiments.md."""
    return auroc(model, x, y) - auroc(model, x, y, mask, keep)


def resamples(n: int, seed: int, n_resamples: int = 2000) -> np.ndarray:
    """``(n_resamples, n)`` indices of ``n`` series drawn with replacement: one draw shared by every method, so
    that a difference between methods is bootstrapped paired. Explained in chapters/timeseg/02_experiments.md."""
    if int(n) < 2 or int(n_resamples) < 1:
        raise ValueError(f"n must be at least 2 and n_resamples positive; got n={n}, n_resamples={n_resamples}")
    return np.random.default_rng(seed).integers(int(n), size=(int(n_resamples), int(n)))


def bootstrap_means(values: dict, draws: np.ndarray) -> dict:
    """``{method: (n_resamples,) means}`` of the per-series ``values[method]`` over the shared ``draws`` (from
    ``resamples``). Explained in chapters/timeseg/02_experiments.md."""
    out = {}
    for name, v in values.items():
        v = np.asarray(torch.as_tensor(v).float())
        if v.ndim != 1 or draws.max() >= len(v):
            raise ValueError(f"values[{name!r}] must be one number per series ({draws.shape[1]}); got {v.shape}")
        out[name] = v[draws].mean(1)
    return out


@torch.no_grad()
def bootstrap_auroc_drops(model, x, y, masks: dict, draws: np.ndarray, keep: bool = True) -> dict:
    """``{method: (n_resamples,) AUROC drops}`` (points, as ``auroc_drop``) on each resample of the series in
    ``draws``, for a two-class black box: sufficiency with ``keep=True``, comprehensiveness with ``keep=False``.

    Explained in chapters/timeseg/02_experiments.md. The AUROC of a resample is the Mann–Whitney statistic with
    each series weighted by how often it was drawn: the weighted share of (positive, negative) pairs that the
    black box orders correctly, ties counting half.
    """
    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    y = np.asarray(y)
    if set(np.unique(y)) - {0, 1}:
        raise ValueError(f"y must hold the two classes 0 and 1; got {np.unique(y)}")
    counts = np.stack([np.bincount(d, minlength=len(y)) for d in draws]).astype(float)
    pos, neg = counts * (y == 1), counts * (y == 0)

    def resampled_auroc(inputs):
        s = torch.softmax(model(inputs), -1)[:, 1].numpy().astype(float)
        order = (s[:, None] > s[None, :]) + 0.5 * (s[:, None] == s[None, :])
        return 100.0 * ((pos @ order) * neg).sum(1) / (pos.sum(1) * neg.sum(1))

    clean = resampled_auroc(x)
    return {name: clean - resampled_auroc(mean_fill(x, torch.as_tensor(m).bool() if keep
                                                     else ~torch.as_tensor(m).bool()))
            for name, m in masks.items()}


def validity(segments, mask, k_max: int) -> dict:
    """Counts of explanations that break the rules: more than ``k_max − 1`` kept segments, an empty mask, a
    segment with ``end < start`` or outside the series, overlapping segments, or a mask that is not the union of
    its segments. Explained in chapters/timeseg/01_theory.md."""
    m = torch.as_tensor(mask).bool()
    out = {"too many": 0, "empty": 0, "invalid": 0, "overlap": 0, "mask mismatch": 0}
    for i, segs in enumerate(segments):
        out["too many"] += len(segs) > k_max - 1
        out["empty"] += len(segs) == 0
        cover = torch.zeros(m.shape[1], dtype=torch.long)
        for s, e in segs:
            if not (0 <= s <= e < m.shape[1]):
                out["invalid"] += 1
                continue
            cover[s:e + 1] += 1
        out["overlap"] += bool((cover > 1).any())
        out["mask mismatch"] += bool(((cover > 0) != m[i]).any())
    return out
