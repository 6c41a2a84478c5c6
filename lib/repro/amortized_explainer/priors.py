"""The prior explainers, from captum: the eight of DeepFaith's text/tabular configuration plus Shapley value
sampling, each timed, each reduced to one value per group.

Explained in chapters/amortized-explainer/02_experiments.md. All explain the softmax probability of the predicted
class with baseline 0; GradientSHAP draws its baselines from the explainer-training inputs; LIME and KernelSHAP use
100 samples and IG 20 steps, as in the paper's configuration.
"""
from __future__ import annotations

import warnings

import torch

from .faithfulness.perturb import group_attributions
from ..common.checks import check_int
from ..common.timing import stopwatch

__all__ = ["PRIORS", "explain", "explain_all"]

#: The priors in the order dedup keeps them (the first of two near-duplicates survives).
PRIORS = ("IG", "GradientSHAP", "DeepLIFT", "Saliency", "Occlusion", "FeatureAblation", "LIME", "KernelSHAP",
          "ShapleyValueSampling")


def _mask(x, groups):
    return groups.reshape(1, *x.shape[1:]).expand_as(x).contiguous()


def explain(method: str, prob: torch.nn.Module, x: torch.Tensor, groups: torch.Tensor, *, reference=None,
            n_samples: int = 100, ig_steps: int = 20, seed: int = 0) -> torch.Tensor:
    """Feature attributions ``(n, *feature_shape)`` of the predicted class by captum's ``method``.

    Explained in chapters/amortized-explainer/02_experiments.md. ``reference`` are the baseline draws of
    GradientSHAP; ``n_samples`` those of LIME and KernelSHAP. Captum's warnings are silenced here, at the source.
    """
    from captum import attr as ca

    if method not in PRIORS:
        raise ValueError(f"method must be one of {', '.join(PRIORS)}; got {method!r}")
    n_samples, ig_steps = check_int("n_samples", n_samples, 2), check_int("ig_steps", ig_steps, 2)
    torch.manual_seed(check_int("seed", seed, 0))
    with torch.no_grad():
        t = prob(x).argmax(1)
    x = x.clone().requires_grad_(method in ("IG", "GradientSHAP", "DeepLIFT", "Saliency"))
    mask = _mask(x, groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "IG":
            a = ca.IntegratedGradients(prob).attribute(x, baselines=0.0, target=t, n_steps=ig_steps)
        elif method == "GradientSHAP":
            ref = torch.zeros_like(x[:1]) if reference is None else reference
            a = ca.GradientShap(prob).attribute(x, baselines=ref, target=t, n_samples=5)
        elif method == "DeepLIFT":
            a = ca.DeepLift(prob).attribute(x, baselines=0.0, target=t)
        elif method == "Saliency":
            a = ca.Saliency(prob).attribute(x, target=t)
        elif method == "Occlusion":
            window = tuple(1 for _ in x.shape[1:]) if x.ndim == 2 else (1, 2, 2)
            a = ca.Occlusion(prob).attribute(x, sliding_window_shapes=window, strides=window, baselines=0.0,
                                             target=t)
        elif method == "FeatureAblation":
            a = ca.FeatureAblation(prob).attribute(x, baselines=0.0, target=t, feature_mask=mask)
        elif method == "LIME":
            a = ca.Lime(prob).attribute(x, baselines=0.0, target=t, feature_mask=mask, n_samples=n_samples,
                                        perturbations_per_eval=n_samples)
        elif method == "KernelSHAP":
            a = ca.KernelShap(prob).attribute(x, baselines=0.0, target=t, feature_mask=mask, n_samples=n_samples,
                                              perturbations_per_eval=n_samples)
        else:
            a = ca.ShapleyValueSampling(prob).attribute(x, baselines=0.0, target=t, feature_mask=mask,
                                                        n_samples=10, perturbations_per_eval=64)
    return a.detach()


def explain_all(prob, x, groups, n_groups, *, reference=None, methods=PRIORS, seed: int = 0, **kw):
    """``({method: (n, G) group attributions}, {method: seconds per input})`` for every prior.

    Explained in chapters/amortized-explainer/02_experiments.md.
    """
    out, secs = {}, {}
    explain("IG", prob, x[:2], groups, ig_steps=2)          # warm-up: captum's import and first-call costs
    for m in methods:
        with stopwatch() as watch:
            a = explain(m, prob, x, groups, reference=reference, seed=seed, **kw)
        secs[m] = watch.seconds / len(x)
        out[m] = group_attributions(a, x.shape, groups, n_groups)
    return out, secs
