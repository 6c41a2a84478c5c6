"""One-shot pruning of a model's hidden layers by each method, the synthetic layer, and the torch peers.

Explained in chapters/flexhinm/02_experiments.md. :func:`prune_model` takes one model's weights (numpy, (out, in)
per layer) and the mean square of every layer's inputs, prunes every layer but the last, and returns the (possibly
permuted) weights, the masks and what each step did. Saliency is ``w_ij^2 E[x_j^2]`` throughout.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common import check_between, check_choice, check_int, check_positive, stopwatch
from .patterns import (best_dense_count, hier_layout, layout_mask, nm_mask, retained, unstructured_mask,
                       vector_mask)
from .permute import gyro_input, gyro_output, permute_hidden

__all__ = ["METHODS", "LABELS", "PrunedModel", "prune_layer", "prune_model", "synthetic_layer",
           "hc_init_log_alpha", "hc_group_ids", "hc_project", "ao_24_mask", "torch_l1_unstructured_mask"]

METHODS = ("unstructured", "nm", "vector", "hinm", "flexhinm", "hinm-gp", "flexhinm-gp")
LABELS = {"unstructured": "unstructured", "nm": "N:M only", "vector": "vector only", "hinm": "HiNM",
          "flexhinm": "FlexHiNM", "hinm-gp": "HiNM + GP", "flexhinm-gp": "FlexHiNM-GP",
          "flexhinm-gp-hc": "FlexHiNM-GP + Hard Concrete"}


@dataclass
class PrunedModel:
    """Weights and biases after any permutation, one mask per pruned layer, and per-layer records.

    Explained in chapters/flexhinm/02_experiments.md. ``layouts`` are None for the non-hierarchical methods;
    ``traces`` hold the gyro-permutation costs (output step, then input step); ``seconds`` the mask time.
    """

    weights: list
    biases: list
    masks: list
    retained: list = field(default_factory=list)
    layouts: list = field(default_factory=list)
    n_dense: list = field(default_factory=list)
    traces: list = field(default_factory=list)
    seconds: float = 0.0


def prune_layer(S, method: str, sparsity: float, v: int = 16, gp: dict | None = None, seed: int = 0):
    """The mask (and layout, dense count, permutation, cost trace) of one layer's saliency ``S`` under ``method``.

    Explained in chapters/flexhinm/02_experiments.md. ``gp`` holds options for the gyro-permutation
    (``sizes``, ``max_fail``, ``sweeps``). The permutation is returned, not applied: rows of ``S`` follow it.
    """
    check_choice("method", method, METHODS)
    d = 1.0 - check_between("sparsity", sparsity, 0.0, 1.0, closed="left")
    gp = dict(gp or {})
    perm, layout, n_d, trace = np.arange(S.shape[0]), None, None, None
    if method == "unstructured":
        return unstructured_mask(S, d), layout, n_d, perm, trace
    if method == "nm":
        return nm_mask(S, 1, int(round(1 / d))), layout, n_d, perm, trace
    if method == "vector":
        return vector_mask(S, d, v), layout, n_d, perm, trace
    n_d = best_dense_count(S, sparsity, v)[0] if method.startswith("flexhinm") else 0
    if method.endswith("-gp"):
        sweeps = gp.pop("sweeps", 3)
        res = gyro_output(S, sparsity, v, n_d, seed=seed, **gp)
        perm, S = res.perm, S[res.perm]
        layout, inner = gyro_input(S, hier_layout(S, sparsity, v, n_d), sweeps=sweeps)
        trace = {"output": res.trace, "input": inner}
    else:
        layout = hier_layout(S, sparsity, v, n_d)
    return layout_mask(S, layout), layout, n_d, perm, trace


def prune_model(weights, biases, powers, method: str, sparsity: float, v: int = 16, gp: dict | None = None,
                seed: int = 0) -> PrunedModel:
    """Prune every layer but the last of one model; permutations are compensated in the next layer.

    Explained in chapters/flexhinm/02_experiments.md. ``powers[l]`` is E[x^2] of layer l's inputs (length in_l).
    """
    if len(weights) != len(biases) or len(powers) < len(weights) - 1:
        raise ValueError("weights, biases and powers must describe the same layers")
    W, b = [np.asarray(w, dtype=float) for w in weights], [np.asarray(x, dtype=float) for x in biases]
    powers = [np.asarray(p, dtype=float) for p in powers]
    out = PrunedModel(weights=W, biases=b, masks=[])
    with stopwatch() as watch:
        for l in range(len(W) - 1):
            S = W[l] ** 2 * powers[l][None, :]
            mask, layout, n_d, perm, trace = prune_layer(S, method, sparsity, v, gp, seed=seed + 7 * l)
            if trace is not None:
                W, b = permute_hidden(W, b, l, perm)
                if l + 1 < len(powers):
                    powers[l + 1] = powers[l + 1][perm]
                S = S[perm]
            out.masks.append(mask)
            out.retained.append(retained(S, mask))
            out.layouts.append(layout)
            out.n_dense.append(n_d)
            out.traces.append(trace)
    out.seconds = watch.seconds
    out.weights, out.biases = W, b
    return out


def synthetic_layer(out_features: int = 256, in_features: int = 256, row_sigma: float = 1.0,
                    col_sigma: float = 1.0, seed: int = 0) -> np.ndarray:
    """A teacher layer with heterogeneous channel scales: ``W_ij = r_i c_j g_ij``, r and c log-normal.

    Explained in chapters/flexhinm/02_experiments.md. ``g`` is standard normal; the sigmas set how unequal the
    output (rows) and input (columns) channels are.
    """
    O, I = check_int("out_features", out_features), check_int("in_features", in_features)
    check_positive("row_sigma", row_sigma), check_positive("col_sigma", col_sigma)
    rng = np.random.default_rng(seed)
    r = np.exp(row_sigma * rng.standard_normal((O, 1)))
    c = np.exp(col_sigma * rng.standard_normal((1, I)))
    return r * c * rng.standard_normal((O, I))


def hc_init_log_alpha(S, layout, sharpness: float = 2.0) -> np.ndarray:
    """Gate locations for the 2:4 region: in each row of each group, expected L0 = sigmoid(k log(S / mid)).

    Explained in chapters/flexhinm/02_experiments.md. ``mid`` is the geometric mean of the group's second and
    third largest saliency, so the magnitude top-2 start above one half and the others below.
    """
    from .gates import BETA, GAMMA, ZETA

    v = layout.v
    T = np.maximum(np.asarray(S, dtype=float), 1e-30).reshape(-1, v, S.shape[1])
    la = np.zeros_like(T)
    for t, g in enumerate(layout.groups):
        Sg = T[t][:, g]                                              # (v, G, 4)
        srt = np.sort(Sg, axis=-1)
        mid = np.sqrt(srt[..., 1] * srt[..., 2])[..., None]
        la[t][:, g] = sharpness * np.log(Sg / mid) + BETA * np.log(-GAMMA / ZETA)
    return la.reshape(S.shape)


def hc_group_ids(shape, layout) -> np.ndarray:
    """An id for every (row, 2:4 group) of a layer, -1 outside the 2:4 region (for the L0 penalty).

    Explained in chapters/flexhinm/02_experiments.md.
    """
    ids = -np.ones(shape, dtype=np.int64).reshape(-1, layout.v, shape[1])
    G = layout.groups.shape[1]
    for t, g in enumerate(layout.groups):
        rows = (t * layout.v + np.arange(layout.v))[:, None, None]
        ids[t][:, g] = rows * G + np.arange(G)[None, :, None]
    return ids.reshape(shape)


def hc_project(log_alpha, layout) -> np.ndarray:
    """The final mask from learned gates: the dense region, and the top two by ``log_alpha`` in each 2:4 row-group.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    a = np.asarray(log_alpha, dtype=float)
    return layout_mask(np.exp(a - a.max()), layout)


def ao_24_mask(W) -> tuple[np.ndarray, float]:
    """The 2:4 mask of ``torch.ao.pruning.WeightNormSparsifier`` (blocks (1, 4), two zeros each) and its seconds.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    import torch
    from torch.ao.pruning import WeightNormSparsifier

    lin = torch.nn.Linear(W.shape[1], W.shape[0], bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.as_tensor(W, dtype=torch.float32))
    model = torch.nn.Sequential(lin)
    with stopwatch() as watch:
        sp = WeightNormSparsifier(sparsity_level=1.0, sparse_block_shape=(1, 4), zeros_per_block=2)
        sp.prepare(model, config=[{"tensor_fqn": "0.weight"}])
        sp.step()
        mask = model[0].parametrizations.weight[0].mask.detach().numpy().astype(bool)
    return mask, watch.seconds


def torch_l1_unstructured_mask(W, density: float) -> tuple[np.ndarray, float]:
    """The mask of ``torch.nn.utils.prune.l1_unstructured`` at ``1 - density`` and its seconds.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    import torch
    from torch.nn.utils import prune

    lin = torch.nn.Linear(W.shape[1], W.shape[0], bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.as_tensor(W, dtype=torch.float32))
    with stopwatch() as watch:
        prune.l1_unstructured(lin, "weight", amount=int(round((1 - density) * W.size)))
        mask = lin.weight_mask.numpy().astype(bool)
    return mask, watch.seconds
