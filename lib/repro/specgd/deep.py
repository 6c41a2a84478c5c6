"""Deep linear models W = W_L ... W_1 on the mixture, trained layer-wise by GD or SpecGD.

Explained in chapters/specgd/02_experiments.md. Same squared loss as the linear model; the loss
gradient G = W Sigma_hat - C_hat with respect to the product W reaches layer l as
dL/dW_l = (W_L ... W_{l+1})^T G (W_{l-1} ... W_1)^T. GD steps each layer along its gradient,
SpecGD along that gradient's polar factor U V^T (what Muon does per layer).
"""
from __future__ import annotations

from functools import reduce

import numpy as np

from ..common import check_int, check_positive

from .data import GMMData, moments
from .train import TrainResult, _evaluator, run_schedule
from .updates import check_method, gd_direction, spec_direction

__all__ = ["DEEP_METHODS", "init_deep_linear", "product", "layer_gradients", "train_deep_linear", "learning_times"]

DEEP_METHODS = ("gd", "spec")


def init_deep_linear(depth: int, num_classes: int, dim: int, width: int, init_scale: float,
                     n_lrs: int = 1, seed: int = 0) -> list:
    """Layers [W_1 (h x d), W_2 (h x h), ..., W_L (K x h)], each Gaussian with entries of std
    init_scale / sqrt(fan_in), copied for each of ``n_lrs`` learning rates (same start for all).

    Explained in chapters/specgd/02_experiments.md. depth = 1 gives the linear model (one K x d
    layer). A small ``init_scale`` starts the product near zero, where GD lingers at a saddle.
    """
    for name, v, low in [("depth", depth, 1), ("num_classes", num_classes, 2), ("dim", dim, 1),
                         ("width", width, 1), ("n_lrs", n_lrs, 1)]:
        check_int(name, v, low)
    check_positive("init_scale", init_scale)
    rng = np.random.default_rng(seed)
    sizes = [dim] + [width] * (depth - 1) + [num_classes]
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_out, fan_in)) * init_scale / np.sqrt(fan_in)
        layers.append(np.repeat(w[None], n_lrs, axis=0))
    return layers


def product(layers) -> np.ndarray:
    """The end-to-end matrix W = W_L ... W_1 (stacked over the lr grid).

    Explained in chapters/specgd/02_experiments.md.
    """
    if not layers:
        raise ValueError("layers must be a non-empty list of matrices")
    return reduce(lambda acc, w: w @ acc, layers[1:], layers[0])


def layer_gradients(layers, S, C) -> list:
    """dL/dW_l for every layer, from G = W Sigma_hat - C_hat at W = W_L ... W_1.

    Explained in chapters/specgd/02_experiments.md.
    """
    T = lambda a: np.swapaxes(a, -1, -2)
    G = product(layers) @ S - C
    grads = []
    for l in range(len(layers)):
        below = product(layers[:l]) if l else None
        above = product(layers[l + 1:]) if l + 1 < len(layers) else None
        g = G if above is None else T(above) @ G
        grads.append(g if below is None else g @ T(below))
    return grads


def train_deep_linear(data: GMMData, depth: int, method: str, lrs, steps: int, width: int = 32,
                      init_scale: float = 0.1, eval_at=None, seed: int = 0,
                      progress=None) -> TrainResult:
    """Train W_L ... W_1 layer-wise with GD or SpecGD (``method`` in DEEP_METHODS) over an lr grid.

    Explained in chapters/specgd/02_experiments.md. Returns a TrainResult like
    :func:`repro.specgd.train.train_linear`, whose ``weights`` is the final product W.
    """
    check_method(method, DEEP_METHODS)
    etas, eval_at = run_schedule(data, lrs, steps, eval_at)
    S, C = moments(data.X_train, data.y_train, data.num_classes)
    layers = init_deep_linear(depth, data.num_classes, data.dim, width, init_scale, etas.shape[1], seed)
    step_dir = gd_direction if method == "gd" else spec_direction
    evaluate, wanted, rows = _evaluator(data), set(eval_at.tolist()), []
    loop = range(steps + 1) if progress is None else progress(range(steps + 1))
    for t in loop:
        if t in wanted:
            rows.append(evaluate(product(layers)))
        if t == steps:
            break
        grads = layer_gradients(layers, S, C)
        layers = [w - etas[t][:, None, None] * step_dir(g) for w, g in zip(layers, grads)]
    val, test = (np.array(x) for x in zip(*rows))
    return TrainResult(f"{method}-L{depth}", np.atleast_1d(np.asarray(lrs, float)), eval_at, val, test,
                       None, product(layers))


def learning_times(data: GMMData, depth: int, method: str, lr: float, max_steps: int, width: int = 32,
                   init_scale: float = 0.01, seed: int = 0, fraction: float = 0.5) -> np.ndarray:
    """Per class, the first step at which a_k(t) reaches ``fraction`` of its end point a_k* (inf if never).

    Explained in chapters/specgd/02_experiments.md. a_k(t) = e_k^T W(t) x_hat_k along the training
    set's own class-mean direction x_hat_k = x_bar_k / ||x_bar_k||, and a_k* is the same component of
    the least-squares weights W* = C_hat Sigma_hat^{-1}, where every depth and method ends. Unlike an
    accuracy at a fixed budget, the ratio of two such times does not depend on how long we train,
    as long as ``max_steps`` is long enough for both classes to get there.
    """
    check_method(method, DEEP_METHODS)
    check_int("max_steps", max_steps)
    check_positive("lr", lr)
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    S, C = moments(data.X_train, data.y_train, data.num_classes)
    xbar = C / np.bincount(data.y_train, minlength=data.num_classes)[:, None] * len(data.y_train)
    xhat = (xbar / np.linalg.norm(xbar, axis=1, keepdims=True)).T            # d x K
    target = fraction * np.einsum("kd,dk->k", np.linalg.solve(S, C.T).T, xhat)
    layers = init_deep_linear(depth, data.num_classes, data.dim, width, init_scale, 1, seed)
    step_dir = gd_direction if method == "gd" else spec_direction
    times = np.full(data.num_classes, np.inf)
    for t in range(max_steps + 1):
        a = np.einsum("kd,dk->k", product(layers)[0], xhat)
        times[(a >= target) & np.isinf(times)] = t
        if np.all(np.isfinite(times)) or t == max_steps:
            break
        layers = [w - lr * step_dir(g) for w, g in zip(layers, layer_gradients(layers, S, C))]
    return times
