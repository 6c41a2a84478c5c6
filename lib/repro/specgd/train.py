"""Training the linear model W (K x d) with squared loss on the mixture, a whole lr grid at once.

Explained in chapters/specgd/02_experiments.md. Loss L(W) = ||W X^T - Y^T||_F^2 / (2n), gradient
G = W Sigma_hat - C_hat (see :func:`repro.specgd.data.moments`); W_0 = 0; prediction argmax_k (W x)_k.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..common import check_int

from .data import GMMData, moments
from .updates import check_method, direction, make_adam, make_muon

__all__ = ["TrainResult", "balanced_accuracy", "class_balanced_loss", "lr_schedule", "train_linear",
           "best_over_grid", "best_loss_over_grid", "eval_schedule"]


def balanced_accuracy(scores, y, num_classes: int | None = None) -> np.ndarray:
    """Mean over classes of the per-class accuracy of argmax predictions; scores (..., n, K).

    Explained in chapters/specgd/01_theory.md. On a balanced test set this equals plain accuracy;
    on an imbalanced one it weighs the rare classes as much as the frequent ones.
    """
    scores = np.asarray(scores)
    y = np.asarray(y)
    if scores.ndim < 2 or y.shape != (scores.shape[-2],):
        raise ValueError(f"scores must be (..., n, K) and y (n,); got {scores.shape} and {y.shape}")
    K = scores.shape[-1] if num_classes is None else num_classes
    onehot = np.eye(K)[y]                                   # (n, K)
    correct = (scores.argmax(-1) == y).astype(float)        # (..., n)
    per_class = correct @ onehot / np.maximum(onehot.sum(0), 1)
    present = onehot.sum(0) > 0
    return per_class[..., present].mean(-1)


def class_balanced_loss(W, X, y, num_classes: int) -> np.ndarray:
    """Mean over classes of each class's mean squared loss ||W x - e_y||^2 / 2; W (K, d) or a stack (..., K, d).

    Explained in chapters/specgd/02_experiments.md. Version 3 of the paper states its early gap in a
    "class balanced loss"; this is our reading of it for the squared loss the model is trained on:
    every class weighs 1/K, however rare it was in training.
    """
    W = np.asarray(W, dtype=float)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    K = num_classes
    if W.ndim < 2 or W.shape[-2:] != (K, X.shape[1]) or y.shape != (X.shape[0],):
        raise ValueError(f"W must be (..., {K}, d), X (n, d) and y (n,); got {W.shape}, {X.shape}, {y.shape}")
    onehot = np.eye(K)[y]
    weights = onehot @ (1.0 / (np.maximum(onehot.sum(0), 1) * K))         # 1 / (K n_y) per point
    resid = np.einsum("...kd,nd->...nk", W, X) - onehot
    return 0.5 * np.einsum("...nk,n->...", resid ** 2, weights)


def lr_schedule(eta, steps: int) -> np.ndarray:
    """The step sizes of every run, shape (steps, len(eta)): a constant step per learning rate.

    Explained in chapters/specgd/02_experiments.md. With a constant step SpecGD never settles
    exactly: once a class saturates its weight oscillates within eta of the end point.
    """
    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    if eta.ndim != 1 or np.any(eta <= 0):
        raise ValueError(f"eta must be a positive number or 1-D grid, got {eta!r}")
    check_int("steps", steps)
    return np.repeat(eta[None, :], steps, axis=0)


def eval_schedule(steps: int, dense: int = 100, total: int = 200) -> np.ndarray:
    """Steps at which to evaluate: every step up to ``dense``, then about log-spaced up to ``steps``.

    Explained in chapters/specgd/02_experiments.md. SpecGD peaks within the first few dozen steps,
    so early steps are all recorded; later ones only need to show the slow return to the end point.
    """
    check_int("steps", steps)
    if dense < 0 or total < 2:
        raise ValueError(f"dense must be >= 0 and total >= 2, got {dense!r}, {total!r}")
    head = np.arange(min(dense, steps) + 1)
    tail = np.geomspace(max(dense, 1), steps, max(total - len(head), 2)) if steps > dense else []
    return np.unique(np.concatenate([head, np.round(tail)]).astype(int))


@dataclass
class TrainResult:
    """Balanced accuracies along training: ``val[i, j]`` and ``test[i, j]`` at step ``steps[i]``, lr ``lrs[j]``.

    Explained in chapters/specgd/02_experiments.md. ``components`` (optional) holds a_k along the
    given directions, shape (len(steps), len(lrs), K); ``weights`` the final W per lr.
    """

    method: str
    lrs: np.ndarray
    steps: np.ndarray
    val: np.ndarray
    test: np.ndarray
    components: np.ndarray | None
    weights: np.ndarray
    val_loss: np.ndarray | None = None
    test_loss: np.ndarray | None = None


def _bacc_fast(W, X, onehot_scaled):
    """Balanced accuracy of a stack W (L, K, d) on (X, labels) without forming (L, n, K) scores."""
    L, K, d = W.shape
    pred = (W.reshape(L * K, d) @ X.T).reshape(L, K, -1).argmax(1)      # (L, n)
    return (pred[:, :, None] == np.arange(K)).astype(float).reshape(L, -1) @ onehot_scaled.reshape(-1)


def _evaluator(data: GMMData):
    def weights(y):
        onehot = np.eye(data.num_classes)[y]
        return onehot / (onehot.sum(0) * data.num_classes)          # (n, K): 1 / (K n_k) on the true class
    wv, wt = weights(data.y_val), weights(data.y_test)
    return lambda W: (_bacc_fast(W, data.X_val, wv), _bacc_fast(W, data.X_test, wt))


def _loss_evaluator(data: GMMData):
    """Class-balanced loss on (val, test) from per-class weighted second moments, without forming W X^T."""
    K = data.num_classes

    def parts(X, y):
        w = np.eye(K)[y] / (np.bincount(y, minlength=K) * K)                # (n, K): 1 / (K n_k)
        wn = w.sum(1)
        return (X * wn[:, None]).T @ X, w.T @ X                              # sum_n w_n x x^T, sum_n w_n e_y x^T
    (Sv, Cv), (St, Ct) = parts(data.X_val, data.y_val), parts(data.X_test, data.y_test)

    def loss(W, S_, C_):
        return 0.5 * (np.einsum("lkd,de,lke->l", W, S_, W) - 2 * np.einsum("lkd,kd->l", W, C_) + 1.0)
    return lambda W: (loss(W, Sv, Cv), loss(W, St, Ct))


def _torch_stepper(W0, lrs, make):
    """Step a stack of weights with a torch optimizer, one parameter group per learning rate."""
    params = [torch.tensor(w, dtype=torch.float64, requires_grad=True) for w in W0]
    opt = make(params, lrs)

    def step(W, G, eta_t):
        for group, a in zip(opt.param_groups, eta_t):
            group["lr"] = float(a)
        for p, g in zip(params, G):
            p.grad = torch.as_tensor(g)
        opt.step()
        return np.stack([p.detach().numpy().copy() for p in params])
    return step


def run_schedule(data: GMMData, lrs, steps: int, eval_at=None) -> tuple[np.ndarray, np.ndarray]:
    """Validate a training run's inputs; return its step sizes (steps, len(lrs)) and evaluation steps.

    Shared by :func:`train_linear` and :func:`repro.specgd.deep.train_deep_linear` (chapters/specgd/02_experiments.md).
    """
    if not isinstance(data, GMMData):
        raise ValueError("data must be a GMMData from make_gmm")
    etas = lr_schedule(lrs, steps)
    eval_at = np.arange(steps + 1) if eval_at is None else np.asarray(eval_at, dtype=int)
    if eval_at.ndim != 1 or np.any(np.diff(eval_at) <= 0) or eval_at[0] < 0 or eval_at[-1] > steps:
        raise ValueError(f"eval_at must be increasing steps within 0..{steps}")
    return etas, eval_at


def train_linear(data: GMMData, method: str, lrs, steps: int, eval_at=None, directions=None,
                 progress=None) -> TrainResult:
    """Run ``method`` (one of METHODS) from W_0 = 0 for ``steps`` steps at every lr of ``lrs`` at once.

    Explained in chapters/specgd/02_experiments.md. W is a stack (len(lrs), K, d) updated as
    W <- W - eta D(G) with D from :mod:`repro.specgd.updates`; Muon runs through torch.optim.Muon
    (momentum 0, no weight decay) and Adam through torch.optim.Adam (its defaults), one parameter group per lr. Balanced accuracy on the
    validation and test sets is recorded at the steps in ``eval_at`` (default: every step).
    ``progress`` may wrap the step range (e.g. repro.common.progress).
    """
    check_method(method)
    etas, eval_at = run_schedule(data, lrs, steps, eval_at)
    K, d = data.num_classes, data.dim
    S, C = moments(data.X_train, data.y_train, K)
    W = np.zeros((etas.shape[1], K, d))
    makers = {"muon": make_muon, "adam": make_adam}
    stepper = _torch_stepper(W, etas[0], makers[method]) if method in makers else None
    rows, comps, losses = [], [], []
    wanted = set(eval_at.tolist())
    evaluate, evaluate_loss = _evaluator(data), _loss_evaluator(data)
    loop = range(steps + 1) if progress is None else progress(range(steps + 1))
    for t in loop:
        if t in wanted:
            rows.append(evaluate(W))
            losses.append(evaluate_loss(W))
            if directions is not None:
                comps.append(np.einsum("lkd,dk->lk", W, directions))
        if t == steps:
            break
        G = W @ S - C
        if stepper is not None:
            W = stepper(W, G, etas[t])
        else:
            W = W - etas[t][:, None, None] * direction(method, G)
    val, test = (np.array(x) for x in zip(*rows))
    val_loss, test_loss = (np.array(x) for x in zip(*losses))
    return TrainResult(method, np.atleast_1d(np.asarray(lrs, float)), eval_at, val, test,
                       np.array(comps) if comps else None, W, val_loss, test_loss)


def best_over_grid(result: TrainResult) -> dict:
    """Early stopping over (step, lr): pick the pair with the best validation balanced accuracy.

    Explained in chapters/specgd/02_experiments.md. Returns the test balanced accuracy there
    (``early``), the chosen ``lr`` and ``step``, and the test balanced accuracy at the last
    recorded step for that lr (``final``), which the "transient" claim compares.
    """
    if result.val.ndim != 2:
        raise ValueError("result must hold (steps, lrs) balanced accuracies")
    i, j = np.unravel_index(np.argmax(result.val), result.val.shape)
    return {"method": result.method, "early": float(result.test[i, j]), "lr": float(result.lrs[j]),
            "step": int(result.steps[i]), "final": float(result.test[-1, j])}


def best_loss_over_grid(result: TrainResult) -> dict:
    """Early stopping on the class-balanced loss: the (step, lr) pair with the lowest validation loss.

    Explained in chapters/specgd/02_experiments.md. Returns the test class-balanced loss there
    (``early``), the chosen ``lr`` and ``step``, and the test loss at the last recorded step (``final``).
    """
    if result.val_loss is None or result.val_loss.ndim != 2:
        raise ValueError("result must hold (steps, lrs) class-balanced losses (a train_linear result)")
    i, j = np.unravel_index(np.argmin(result.val_loss), result.val_loss.shape)
    return {"method": result.method, "early": float(result.test_loss[i, j]), "lr": float(result.lrs[j]),
            "step": int(result.steps[i]), "final": float(result.test_loss[-1, j])}
