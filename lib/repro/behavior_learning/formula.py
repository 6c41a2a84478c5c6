"""The exported utility evaluated as a formula (chapters/behavior-learning/02_experiments.md).

blnetwork's ``export_structure`` prints each block's U, C and T as rounded coefficients with their lam. Here the same
rounded numbers are evaluated in numpy, without torch, so that "the model is its formula" can be checked.
"""
from __future__ import annotations

import numpy as np

from ..common import check_int


def rounded_parameters(model, ndigits: int = 4) -> list[dict]:
    """Per block: W_U, b_U, W_C, b_C, W_T, b_T and lam (positive), rounded to ``ndigits``; the head last.
    (chapters/behavior-learning/02_experiments.md)"""
    ndigits = check_int("ndigits", ndigits, low=0)
    blocks = []
    for blk in model.backbone.blocks:
        u = blk.unit
        p = {f"{k}_{n}": np.round(getattr(getattr(u, f"lin_{k}"), n).detach().double().numpy(), ndigits)
             for k in "uct" for n in ("weight", "bias")}
        p["lam"] = np.round(u.multipliers().detach().double().numpy(), ndigits)
        p["acts"] = (u.phi1, u.phi2, u.phi3, u.beta)
        blocks.append(p)
    blocks.append({"w": np.round(model.head.weight.detach().double().numpy(), ndigits),
                   "b": np.round(model.head.bias.detach().double().numpy(), ndigits)})
    return blocks


def formula_scores(params: list[dict], z: np.ndarray) -> np.ndarray:
    """U(z) from the rounded coefficients of :func:`rounded_parameters`, for z = [x; y] rows.
    (chapters/behavior-learning/02_experiments.md)"""
    z = np.asarray(z, dtype=float)
    if z.ndim != 2:
        raise ValueError("z must be a 2-D array of [x; y] rows")
    for p in params[:-1]:
        phi1, phi2, phi3, beta = p["acts"]
        a = z @ p["u_weight"].T + p["u_bias"]
        c = z @ p["c_weight"].T + p["c_bias"]
        t = z @ p["t_weight"].T + p["t_bias"]
        a = np.tanh(a) if phi1 == "tanh" else a
        c = np.maximum(c, 0) if phi2 == "relu" else np.logaddexp(0, beta * c) / beta
        t = np.abs(t) if phi3 == "abs" else t ** 2
        z = p["lam"][0] * a - p["lam"][1] * c - p["lam"][2] * t
    return (z @ params[-1]["w"].T + params[-1]["b"])[:, 0]
