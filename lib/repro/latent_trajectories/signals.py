"""The latent-trajectory (LT) signals of a reasoning trace, the cross-layer baselines, and the per-step signals of
early selection.

Explained in chapters/latent-trajectories/01_theory.md. A trace's hidden states are averaged over its N segments,
one per layer: h_1, ..., h_N (each of width d). With the drift u = h_N - h_1 and the steps v_n = h_n - h_{n-1}:

    Net     = ||u|| / (N - 1)
    Cum     = sum_{n=2..N} ||v_n||
    Aligned = mean_{n=2..N} cos(v_n, u)

per layer, then averaged over layers (N < 2 gives NaN). This follows `compute_lt_signals` of the official code
(martinagvilas/LT-signals), whose docstring writes Net as ||u|| / N but whose code divides by the number of steps,
N - 1. `reference_lt_signals` is a line-by-line port of that function, kept to test ours against.
"""
from __future__ import annotations

import numpy as np

from .traces import ANS, NL

SIGNALS = ("net", "cum", "aligned")


def _check_states(states) -> np.ndarray:
    states = np.asarray(states, dtype=np.float64)
    if states.ndim != 3:
        raise ValueError(f"states must be (n_layers, n_segments, d), got shape {states.shape}")
    return states


def lt_signals(states) -> dict[str, float]:
    """Net, Cumulative and Aligned change of one trace's segment states (n_layers, N, d), averaged over layers.

    Explained in chapters/latent-trajectories/01_theory.md.
    """
    h = _check_states(states)
    if h.shape[1] < 2:
        return {s: float("nan") for s in SIGNALS}
    u = h[:, -1] - h[:, 0]                                   # (L, d) drift
    v = np.diff(h, axis=1)                                   # (L, N-1, d) steps
    steps = np.linalg.norm(v, axis=-1)                       # (L, N-1)
    u_norm = np.linalg.norm(u, axis=-1)                      # (L,)
    cos = (v @ u[:, :, None])[..., 0] / np.maximum(steps * u_norm[:, None], 1e-8)
    return {"net": float((u_norm / v.shape[1]).mean()), "cum": float(steps.sum(1).mean()),
            "aligned": float(cos.mean(1).mean())}


def reference_lt_signals(averaged_hs) -> dict[str, list[float]]:
    """A line-by-line port of `compute_lt_signals` from martinagvilas/LT-signals (torch, per layer, not averaged),
    kept only to test `lt_signals` against. Explained in chapters/latent-trajectories/01_theory.md."""
    import torch
    import torch.nn.functional as F

    averaged_hs = torch.as_tensor(np.asarray(averaged_hs), dtype=torch.float64)
    metrics = {"net_change": [], "cumulative_change": [], "aligned_change": []}
    n_layers, N, _ = averaged_hs.shape
    for l in range(n_layers):
        H = averaged_hs[l]
        if N < 2:
            for key in metrics:
                metrics[key].append(float("nan"))
            continue
        h_first, h_last = H[0], H[-1]
        drift_vec = h_last - h_first
        net_norm = drift_vec.norm()
        step_vecs = H[1:] - H[:-1]
        S = step_vecs.size(0)
        step_sizes = step_vecs.norm(dim=-1)
        metrics["net_change"].append((net_norm / S).item() if S > 0 else float("nan"))
        metrics["cumulative_change"].append(step_sizes.sum().item())
        cos = F.cosine_similarity(step_vecs, drift_vec.unsqueeze(0), dim=-1)
        metrics["aligned_change"].append(cos.mean().item())
    return metrics


def layer_baselines(states) -> dict[str, float]:
    """LayerMag and LayerAng (Wang et al., as in the official `compute_trajectory` along layers): per segment, the
    norms (angles) of the layer-to-layer changes divided by the first-to-last-layer norm (angle), averaged over the
    layer steps and then over segments. Explained in chapters/latent-trajectories/01_theory.md."""
    h = _check_states(states)
    if h.shape[0] < 2:
        raise ValueError("states must have at least two layers for the cross-layer baselines")
    mag = np.linalg.norm(np.diff(h, axis=0), axis=-1)                       # (L-1, N)

    def angle(a, b):
        c = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1) + 1e-8)
        return np.arccos(np.clip(c, -1.0, 1.0))

    ang = angle(h[:-1], h[1:])
    mag_all = np.linalg.norm(h[-1] - h[0], axis=-1)
    ang_all = angle(h[0], h[-1])
    return {"layer_mag": float((mag / (mag_all + 1e-8)).mean(0).mean()),
            "layer_ang": float((ang / (ang_all + 1e-8)).mean(0).mean())}


def step_signals(states) -> dict[str, np.ndarray]:
    """The official per-step signals of early selection, after K = 1..N-1 steps: `net_by_step[K-1]` = layer-mean
    ||h_{K+1} - h_1|| / K and `cum_by_step[K-1]` = the running sum of the layer-mean step norms.

    Explained in chapters/latent-trajectories/01_theory.md.
    """
    h = _check_states(states)
    net = np.linalg.norm(h[:, 1:] - h[:, :1], axis=-1).mean(0)
    cum = np.cumsum(np.linalg.norm(np.diff(h, axis=1), axis=-1).mean(0))
    return {"net_by_step": net / np.arange(1, len(net) + 1), "cum_by_step": cum}


def thinking_span(tokens, prompt_len: int) -> tuple[int, int]:
    """(start, end) of the thinking part of one trace: from the question's closing NL (included, as the paper's code
    keeps `<think>` and its newline) to the position of `ANS` (excluded), or to the trace's end when no ANS was
    written. Explained in chapters/latent-trajectories/01_theory.md."""
    tokens = np.asarray(tokens)
    ans = np.flatnonzero(tokens[prompt_len:] == ANS)
    end = prompt_len + int(ans[0]) if len(ans) else len(tokens)
    return prompt_len - 1, end


def segment_means(hidden, tokens, prompt_len: int) -> np.ndarray:
    """Segment states of one trace, as the official code's `segments` mode: the boundaries are the NL tokens of the
    thinking span, and segment n averages positions [b_n, b_{n+1}) (a line, opened by the NL before it); the tokens
    after the last NL are left out. `hidden` is (n_layers, length, d); returns (n_layers, N, d).

    Explained in chapters/latent-trajectories/01_theory.md.
    """
    hidden = np.asarray(hidden)
    start, end = thinking_span(tokens, prompt_len)
    bounds = start + np.flatnonzero(np.asarray(tokens)[start:end] == NL)
    if len(bounds) < 2:
        return hidden[:, :0]
    csum = np.concatenate([np.zeros_like(hidden[:, :1]), np.cumsum(hidden, axis=1, dtype=np.float64)], axis=1)
    sums = csum[:, bounds[1:]] - csum[:, bounds[:-1]]
    return sums / np.diff(bounds)[None, :, None]
