"""The IBBI views of the brain attention: the brain-directed view ``B^(t)`` and the image-directed view ``m_R``.

Explained in chapters/neuroadapter/01_theory.md. The sampler records, at every DDIM step ``t`` and attention site
``ℓ``, the softmax probabilities over brain tokens averaged over heads, ``Ā^(ℓ,t) = (1/H) Σ_h A^(ℓ,h,t)`` of shape
(n, q_ℓ, p). Both views are linear in ``A``, so averaging over heads first changes nothing:

- ``B^(t)_j = 1/(H Σ_ℓ q_ℓ) Σ_ℓ Σ_h Σ_i A^(ℓ,h,t)_ij``: a query-count weighted average over layers; it sums to 1;
- ``m^(ℓ,t)_R(i) = 1/(H |R|) Σ_h Σ_{j∈R} A^(ℓ,h,t)_ij``: per query, reshaped to √q_ℓ × √q_ℓ, bilinearly upsampled
  to the image, normalised to sum 1, averaged over layers.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional as F

__all__ = ["brain_view", "image_view", "spatial_entropy", "roi_share", "peak_distance"]


def _check_step(step) -> None:
    if not isinstance(step, dict) or not step:
        raise ValueError("step must be a non-empty dict {site: attention (n, queries, tokens)}")
    shapes = {tuple(a.shape[::2]) for a in step.values()}
    if any(a.ndim != 3 for a in step.values()) or len(shapes) != 1:
        raise ValueError(f"step's attention tensors must be (n, queries, tokens) with one n and one p; got "
                         f"{[tuple(a.shape) for a in step.values()]}")


def brain_view(step: dict) -> torch.Tensor:
    """``B^(t)`` (n, p) of one step's head-averaged attention ``{site: (n, q_ℓ, p)}``; each row sums to 1.

    Explained in chapters/neuroadapter/01_theory.md.
    """
    _check_step(step)
    total = sum(a.shape[1] for a in step.values())
    return sum(a.sum(1) for a in step.values()) / total


def image_view(step: dict, parcels, size: int = 16) -> torch.Tensor:
    """``m_R`` (n, size, size) of the parcels ``parcels`` (token indices of R), averaged over the sites.

    Explained in chapters/neuroadapter/01_theory.md. Each site's map is upsampled bilinearly to ``size`` and
    normalised to sum 1 before the average, so the result sums to 1 per image.
    """
    _check_step(step)
    idx = torch.as_tensor(np.atleast_1d(parcels), dtype=torch.long)
    p = next(iter(step.values())).shape[2]
    if idx.numel() == 0 or int(idx.min()) < 0 or int(idx.max()) >= p:
        raise ValueError(f"parcels must be a non-empty set of token indices in [0, {p - 1}]; got {parcels!r}")
    maps = []
    for a in step.values():
        m = a[:, :, idx].mean(-1)
        side = int(math.isqrt(m.shape[1]))
        m = F.interpolate(m.view(-1, 1, side, side), size=(size, size), mode="bilinear", align_corners=False)[:, 0]
        maps.append(m / m.sum((1, 2), keepdim=True))
    return sum(maps) / len(maps)


def spatial_entropy(maps: torch.Tensor) -> torch.Tensor:
    """Entropy of each map (…, h, w) as a distribution over pixels, in units of its maximum ``log(h w)``.

    Explained in chapters/neuroadapter/01_theory.md: 1 is uniform (diffuse), 0 is one pixel (focused).
    """
    if maps.ndim < 2:
        raise ValueError(f"maps must have at least 2 dimensions (h, w); got shape {tuple(maps.shape)}")
    p = maps.flatten(-2)
    p = p / p.sum(-1, keepdim=True)
    return -(p * torch.log(p.clamp_min(1e-12))).sum(-1) / math.log(p.shape[-1])


def roi_share(b: torch.Tensor, roi_of) -> dict:
    """The share of ``B`` (n, p) or (p,) that each ROI receives, summed over its parcels and averaged over images.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    b = b if b.ndim == 2 else b[None]
    if b.shape[1] != len(roi_of):
        raise ValueError(f"roi_of must name the ROI of each of the {b.shape[1]} tokens; got {len(roi_of)}")
    rois = list(dict.fromkeys(roi_of))
    return {r: float(b[:, [i for i, x in enumerate(roi_of) if x == r]].sum(1).mean()) for r in rois}


def peak_distance(maps: torch.Tensor, centres) -> np.ndarray:
    """Distance in pixels from the peak of each map (k, h, w) to its ``centres`` (k, 2) (row, column).

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    c = np.asarray(centres, dtype=float)
    if maps.ndim != 3 or c.shape != (maps.shape[0], 2):
        raise ValueError(f"maps must be (k, h, w) and centres (k, 2); got {tuple(maps.shape)} and {c.shape}")
    flat = maps.flatten(1).argmax(1).numpy()
    peaks = np.stack([flat // maps.shape[2], flat % maps.shape[2]], 1)
    return np.sqrt(((peaks - c) ** 2).sum(1))
