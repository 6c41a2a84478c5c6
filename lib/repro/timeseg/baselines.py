"""The explanations TimeSeg is compared with: integrated gradients and sliding-window occlusion (captum), a
fixed-patch LIME (ours, in the spirit of LIMESegment), and random segments.

Explained in chapters/timeseg/02_experiments.md. Point-wise attributions become masks by keeping, per series, the
same number of time steps as TimeSeg's explanation of that series (``top_k_mask``: matched sparsity). All methods
explain the black box's probability of its own predicted class, with each series' temporal mean as the baseline
(the fill TimeSeg's reward uses).
"""
from __future__ import annotations

import numpy as np
import torch

from ..common.checks import check_int, check_positive

__all__ = ["prob_of", "integrated_gradients", "occlusion", "patch_ablation", "lime_patches", "top_k_mask",
           "random_segments", "removal_window"]


def prob_of(model):
    """``x -> softmax(model(x))``: the probabilities that the attributions explain. Explained in
    chapters/timeseg/02_experiments.md."""
    return lambda x: torch.softmax(model(x), -1)


def _mean_baseline(x):
    return x.mean(-1, keepdim=True).expand_as(x).contiguous()


def integrated_gradients(model, x, target, n_steps: int = 32) -> torch.Tensor:
    """Captum's integrated gradients from the mean baseline, as absolute values ``|IG|`` (n, T).

    Explained in chapters/timeseg/02_experiments.md.
    """
    from captum.attr import IntegratedGradients

    x = torch.as_tensor(x, dtype=torch.float32)
    ig = IntegratedGradients(prob_of(model))
    a = ig.attribute(x, baselines=_mean_baseline(x), target=torch.as_tensor(target), n_steps=check_int("n_steps", n_steps),
                     internal_batch_size=max(1, 8192 // max(1, x.shape[0])) * x.shape[0])
    return a.detach().abs()


def occlusion(model, x, target, window: int = 10, stride: int = 5) -> torch.Tensor:
    """Captum's sliding-window occlusion (window and stride in time steps) with the mean baseline: the drop in
    probability, averaged over the windows covering each step. Explained in chapters/timeseg/02_experiments.md."""
    from captum.attr import Occlusion

    x = torch.as_tensor(x, dtype=torch.float32)
    occ = Occlusion(prob_of(model))
    return occ.attribute(x, sliding_window_shapes=(check_int("window", window),), strides=(check_int("stride", stride),),
                         baselines=_mean_baseline(x), target=torch.as_tensor(target),
                         perturbations_per_eval=64).detach()


def _patches(length: int, patch: int) -> torch.Tensor:
    return torch.arange(length) // check_int("patch", patch)


def patch_ablation(model, x, target, patch: int = 10) -> torch.Tensor:
    """Captum's FeatureAblation over fixed patches of ``patch`` steps (mean baseline): the probability drop when
    each patch alone is removed. Explained in chapters/timeseg/02_experiments.md."""
    from captum.attr import FeatureAblation

    x = torch.as_tensor(x, dtype=torch.float32)
    fa = FeatureAblation(prob_of(model))
    groups = _patches(x.shape[1], patch).expand_as(x).contiguous()
    return fa.attribute(x, baselines=_mean_baseline(x), target=torch.as_tensor(target), feature_mask=groups,
                        perturbations_per_eval=16).detach()


@torch.no_grad()
def lime_patches(model, x, target, patch: int = 10, n_samples: int = 200, width: float = 0.25,
                 ridge: float = 1e-2, seed: int = 0) -> torch.Tensor:
    """A fixed-patch LIME, batched (our re-implementation; LIMESegment has no package): ``n_samples`` random
    keep/remove patterns ``z`` per series, the probability of the target on each (removed patches mean-filled),
    a weighted ridge fit with LIME's exponential kernel on the cosine distance of ``z`` to all-ones; each time
    step gets its patch's coefficient. Explained in chapters/timeseg/02_experiments.md."""
    x = torch.as_tensor(x, dtype=torch.float32)
    n, length = x.shape
    groups = _patches(length, patch)
    n_p = int(groups.max()) + 1
    gen = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    z = torch.rand(n, check_int("n_samples", n_samples), n_p, generator=gen) < 0.5
    z[:, 0] = True
    keep = z[:, :, groups]                                                    # (n, S, T)
    xs = torch.where(keep, x[:, None], x.mean(-1)[:, None, None].expand(n, 1, length))
    target = torch.as_tensor(target).long()
    p = torch.softmax(model(xs.reshape(-1, length)), -1).reshape(n, n_samples, -1)
    f = p.gather(2, target[:, None, None].expand(n, n_samples, 1))[..., 0]
    zf = z.float()
    cos = zf.sum(-1) / (np.sqrt(n_p) * zf.sum(-1).clamp_min(1).sqrt())
    w = torch.exp(-((1 - cos) ** 2) / check_positive("width", width) ** 2)
    design = torch.cat([zf, torch.ones(n, n_samples, 1)], -1)               # intercept last
    a = design.transpose(1, 2) @ (w[..., None] * design) + ridge * torch.eye(n_p + 1)
    b = design.transpose(1, 2) @ (w * f)[..., None]
    coef = torch.linalg.solve(a, b)[:, :n_p, 0]
    return coef[:, groups]


def top_k_mask(attribution, budget) -> torch.Tensor:
    """Per series, the ``budget[i]`` time steps with the largest attribution (ties to the earlier step).

    Explained in chapters/timeseg/02_experiments.md.
    """
    a = torch.as_tensor(attribution, dtype=torch.float32)
    k = torch.as_tensor(budget).long()
    if k.shape != (a.shape[0],):
        raise ValueError(f"budget must hold one count per series ({a.shape[0]}); got shape {tuple(k.shape)}")
    order = torch.sort(a, dim=-1, descending=True, stable=True).indices
    rank = torch.empty_like(order)
    rank.scatter_(1, order, torch.arange(a.shape[1]).expand_as(order).contiguous())
    return rank < k[:, None]


def random_segments(segments, length: int, seed: int = 0, tries: int = 100) -> torch.Tensor:
    """Masks with, per series, segments of the same lengths as ``segments[i]`` (a list of ``(start, end)``) at
    uniformly random, non-overlapping places. Explained in chapters/timeseg/02_experiments.md."""
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    out = torch.zeros(len(segments), length, dtype=torch.bool)
    for i, segs in enumerate(segments):
        for s, e in sorted(segs, key=lambda p: p[0] - p[1]):                # longest first
            ell = e - s + 1
            for _ in range(tries):
                a = int(rng.integers(0, length - ell + 1))
                if not bool(out[i, a:a + ell].any()):
                    out[i, a:a + ell] = True
                    break
    return out


@torch.no_grad()
def removal_window(model, x, target, budget, pieces: int = 1) -> torch.Tensor:
    """The mask ``(n, T)`` of up to ``pieces`` disjoint contiguous windows per series, ``budget[i]`` steps in all
    (fewer where no disjoint window of the next width is left), chosen greedily so that removing them (mean fill) lowers the black box's probability of ``target[i]`` the most: a
    segment explanation built for comprehensiveness, by exhaustive search over each window's start.

    Explained in chapters/timeseg/02_experiments.md (the positive control of the GunPoint comprehensiveness claim).
    """
    from .env import mean_fill

    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    n, length = x.shape
    budget, pieces = torch.as_tensor(budget).long(), check_int("pieces", pieces)
    if budget.shape != (n,) or bool((budget < 1).any()) or bool((budget > length).any()):
        raise ValueError(f"budget must hold one length in [1, {length}] per series; got {budget.tolist()}")
    t = torch.arange(length)
    out = torch.zeros(n, length, dtype=torch.bool)
    for i in range(n):
        for j in range(pieces):
            width = int(budget[i]) // pieces + (j < int(budget[i]) % pieces)
            starts = torch.arange(length - width + 1)
            windows = (t[None] >= starts[:, None]) & (t[None] < starts[:, None] + width)
            windows = windows[~(windows & out[i]).any(-1)] | out[i]      # disjoint from the windows chosen so far
            if width == 0 or len(windows) == 0:
                break
            p = torch.softmax(model(mean_fill(x[i].expand(len(windows), length), ~windows)), -1)[:, int(target[i])]
            out[i] = windows[int(p.argmin())]
    return out
