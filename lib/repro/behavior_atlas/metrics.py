"""Per-dataset evaluation as the paper's evaluation script computes it: weighted and macro F1 from a confusion
matrix, then aggregated per task.

Explained in chapters/behavior-atlas/01_unification.md. Our F1 is written from its definition and checked against
scikit-learn's `f1_score` (same label set: the classes in `y_true` or `y_pred`; a class never predicted has
precision 0).
"""
from __future__ import annotations

import numpy as np


def _labels(y_true, y_pred):
    yt, yp = np.asarray(y_true), np.asarray(y_pred)
    if yt.ndim != 1 or yt.shape != yp.shape or yt.size == 0:
        raise ValueError(f"y_true and y_pred must be 1-d of one non-zero length, got {yt.shape} and {yp.shape}")
    return yt, yp


def per_class_f1(y_true, y_pred) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(classes, F1 per class, support per class) over the classes present in `y_true` or `y_pred`
    (chapters/behavior-atlas/01_unification.md)."""
    yt, yp = _labels(y_true, y_pred)
    classes = np.unique(np.concatenate([yt, yp]))
    tp = np.array([np.sum((yt == c) & (yp == c)) for c in classes], float)
    pred = np.array([np.sum(yp == c) for c in classes], float)
    support = np.array([np.sum(yt == c) for c in classes], float)
    denom = pred + support
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    return classes, f1, support


def f1(y_true, y_pred, average: str = "weighted") -> float:
    """Weighted F1 (per-class F1 weighted by support) or macro F1 (their plain mean)
    (chapters/behavior-atlas/01_unification.md)."""
    if average not in ("weighted", "macro"):
        raise ValueError(f"average must be 'weighted' or 'macro', got {average!r}")
    _, f, support = per_class_f1(y_true, y_pred)
    if average == "macro":
        return float(f.mean())
    return float((f * support).sum() / support.sum())


def task_scores(scores: dict, tasks: dict) -> dict:
    """{task: mean of its datasets' scores} from {dataset: score} and {dataset: task}: the paper reports one number
    per task (chapters/behavior-atlas/01_unification.md)."""
    if not isinstance(scores, dict) or not isinstance(tasks, dict):
        raise ValueError("scores and tasks must be dicts keyed by dataset")
    missing = [d for d in scores if d not in tasks]
    if missing:
        raise ValueError(f"tasks has no task for datasets {missing}")
    out: dict = {}
    for d, s in scores.items():
        out.setdefault(tasks[d], []).append(s)
    return {t: float(np.mean(v)) for t, v in out.items()}
