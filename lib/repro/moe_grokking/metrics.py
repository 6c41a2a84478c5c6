"""The paper's routing metrics (pathway, pathway distance, layer consistency) and the other monitors of training.

Explained in chapters/moe-grokking/01_theory.md, where each metric is computed by hand on a worked example. The
definitions (and which choices are ours) are in the package docstring, `repro.moe_grokking`.
"""
from __future__ import annotations

import numpy as np
import torch
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

__all__ = ["PROMPT_POSITIONS", "levenshtein", "aggregate_gates", "pathways", "pathway_strings", "pairwise_mean",
           "pathway_distance", "layer_pathway_distance", "layer_consistency", "routing_entropy", "load_entropy",
           "weight_norm", "PAPER_MASS", "cumulative_experts", "paper_pathway_strings", "paper_pathway_distance",
           "paper_consistency", "paper_curves", "add_paper_curves"]

#: The prompt's positions [op, a, b]: the tokens whose gates make a sample's pathway (not the answer token).
PROMPT_POSITIONS = (0, 1, 2)


def levenshtein(s, t) -> int:
    """Edit distance between two sequences (insertions, deletions, substitutions cost 1): the textbook dynamic
    programme, kept short for reading. `pathway_distance` uses rapidfuzz, which computes the same number fast.
    Explained in chapters/moe-grokking/01_theory.md."""
    s, t = list(s), list(t)
    prev = list(range(len(t) + 1))
    for i, x in enumerate(s, 1):
        cur = [i]
        for j, y in enumerate(t, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _check_gates(gates) -> list[torch.Tensor]:
    if isinstance(gates, torch.Tensor):
        gates = [gates]
    gates = list(gates)
    if not gates or any(not isinstance(g, torch.Tensor) or g.dim() != 3 for g in gates):
        raise ValueError("gates must be a non-empty list of (N, T, E) tensors, one per MoE layer")
    if len({tuple(g.shape) for g in gates}) != 1:
        raise ValueError(f"gates must all have the same shape, got {[tuple(g.shape) for g in gates]}")
    return gates


def aggregate_gates(gates, positions=PROMPT_POSITIONS) -> np.ndarray:
    """a_{i,l} = mean over `positions` of the gate vectors: (N, L, E) from a list of L tensors (N, T, E).

    Explained in chapters/moe-grokking/01_theory.md.
    """
    gates = _check_gates(gates)
    T = gates[0].shape[1]
    positions = list(positions)
    if not positions or any(not 0 <= q < T for q in positions):
        raise ValueError(f"positions must be a non-empty list of positions in 0..{T - 1}, got {positions!r}")
    return np.stack([g[:, positions].detach().float().mean(1).cpu().numpy() for g in gates], axis=1)


def pathways(agg: np.ndarray, k: int) -> np.ndarray:
    """The pathway of each sample: (N, L, k) expert ids, the top-k of a_{i,l} sorted by id within each layer.

    Explained in chapters/moe-grokking/01_theory.md.
    """
    agg = np.asarray(agg)
    if agg.ndim != 3:
        raise ValueError(f"agg must have shape (N, L, E), got {agg.shape}")
    if isinstance(k, bool) or not 1 <= int(k) <= agg.shape[2]:
        raise ValueError(f"k must be between 1 and E={agg.shape[2]}, got {k!r}")
    top = np.argsort(-agg, axis=2, kind="stable")[:, :, :int(k)]
    return np.sort(top, axis=2)


def pathway_strings(paths: np.ndarray, n_experts: int) -> list[str]:
    """Each pathway as a string of symbols, one per (layer, expert) pair: chr(0x100 + l*E + e). Distinct layers use
    distinct symbols (our choice). Explained in chapters/moe-grokking/01_theory.md."""
    paths = np.asarray(paths)
    if paths.ndim != 3:
        raise ValueError(f"paths must have shape (N, L, k), got {paths.shape}")
    if paths.size and (paths.min() < 0 or paths.max() >= n_experts):
        raise ValueError(f"paths must hold expert ids in 0..{n_experts - 1}")
    L = paths.shape[1]
    codes = paths + (np.arange(L) * n_experts)[None, :, None]
    return ["".join(chr(0x100 + int(c)) for c in row.ravel()) for row in codes]


def pairwise_mean(matrix: np.ndarray) -> float:
    """Mean of the strictly upper triangle of a square matrix (the mean over unordered pairs).

    Explained in chapters/moe-grokking/01_theory.md.
    """
    n = matrix.shape[0]
    if n < 2:
        raise ValueError("need at least two samples to compare pathways")
    iu = np.triu_indices(n, 1)
    return float(matrix[iu].mean())


def pathway_distance(paths: np.ndarray, n_experts: int) -> float:
    """Mean over pairs of samples of Levenshtein(s_i, s_j) / (L*k): 0 when every sample takes the same pathway.

    Explained in chapters/moe-grokking/01_theory.md.
    """
    paths = np.asarray(paths)
    strings = pathway_strings(paths, n_experts)
    D = cdist(strings, strings, scorer=Levenshtein.distance, dtype=np.int32, workers=1)
    return pairwise_mean(D) / (paths.shape[1] * paths.shape[2])


def layer_pathway_distance(paths: np.ndarray) -> np.ndarray:
    """Per layer l, the mean over pairs of the fraction of the k expert slots in which two samples differ at that
    layer (the pathway distance restricted to one layer). Shape (L,).
    Explained in chapters/moe-grokking/01_theory.md."""
    paths = np.asarray(paths)
    if paths.ndim != 3 or paths.shape[0] < 2:
        raise ValueError(f"paths must have shape (N >= 2, L, k), got {paths.shape}")
    out = []
    for layer in range(paths.shape[1]):
        s = ["".join(chr(0x100 + int(e)) for e in row) for row in paths[:, layer]]
        out.append(pairwise_mean(cdist(s, s, scorer=Levenshtein.distance, dtype=np.int32, workers=1)))
    return np.array(out) / paths.shape[2]


def layer_consistency(agg: np.ndarray, router_weights) -> np.ndarray:
    """C_i = mean over l of cos(e_{i,l}, e_{i,l+1}), e_{i,l} = sum_j a_{i,l,j} W_r^{(l)}[j]. Returns (N,).

    `agg` (N, L, E) aggregated gates; `router_weights` a list (or array) of L router matrices (E, d).
    Explained in chapters/moe-grokking/01_theory.md.
    """
    agg = np.asarray(agg, dtype=np.float64)
    W = np.stack([np.asarray(w.detach().cpu() if isinstance(w, torch.Tensor) else w, dtype=np.float64)
                  for w in router_weights])
    if agg.ndim != 3 or W.ndim != 3 or W.shape[:2] != agg.shape[1:]:
        raise ValueError(f"agg (N, L, E) and router_weights (L, E, d) must agree, got {agg.shape} and {W.shape}")
    if agg.shape[1] < 2:
        raise ValueError("layer consistency needs at least two MoE layers")
    e = np.einsum("nle,led->nld", agg, W)
    e = e / np.maximum(np.linalg.norm(e, axis=2, keepdims=True), 1e-12)
    return (e[:, :-1] * e[:, 1:]).sum(2).mean(1)


def routing_entropy(router_logits) -> np.ndarray:
    """Mean per-token entropy (nats) of the router's softmax, per layer: (L,). Low means confident routing.

    Explained in chapters/moe-grokking/01_theory.md.
    """
    out = []
    for lg in _check_gates(router_logits):
        logp = torch.log_softmax(lg.detach().float(), -1)
        out.append(float(-(logp.exp() * logp).sum(-1).mean()))
    return np.array(out)


def load_entropy(experts, n_experts: int) -> np.ndarray:
    """Entropy (nats) of each layer's expert load, the share of top-k slots each expert receives: (L,).
    log(E) is perfectly balanced; 0 is total collapse onto one expert.
    Explained in chapters/moe-grokking/01_theory.md."""
    out = []
    for ex in experts:
        counts = np.bincount(np.asarray(ex.detach().cpu()).ravel(), minlength=n_experts).astype(float)
        q = counts / counts.sum()
        q = q[q > 0]
        out.append(float(-(q * np.log(q)).sum()))
    return np.array(out)


def weight_norm(model: torch.nn.Module) -> float:
    """The L2 norm of all parameters together (the Omnigrok-style proxy of grokking).

    Explained in chapters/moe-grokking/01_theory.md.
    """
    return float(torch.sqrt(sum((p.detach().float() ** 2).sum() for p in model.parameters())))




# ---- The paper's definitions (arXiv 2506.21551), computed from a log's stored router probabilities -------------------

#: The paper keeps, per token and layer, the experts up to this cumulative routing weight (not a fixed top-k).
PAPER_MASS = 0.7


def cumulative_experts(probs, mass: float = PAPER_MASS) -> np.ndarray:
    """Per token, the fewest experts whose routing probabilities add up to at least `mass`, largest first.

    `probs` (..., E) router softmax; returns a bool mask (..., E). The largest expert is always kept.
    Explained in chapters/moe-grokking/01_theory.md.
    """
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim < 1 or probs.shape[-1] < 1:
        raise ValueError(f"probs must have a last axis of experts, got shape {probs.shape}")
    if not 0 < mass <= 1:
        raise ValueError(f"mass must lie in (0, 1], got {mass!r}")
    order = np.argsort(-probs, axis=-1, kind="stable")
    sorted_p = np.take_along_axis(probs, order, -1)
    before = np.cumsum(sorted_p, -1) - sorted_p          # the weight of the experts ranked above each one
    keep_sorted = before < mass - 1e-12
    keep = np.zeros(probs.shape, dtype=bool)
    np.put_along_axis(keep, order, keep_sorted, -1)
    return keep


def paper_pathway_strings(probs, mass: float = PAPER_MASS) -> list[str]:
    """Each sample's pathway as the paper builds it: layer by layer, token by token, the experts kept by
    `cumulative_experts` (sorted by id), each written as a (layer, expert) symbol. Lengths vary between samples.

    `probs` (N, L, T, E): router softmax of N samples at T prompt tokens in L layers.
    Explained in chapters/moe-grokking/01_theory.md.
    """
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 4:
        raise ValueError(f"probs must have shape (N, L, T, E), got {probs.shape}")
    N, L, T, E = probs.shape
    keep = cumulative_experts(probs, mass)
    symbols = (np.arange(L)[:, None, None] * E + np.arange(E)[None, None, :])      # (L, 1, E)
    out = []
    for i in range(N):
        codes = [int(c) for c in np.broadcast_to(symbols, (L, T, E))[keep[i]]]    # layer, token, expert id order
        out.append("".join(chr(0x100 + c) for c in codes))
    return out


def paper_pathway_distance(probs, mass: float = PAPER_MASS) -> float:
    """The paper's pathway distance of a group: the mean over pairs of samples of the raw Levenshtein distance between
    their pathways (`paper_pathway_strings`). Not normalised: shorter pathways alone make it smaller.
    Explained in chapters/moe-grokking/01_theory.md.
    """
    strings = paper_pathway_strings(probs, mass)
    D = cdist(strings, strings, scorer=Levenshtein.distance, dtype=np.int32, workers=1)
    return pairwise_mean(D)


def paper_consistency(probs, router_weights, mass: float = PAPER_MASS) -> np.ndarray:
    """The paper's C_i = 1 - (normalised mean cosine) between a sample's consecutive layers, per sample: (N,).

    e_{i,l} = sum_j w_{i,l,j} u_j^{(l)}, with w the routing weights of the kept experts (`cumulative_experts`) summed
    over the prompt tokens and u_j^{(l)} expert j's router row (our choice of expert embedding); the mean cosine over
    adjacent layers, mapped to [0, 1] by (1 + cos) / 2, is subtracted from 1. The paper says only that the cosine is
    "normalised"; the map (1 + cos) / 2 is our reading of that word, not the paper's formula. So C_i is 0 when
    consecutive layers point the same way and larger when the transitions are erratic: the opposite direction to
    `layer_consistency`.
    Explained in chapters/moe-grokking/01_theory.md.
    """
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 4:
        raise ValueError(f"probs must have shape (N, L, T, E), got {probs.shape}")
    weights = (probs * cumulative_experts(probs, mass)).sum(2)                   # (N, L, E)
    mean_cos = layer_consistency(weights, router_weights)
    return 1 - (1 + mean_cos) / 2


def paper_curves(log: dict, mass: float = PAPER_MASS) -> dict:
    """The paper's pathway distance and C_i (group mean), and the mean pathway length, at every evaluation of a log
    that stores `router_probs` and `router_weights`: {name: (evals, groups)}.
    Explained in chapters/moe-grokking/02_experiments.md.
    """
    if "router_probs" not in log or "router_weights" not in log:
        raise ValueError("this log has no stored router probabilities (made before they were logged); retrain it")
    P = np.asarray(log["router_probs"], dtype=np.float64) / 255.0               # (evals, groups, n, L, T, E)
    W = np.asarray(log["router_weights"], dtype=np.float64)                     # (evals, L, E, d)
    n_evals, n_groups = P.shape[:2]
    dist, cons, length = (np.zeros((n_evals, n_groups)) for _ in range(3))
    for t in range(n_evals):
        for g in range(n_groups):
            dist[t, g] = paper_pathway_distance(P[t, g], mass)
            cons[t, g] = paper_consistency(P[t, g], W[t], mass).mean()
            length[t, g] = cumulative_experts(P[t, g], mass).sum((1, 2, 3)).mean()
    return {"distance": dist, "consistency": cons, "length": length}


def add_paper_curves(logs: dict, mass: float = PAPER_MASS) -> dict:
    """Add the paper's metrics to every log of `logs` ({run name: log}) that stores router probabilities, in place:
    `paper_distance`, `paper_consistency` (C_i) and `paper_length`, each (evals, groups), from `paper_curves`.
    Returns `logs`. Explained in chapters/moe-grokking/02_experiments.md.
    """
    for log in logs.values():
        if "router_probs" in log and "paper_distance" not in log:
            curves = paper_curves(log, mass)
            log.update(paper_distance=curves["distance"], paper_consistency=curves["consistency"],
                       paper_length=curves["length"])
    return logs
