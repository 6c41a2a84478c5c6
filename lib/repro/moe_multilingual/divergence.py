"""Routing distributions and their divergence from English, layer by layer.

Explained in chapters/moe-multilingual/01_theory.md ("Measuring routing divergence"). For a sequence i of language
l at MoE layer j, the routing distribution q is the mean over its tokens of the renormalised top-k gates (the
"total actual weight" of the brief); the divergence from English is the Jensen–Shannon divergence (in nats) of q and
the parallel English sequence's q, divided by the room left by their entropies, log E - (H(P) + H(Q)) / 2, and
averaged over the parallel sequences.
"""
from __future__ import annotations

import numpy as np
import torch

__all__ = ["js_divergence", "entropy", "normalized_js", "sequence_routing", "divergence_by_layer", "divergence_items"]


def _probs(name, x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.shape[-1] < 2:
        raise ValueError(f"{name} must hold distributions over at least 2 outcomes on its last axis")
    if (x < -1e-12).any() or not np.allclose(x.sum(-1), 1, atol=1e-6):
        raise ValueError(f"{name} must be non-negative and sum to 1 along its last axis")
    return np.clip(x, 0, None)


def _xlogy(x, y):
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1) / np.where(x > 0, y, 1)), 0.0)


def js_divergence(p, q) -> np.ndarray:
    """Jensen–Shannon divergence in nats, (KL(P||M) + KL(Q||M)) / 2 with M = (P + Q) / 2, along the last axis.

    scipy's `scipy.spatial.distance.jensenshannon` returns its square root (a metric). Explained in
    chapters/moe-multilingual/01_theory.md.
    """
    p, q = _probs("p", p), _probs("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")
    m = (p + q) / 2
    return 0.5 * _xlogy(p, m).sum(-1) + 0.5 * _xlogy(q, m).sum(-1)


def entropy(p) -> np.ndarray:
    """Shannon entropy in nats along the last axis. Explained in chapters/moe-multilingual/01_theory.md."""
    p = _probs("p", p)
    return -np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0.0).sum(-1)


def normalized_js(p, q, floor: float = 1e-6) -> np.ndarray:
    """The entropy-normalised divergence JSD(P, Q) / max(log E - (H(P) + H(Q)) / 2, floor) of Eq. (mm-div).

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    p, q = _probs("p", p), _probs("q", q)
    room = np.log(p.shape[-1]) - 0.5 * (entropy(p) + entropy(q))
    return js_divergence(p, q) / np.maximum(room, floor)


def sequence_routing(gates: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
    """Per sequence, the mean over its masked tokens of the top-k gates: (batch, length, E) -> (batch, E).

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    if gates.dim() != 3 or mask.shape != gates.shape[:2]:
        raise ValueError(f"gates must be (batch, length, E) and mask (batch, length); got {tuple(gates.shape)} "
                         f"and {tuple(mask.shape)}")
    m = mask.to(gates.dtype).unsqueeze(-1)
    counts = m.sum(1)
    if (counts == 0).any():
        raise ValueError("mask selects no token in some sequence")
    return ((gates * m).sum(1) / counts).detach().double().numpy()


def divergence_by_layer(routing: np.ndarray, reference: int = 0, normalized: bool = True) -> np.ndarray:
    """Div[l, j]: the mean over parallel sequences of the divergence of language l's routing from the reference
    language's at layer j. `routing` is (languages, layers, sequences, E), from `sequence_routing`.

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    return divergence_items(routing, reference, normalized).mean(-1)


def divergence_items(routing: np.ndarray, reference: int = 0, normalized: bool = True) -> np.ndarray:
    """The divergence of each sequence of language l from its parallel sequence in the reference language, at each
    layer: (languages, layers, sequences); `divergence_by_layer` is its mean over the sequences, and a bootstrap over
    the sequences gives that mean's interval. Explained in chapters/moe-multilingual/02_experiments.md.
    """
    r = np.asarray(routing, dtype=float)
    if r.ndim != 4:
        raise ValueError(f"routing must be (languages, layers, sequences, E), got shape {r.shape}")
    if not 0 <= reference < r.shape[0]:
        raise ValueError(f"reference must index a language 0..{r.shape[0] - 1}, got {reference}")
    fn = normalized_js if normalized else js_divergence
    return fn(r, np.broadcast_to(r[reference], r.shape))
