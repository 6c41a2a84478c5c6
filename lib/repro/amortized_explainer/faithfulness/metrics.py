"""The ten faithfulness metrics of DeepFaith (Guo et al., ICLR 2026), vectorised in torch over a batch.

Explained in chapters/amortized-explainer/01_theory.md. Notation: ``f`` is the model's score of the explained class
``ŷ`` (its argmax on the clean input unless ``target`` is given), ``x \\ I`` is ``x`` with the groups in ``I``
replaced by the baseline ``b``, ``Δ(I) = f(x) − f(x \\ I)``, ``a_g`` the attribution of group ``g`` (feature
attributions are summed over each group) and ``π`` the groups sorted by decreasing ``a``. Curves remove (or insert)
``step`` groups at a time, ``L = ⌈G / step⌉`` steps, and their area is the trapezoid rule on ``[0, 1]``.

| metric | score per input | better |
|---|---|---|
| ``faithfulness_correlation`` (FC) | Pearson over ``k`` random subsets of size ``s`` of (Σ_I a, Δ(I)) | higher |
| ``faithfulness_estimate`` (FE) | Pearson over chunks of π, each removed alone, of (Σ_chunk a, Δ) | higher |
| ``monotonicity_correlation`` (MC) | Spearman over chunks of reversed π of (Σ_chunk a, (f(x\\I)−f(x))²/f(x)²) | higher |
| ``infidelity`` (INF) | Pearson over Bernoulli(½) subsets of (Σ_I a, Δ(I)); the repository's correlation form | higher |
| ``deletion`` (DEL) | area under f while the top of π is removed cumulatively | lower |
| ``insertion`` (INS) | area under f while the top of π is inserted into the baseline | higher |
| ``negative_perturbation`` (NEG) | area under f, removing the bottom of π first, frozen once argmax ≠ ŷ | higher |
| ``positive_perturbation`` (POS) | the same, removing the top of π first | lower |
| ``region_perturbation`` (RP) | AOPC: mean over steps 0..L of f(x) − f(x \\ top-k) | higher |
| ``irof`` (IROF) | area under 1 − f(x \\ top-k)/f(x) | higher |

``infidelity_mse`` is the classic infidelity of Yeh et al. (2019), E[(Iᵀa − (f(x) − f(x − I)))²] for given
perturbations ``I``, lower is better; it is the one metric here that captum also implements, and the unit tests
compare the two. A correlation over values that do not vary is 0 (not NaN).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ...common.checks import check_int
from .perturb import as_groups, group_attributions, perturb, reference, scores_on

__all__ = ["METRICS", "HIGHER_IS_BETTER", "pearson", "spearman", "faithfulness_correlation", "faithfulness_estimate",
           "monotonicity_correlation", "infidelity", "deletion", "insertion", "negative_perturbation",
           "positive_perturbation", "region_perturbation", "irof", "infidelity_mse", "evaluate", "mean_ranks"]

#: The ten metrics in the paper's order, short names.
METRICS = ("FC", "FE", "MC", "INF", "DEL", "INS", "NEG", "POS", "RP", "IROF")
#: Direction of each metric: True where higher is better.
HIGHER_IS_BETTER = {"FC": True, "FE": True, "MC": True, "INF": True, "DEL": False, "INS": True, "NEG": True,
                    "POS": False, "RP": True, "IROF": True}


def pearson(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Pearson correlation along the last dimension; 0 where either side does not vary.

    Explained in chapters/amortized-explainer/01_theory.md (the τ of the saliency-view metrics).
    """
    u = u - u.mean(-1, keepdim=True)
    v = v - v.mean(-1, keepdim=True)
    prod = (u * u).sum(-1) * (v * v).sum(-1)
    num = (u * v).sum(-1)
    den = torch.sqrt(prod.clamp_min(1e-24))          # clamped first, so the gradient stays finite at 0
    return torch.where(prod > 1e-24, num / den, torch.zeros_like(num))


def _ranks(u: torch.Tensor) -> torch.Tensor:
    """Average ranks (ties share their mean rank) along the last dimension."""
    order = torch.sort(u, dim=-1, stable=True).indices
    r = torch.empty_like(u)
    r.scatter_(-1, order, torch.arange(u.shape[-1], dtype=u.dtype).expand_as(u).contiguous())
    # average the ranks of ties
    eq = (u[..., :, None] == u[..., None, :]).to(u.dtype)
    return (eq * r[..., None, :]).sum(-1) / eq.sum(-1)


def spearman(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Spearman correlation (Pearson of average ranks) along the last dimension; 0 where either side is constant.

    Explained in chapters/amortized-explainer/01_theory.md (monotonicity correlation).
    """
    return pearson(_ranks(u), _ranks(v))


def _prep(model, x, a, groups, target):
    if not callable(model):
        raise ValueError("model must be callable: (n, *feature_shape) -> scores (n, classes)")
    x = torch.as_tensor(x, dtype=torch.float32)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (n, *feature_shape); got {tuple(x.shape)}")
    g, n_groups = as_groups(x.shape[1:], groups)
    ag = group_attributions(a, x.shape, g, n_groups)
    y0, t = reference(model, x, target)
    return x, g, n_groups, ag, y0, t


def _generator(seed) -> torch.Generator:
    return torch.Generator().manual_seed(check_int("seed", seed, low=0))


def _random_subsets(n, m, n_groups, size, gen) -> torch.Tensor:
    """(n, m, G) masks, each with `size` groups drawn uniformly without replacement."""
    keys = torch.rand(n, m, n_groups, generator=gen)
    return keys.argsort(-1) < size


def _chunks(ag: torch.Tensor, step: int, descending: bool) -> tuple[torch.Tensor, int]:
    """Rank position of every group in π (or reversed π) and the number of chunks."""
    order = torch.sort(ag, dim=-1, descending=descending, stable=True).indices
    pos = torch.empty_like(order)
    pos.scatter_(-1, order, torch.arange(ag.shape[-1]).expand_as(order).contiguous())
    return pos, math.ceil(ag.shape[-1] / step)


def _subset_correlation(model, x, ag, mask, baseline, g, y0, t):
    delta = y0[:, None] - scores_on(model, perturb(x, mask, baseline, g), t)
    sums = (mask.to(ag.dtype) * ag[:, None, :]).sum(-1)
    return pearson(sums, delta)


def faithfulness_correlation(model, x, a, *, baseline=0.0, groups=None, target=None, n_subsets: int = 100,
                             subset_size: int = 1, seed: int = 0) -> torch.Tensor:
    """FC (Bhatt et al., 2020): Pearson over ``n_subsets`` random subsets ``I`` of ``subset_size`` groups of
    (Σ_{g∈I} a_g, Δ(I)). Higher is better; one value per input.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    k, s = check_int("n_subsets", n_subsets, low=2), check_int("subset_size", subset_size)
    if s > G:
        raise ValueError(f"subset_size must be at most the number of groups ({G}); got {s}")
    mask = _random_subsets(x.shape[0], k, G, s, _generator(seed))
    return _subset_correlation(model, x, ag, mask, baseline, g, y0, t)


def infidelity(model, x, a, *, baseline=0.0, groups=None, target=None, n_subsets: int = 100,
               seed: int = 0) -> torch.Tensor:
    """INF in the DeepFaith repository's correlation form: Pearson over ``n_subsets`` Bernoulli(½) subsets ``I``
    of (Σ_{g∈I} a_g, Δ(I)). Higher is better. (Not the squared error of Yeh et al.; see ``infidelity_mse``.)

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    k = check_int("n_subsets", n_subsets, low=2)
    mask = torch.rand(x.shape[0], k, G, generator=_generator(seed)) < 0.5
    return _subset_correlation(model, x, ag, mask, baseline, g, y0, t)


def _chunk_effects(model, x, ag, baseline, g, y0, t, step, descending):
    pos, n_chunks = _chunks(ag, step, descending)
    chunk_of = pos // step                                            # (n, G)
    mask = chunk_of[:, None, :] == torch.arange(n_chunks)[None, :, None]   # (n, chunks, G)
    sums = (mask.to(ag.dtype) * ag[:, None, :]).sum(-1)
    return sums, scores_on(model, perturb(x, mask, baseline, g), t)


def faithfulness_estimate(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """FE (Alvarez-Melis & Jaakkola, 2018): walk π in chunks of ``step`` groups, remove each chunk alone from
    ``x``; Pearson over chunks of (Σ_chunk a, Δ(chunk)). Higher is better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    sums, ys = _chunk_effects(model, x, ag, baseline, g, y0, t, check_int("step", step), True)
    return pearson(sums, y0[:, None] - ys)


def monotonicity_correlation(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """MC (Nguyen & Martínez, 2020): chunks of reversed π (ascending a), each removed alone; Spearman over chunks of
    (Σ_chunk a, (f(x \\ chunk) − f(x))² / f(x)²). Higher is better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    sums, ys = _chunk_effects(model, x, ag, baseline, g, y0, t, check_int("step", step), False)
    effect = (ys - y0[:, None]) ** 2 / (y0[:, None] ** 2).clamp_min(1e-12)
    return spearman(sums, effect)


@torch.no_grad()
def _curve(model, x, ag, baseline, g, t, step, descending, insert):
    """Scores (n, L+1) and whether argmax is still ŷ, after removing (inserting) the first k·step groups of π."""
    pos, n_steps = _chunks(ag, step, descending)
    k = torch.arange(n_steps + 1) * step
    mask = pos[:, None, :] < k[None, :, None]                       # first k groups of the order
    if insert:
        mask = ~mask
    xs = perturb(x, mask, baseline, g)
    n, m = xs.shape[:2]
    out = model(xs.reshape(n * m, *xs.shape[2:])).reshape(n, m, -1)
    ys = out.gather(2, t[:, None, None].expand(n, m, 1))[..., 0]
    return ys, out.argmax(-1) == t[:, None]


def _area(ys: torch.Tensor) -> torch.Tensor:
    return torch.trapezoid(ys, dx=1.0 / (ys.shape[-1] - 1), dim=-1)


def _freeze(ys: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
    """Hold the curve at its value on the first step where the argmax left ŷ."""
    flipped = (~same).cumsum(-1) > 0
    first = torch.where(flipped.any(-1), flipped.float().argmax(-1), torch.full_like(ys[:, 0], ys.shape[1] - 1).long())
    held = ys.gather(1, first[:, None])
    return torch.where(flipped, held, ys)


def deletion(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """DEL (Petsiuk et al., 2018): area under f(x \\ top-k of π) as k goes from 0 to G. Lower is better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    return _area(_curve(model, x, ag, baseline, g, t, check_int("step", step), True, False)[0])


def insertion(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """INS: area under f of the baseline with the top-k groups of π put back, k from 0 to G. Higher is better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    return _area(_curve(model, x, ag, baseline, g, t, check_int("step", step), True, True)[0])


def negative_perturbation(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """NEG: area under f while the *least* attributed groups are removed first, the curve held once the argmax
    leaves ŷ. Higher is better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    return _area(_freeze(*_curve(model, x, ag, baseline, g, t, check_int("step", step), False, False)))


def positive_perturbation(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """POS: area under f while the *most* attributed groups are removed first, held once the argmax leaves ŷ.
    Lower is better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    return _area(_freeze(*_curve(model, x, ag, baseline, g, t, check_int("step", step), True, False)))


def region_perturbation(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """RP (Samek et al., 2017), AOPC: the mean over k = 0..L steps of f(x) − f(x \\ top-k·step of π). Higher is
    better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    ys = _curve(model, x, ag, baseline, g, t, check_int("step", step), True, False)[0]
    return (y0[:, None] - ys).mean(-1)


def irof(model, x, a, *, baseline=0.0, groups=None, target=None, step: int = 1) -> torch.Tensor:
    """IROF (Rieger & Hansen, 2020), per group instead of per superpixel: area under 1 − f(x \\ top-k)/f(x).
    Higher is better.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    ys = _curve(model, x, ag, baseline, g, t, check_int("step", step), True, False)[0]
    return _area(1 - ys / y0[:, None].clamp_min(1e-12))


@torch.no_grad()
def infidelity_mse(model, x, a, perturbations, *, target=None) -> torch.Tensor:
    """Classic infidelity (Yeh et al., 2019) for given perturbations ``I`` of shape ``(n, m, *feature_shape)``:
    mean over ``m`` of (Σ I·a − (f(x) − f(x − I)))². Lower is better; captum.metrics.infidelity computes the same.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    x = torch.as_tensor(x, dtype=torch.float32)
    a = torch.as_tensor(a, dtype=torch.float32)
    p = torch.as_tensor(perturbations, dtype=torch.float32)
    if tuple(a.shape) != tuple(x.shape):
        raise ValueError(f"a must have the inputs' shape {tuple(x.shape)}; got {tuple(a.shape)}")
    if p.ndim != x.ndim + 1 or p.shape[0] != x.shape[0] or tuple(p.shape[2:]) != tuple(x.shape[1:]):
        raise ValueError(f"perturbations must have shape (n, m, *feature_shape); got {tuple(p.shape)}")
    y0, t = reference(model, x, target)
    ys = scores_on(model, x[:, None] - p, t)
    dots = (p * a[:, None]).reshape(*p.shape[:2], -1).sum(-1)
    return ((dots - (y0[:, None] - ys)) ** 2).mean(-1)


@torch.no_grad()
def evaluate(model, x, a, *, baseline=0.0, groups=None, target=None, n_subsets: int = 100, subset_size: int = 1,
             step: int = 1, seed: int = 0) -> dict[str, torch.Tensor]:
    """All ten metrics ``{short name: (n,) scores}`` for one attribution, sharing the deletion curve.

    Explained in chapters/amortized-explainer/01_theory.md. ``seed`` fixes the random subsets of FC and INF, so
    two attributions of the same inputs are scored on the same perturbations.
    """
    x, g, G, ag, y0, t = _prep(model, x, a, groups, target)
    k, s, step = check_int("n_subsets", n_subsets, low=2), check_int("subset_size", subset_size), check_int("step", step)
    gen = _generator(seed)
    n = x.shape[0]
    out = {"FC": _subset_correlation(model, x, ag, _random_subsets(n, k, G, min(s, G), gen), baseline, g, y0, t)}
    sums, ys = _chunk_effects(model, x, ag, baseline, g, y0, t, step, True)
    out["FE"] = pearson(sums, y0[:, None] - ys)
    sums, ys = _chunk_effects(model, x, ag, baseline, g, y0, t, step, False)
    out["MC"] = spearman(sums, (ys - y0[:, None]) ** 2 / (y0[:, None] ** 2).clamp_min(1e-12))
    out["INF"] = _subset_correlation(model, x, ag, torch.rand(n, k, G, generator=gen) < 0.5, baseline, g, y0, t)
    down, same = _curve(model, x, ag, baseline, g, t, step, True, False)
    out["DEL"] = _area(down)
    out["INS"] = _area(_curve(model, x, ag, baseline, g, t, step, True, True)[0])
    out["NEG"] = _area(_freeze(*_curve(model, x, ag, baseline, g, t, step, False, False)))
    out["POS"] = _area(_freeze(down, same))
    out["RP"] = (y0[:, None] - down).mean(-1)
    out["IROF"] = _area(1 - down / y0[:, None].clamp_min(1e-12))
    return {m: out[m] for m in METRICS}


def mean_ranks(scores: dict[str, dict[str, float]], metrics=METRICS) -> tuple[dict[str, float], dict]:
    """``(mean rank per method, {metric: {method: rank}})`` from ``{method: {metric: mean score}}``.

    Explained in chapters/amortized-explainer/02_experiments.md. Rank 1 is the best in each metric's direction;
    ties share the average rank; the mean rank averages over ``metrics``.
    """
    from scipy.stats import rankdata

    methods = list(scores)
    if not methods:
        raise ValueError("scores must hold at least one method")
    per = {}
    for m in metrics:
        if m not in HIGHER_IS_BETTER:
            raise ValueError(f"metrics must be among {METRICS}; got {m!r}")
        v = np.array([scores[k][m] for k in methods], dtype=float)
        r = rankdata(-v if HIGHER_IS_BETTER[m] else v, method="average")
        per[m] = dict(zip(methods, r.tolist()))
    return {k: float(np.mean([per[m][k] for m in metrics])) for k in methods}, per
