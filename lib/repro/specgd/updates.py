"""Update directions for a matrix parameter W given its gradient G: GD, NGD, SpecGD, Shampoo, Muon.

Explained in chapters/specgd/01_theory.md (GD, SpecGD) and chapters/specgd/02_experiments.md
(NGD, Shampoo without accumulation, torch.optim.Muon). Every function returns the direction D
in W <- W - eta * D and accepts a stack of gradients (..., m, n) so a whole learning-rate grid is
updated at once.
"""
from __future__ import annotations

import numpy as np
import torch

from ..common import check_choice, check_positive

__all__ = ["METHODS", "polar_factor", "gd_direction", "ngd_direction", "spec_direction", "sign_direction",
           "shampoo_direction", "make_muon", "make_adam", "muon_direction", "direction", "check_method"]

#: Update rules on the mixture, in the order the chapter introduces them.
METHODS = ("gd", "ngd", "spec", "shampoo", "muon", "signgd", "adam")


def check_method(method: str, valid=METHODS) -> str:
    """Return ``method`` if it names one of ``valid``, else raise a ValueError listing them.

    Explained in chapters/specgd/02_experiments.md (the methods compared there).
    """
    return check_choice("method", method, valid)


def _as_matrix_stack(G, name: str = "G") -> np.ndarray:
    G = np.asarray(G, dtype=float)
    if G.ndim < 2:
        raise ValueError(f"{name} must be a matrix or a stack of matrices (..., m, n); got shape {G.shape}")
    return G


def polar_factor(G, rtol: float | None = None) -> np.ndarray:
    """SpecGD's direction U_r V_r^T, from the truncated SVD G = U_r Sigma_r V_r^T (r = rank G).

    Explained in chapters/specgd/01_theory.md. Singular values below ``rtol * sigma_max`` count
    as zero (default: max(m, n) * machine epsilon, numpy's rank rule), so a rank-deficient
    gradient moves W only along its own singular directions. Works on stacks (..., m, n).
    """
    G = _as_matrix_stack(G)
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    if rtol is None:
        rtol = max(G.shape[-2:]) * np.finfo(float).eps
    keep = s > rtol * s[..., :1]
    return np.einsum("...ik,...k,...kj->...ij", U, keep.astype(float), Vt)


def gd_direction(G) -> np.ndarray:
    """Gradient descent: D = G. Explained in chapters/specgd/01_theory.md."""
    return _as_matrix_stack(G)


def ngd_direction(G) -> np.ndarray:
    """Normalised GD: D = G / ||G||_F (per matrix of the stack). Explained in chapters/specgd/02_experiments.md."""
    G = _as_matrix_stack(G)
    norm = np.sqrt((G ** 2).sum(axis=(-2, -1), keepdims=True))
    return G / np.maximum(norm, np.finfo(float).tiny)


def spec_direction(G) -> np.ndarray:
    """Spectral GD: D = U V^T, the polar factor of G. Explained in chapters/specgd/01_theory.md."""
    return polar_factor(G)


def sign_direction(G) -> np.ndarray:
    """Sign GD: D = sign(G), entry by entry. Explained in chapters/specgd/02_experiments.md.

    It equalises coordinates, not singular directions: every entry of W moves by exactly eta.
    """
    return np.sign(_as_matrix_stack(G))


def _inverse_fourth_root(A: np.ndarray) -> np.ndarray:
    lam, Q = np.linalg.eigh(A)
    return np.einsum("...ik,...k,...jk->...ij", Q, lam ** -0.25, Q)


def shampoo_direction(G, eps: float = 1e-12) -> np.ndarray:
    """Shampoo without accumulation: D = L^{-1/4} G R^{-1/4}, L = G G^T + eps I, R = G^T G + eps I.

    Explained in chapters/specgd/02_experiments.md. Shampoo proper sums L and R over all past
    gradients; with only the current one, D = U Sigma (Sigma^2 + eps)^{-1/2} V^T, which is SpecGD's
    U V^T up to eps: the identity the chapter checks.
    """
    G = _as_matrix_stack(G)
    check_positive("eps", eps)
    m, n = G.shape[-2:]
    L = G @ np.swapaxes(G, -1, -2) + eps * np.eye(m)
    R = np.swapaxes(G, -1, -2) @ G + eps * np.eye(n)
    return _inverse_fourth_root(L) @ G @ _inverse_fourth_root(R)


def make_muon(params, lr, ns_steps: int = 5) -> torch.optim.Muon:
    """torch.optim.Muon reduced to its spectral core: momentum=0, nesterov=False, weight_decay=0.

    Explained in chapters/specgd/02_experiments.md. ``lr`` may be a float or a list (one param
    group per parameter, so one optimizer runs a whole learning-rate grid). torch scales the step
    by sqrt(max(1, rows / cols)); for the K x d classifier (K < d) that factor is 1.
    """
    params = list(params)
    lrs = list(lr) if np.ndim(lr) else [lr] * len(params)
    if len(lrs) != len(params):
        raise ValueError(f"lr must be a float or one value per parameter ({len(params)}), got {len(lrs)}")
    groups = [{"params": [p], "lr": float(a)} for p, a in zip(params, lrs)]
    return torch.optim.Muon(groups, momentum=0.0, nesterov=False, weight_decay=0.0, ns_steps=ns_steps)


def make_adam(params, lr) -> torch.optim.Adam:
    """torch.optim.Adam at its defaults (betas 0.9 and 0.999, eps 1e-8, no weight decay), one group per lr.

    Explained in chapters/specgd/02_experiments.md. On full-batch gradients its first step is eta * sign(G) (up to
    eps): Adam starts as SignGD and then rescales each entry by its own running gradient size.
    """
    params = list(params)
    lrs = list(lr) if np.ndim(lr) else [lr] * len(params)
    if len(lrs) != len(params):
        raise ValueError(f"lr must be a float or one value per parameter ({len(params)}), got {len(lrs)}")
    return torch.optim.Adam([{"params": [p], "lr": float(a)} for p, a in zip(params, lrs)])


def muon_direction(G, ns_steps: int = 5) -> np.ndarray:
    """The direction one torch.optim.Muon step (momentum 0, no weight decay) takes from gradient G.

    Explained in chapters/specgd/02_experiments.md. Muon replaces U V^T by a 5-step Newton-Schulz
    iteration run in bfloat16 after dividing G by ||G||_F: it maps each singular value to roughly
    [0.7, 1.2] instead of exactly 1, so it is an approximate SpecGD. Returns D with W <- W - lr D.
    """
    G = _as_matrix_stack(G)
    flat = G.reshape(-1, *G.shape[-2:])
    out = np.empty_like(flat)
    for i, g in enumerate(flat):
        p = torch.zeros(g.shape, dtype=torch.float64, requires_grad=True)
        p.grad = torch.as_tensor(g, dtype=torch.float64)
        opt = make_muon([p], 1.0, ns_steps)
        scale = max(1.0, g.shape[0] / g.shape[1]) ** 0.5  # undo torch's shape-dependent lr factor
        opt.step()
        out[i] = -p.detach().numpy() / scale
    return out.reshape(G.shape)


_DIRECTIONS = {"gd": gd_direction, "ngd": ngd_direction, "spec": spec_direction,
               "shampoo": shampoo_direction, "muon": muon_direction, "signgd": sign_direction}


def direction(method: str, G) -> np.ndarray:
    """Dispatch: the direction D of a stateless ``method`` (METHODS except "adam") for gradient(s) G.

    Explained in chapters/specgd/02_experiments.md. Adam keeps running moments, so it has no direction of G alone:
    :func:`repro.specgd.train_linear` steps it through torch.optim.Adam.
    """
    return _DIRECTIONS[check_method(method, tuple(_DIRECTIONS))](G)
