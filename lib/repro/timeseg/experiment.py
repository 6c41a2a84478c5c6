"""The chapter's experiment in a few calls: the models of a seed, every method's explanation of a test set at
matched sparsity, and the scores of each.

Explained in chapters/timeseg/02_experiments.md.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from ..common.checks import check_int
from ..common.timing import stopwatch
from .agent import TimeSegConfig, explain
from .baselines import integrated_gradients, lime_patches, occlusion, patch_ablation, random_segments, top_k_mask
from .env import boundaries, count_segments, soft_target
from .metrics import auroc, auroc_drop, f1_iou
from .shipped import load_models, make_models, test_data

__all__ = ["METHODS", "Comparison", "models_for", "compare", "score", "timeseg_config"]

#: The explanations compared, in the order of the tables.
METHODS = ("TimeSeg", "IG", "Occlusion", "LIME (patches)", "Random segments")


def models_for(scale: str, seed: int, progress=None) -> dict:
    """The shipped models of ``seed`` at ci; at full, ``make_models(seed)`` retrains them here.

    Explained in chapters/timeseg/02_experiments.md.
    """
    return make_models(seed, progress) if scale == "full" else load_models(seed)


def timeseg_config(lam: float = 0.3, **changes) -> TimeSegConfig:
    """The chapter's TimeSeg settings with ``λ = lam``. Explained in chapters/timeseg/02_experiments.md."""
    return replace(TimeSegConfig(), lam=lam, **changes)


@dataclass
class Comparison:
    """One data set explained by every method: the test series, TimeSeg's explanation, the masks of all methods
    (matched per series to TimeSeg's number of steps) and the seconds per series of each.

    Explained in chapters/timeseg/02_experiments.md.
    """

    data: object
    timeseg: object
    masks: dict
    seconds: dict
    target: torch.Tensor


def compare(models: dict, name: str, n_test: int, seed: int, lam: float = 0.3, lime_samples: int = 64,
            patch: int = 10, ig_steps: int = 20, methods=METHODS) -> Comparison:
    """Explain ``n_test`` test series of ``name`` with TimeSeg (the ``λ = lam`` policy) and the baselines named in
    ``methods``. Explained in chapters/timeseg/02_experiments.md.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown or "TimeSeg" not in methods:
        raise ValueError(f"methods must include 'TimeSeg' and be among {METHODS}; got {tuple(methods)}")
    te = test_data(name, check_int("n_test", n_test), seed)
    model = models["blackbox"][name]
    policy = models["policy"][f"{name}-lam{lam:g}"]
    x = torch.as_tensor(te.x)
    cfg = timeseg_config(lam)
    ex = explain(policy, model, x, cfg)
    target = soft_target(model, x).argmax(-1)
    budget = ex.mask.sum(-1)
    masks, seconds = {"TimeSeg": ex.mask}, {"TimeSeg": ex.seconds / len(x)}
    for label, fn in (("IG", lambda: integrated_gradients(model, x, target, n_steps=ig_steps)),
                      ("Occlusion", lambda: occlusion(model, x, target, window=patch, stride=patch // 2)),
                      ("LIME (patches)", lambda: lime_patches(model, x, target, patch=patch,
                                                              n_samples=lime_samples, seed=seed))):
        if label not in methods:
            continue
        with stopwatch() as watch:
            a = fn()
        seconds[label] = watch.seconds / len(x)
        masks[label] = top_k_mask(a, budget)
    masks["Random segments"] = random_segments(ex.segments, x.shape[1], seed=seed)
    return Comparison(te, ex, masks, seconds, target)


def score(models: dict, name: str, comp: Comparison) -> dict:
    """``{method: {F1, IoU, boundaries, segments, fraction, sufficiency, comprehensiveness}}`` (means over the
    series; F1 and IoU only where there is a ground truth; AUROC drops in points).

    Explained in chapters/timeseg/02_experiments.md.
    """
    model = models["blackbox"][name]
    out = {}
    for label, m in comp.masks.items():
        row = {"boundaries": float(boundaries(m).float().mean()), "segments": float(count_segments(m).float().mean()),
               "fraction": float(m.float().mean()),
               "sufficiency": auroc_drop(model, comp.data.x, comp.data.y, m, keep=True),
               "comprehensiveness": auroc_drop(model, comp.data.x, comp.data.y, m, keep=False)}
        if comp.data.truth is not None:
            f1, iou = f1_iou(m, comp.data.truth)
            row["F1"], row["IoU"] = float(f1.mean()), float(iou.mean())
        out[label] = row
    out["_auroc"] = auroc(model, comp.data.x, comp.data.y)
    return out


def captum_patch_seconds(model, x, target, patch: int = 10) -> float:
    """Seconds per series of captum's FeatureAblation over fixed patches (the speed peer).

    Explained in chapters/timeseg/02_experiments.md.
    """
    with stopwatch() as watch:
        patch_ablation(model, torch.as_tensor(np.asarray(x)), target, patch)
    return watch.seconds / len(x)


__all__.append("captum_patch_seconds")
