"""Coordinate (activation) patching and mean-difference patching.

Explained in chapters/causal-divergence/01_theory.md. With a 0/1 mask M on the coordinates of a hidden state h,

    coordinate patching:       h_hat = (I - M) h_trg + M h_src
    mean-difference patching:  h_hat = h_B + delta,   delta = E[h | A] - E[h | B]

The array versions work on numpy arrays or torch tensors; `activation_patch` does the same inside a torch model by
a forward hook on one module.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch

from ..common import check_2d, check_same_shape, check_same_width


def _as_mask(mask, d, like):
    m = mask if isinstance(mask, torch.Tensor) else np.asarray(mask)
    if m.ndim != 1 or m.shape[0] != d:
        raise ValueError(f"mask must be a 1-d 0/1 vector of length {d} (the state's width); got shape {tuple(m.shape)}")
    if isinstance(like, torch.Tensor):
        return torch.as_tensor(m, dtype=like.dtype, device=like.device)
    return m.astype(float)


def coordinate_patch(h_trg, h_src, mask):
    """Patch the masked coordinates of `h_trg` with those of `h_src`: (I - M) h_trg + M h_src.

    `h_trg`, `h_src`: arrays or tensors of the same shape (..., d); `mask`: length-d 0/1 vector.
    Explained in chapters/causal-divergence/01_theory.md.
    """
    check_same_shape("h_trg", h_trg, "h_src", h_src)
    m = _as_mask(mask, h_trg.shape[-1], h_trg)
    return (1 - m) * h_trg + m * h_src


def mean_difference(h_a, h_b):
    """delta = mean of class-A states minus mean of class-B states (rows are states).

    Explained in chapters/causal-divergence/01_theory.md.
    """
    check_2d("h_a", h_a)
    check_2d("h_b", h_b)
    check_same_width("h_a", h_a, "h_b", h_b)
    return h_a.mean(0) - h_b.mean(0)


def mean_difference_patch(h, delta):
    """Add the mean difference `delta` (length d) to every state in `h` (..., d).

    Explained in chapters/causal-divergence/01_theory.md.
    """
    if delta.ndim != 1 or delta.shape[0] != h.shape[-1]:
        raise ValueError(f"delta must be a vector of length {h.shape[-1]} (the width of h); got shape {tuple(delta.shape)}")
    return h + delta


@contextmanager
def patch_output(module: torch.nn.Module, fn):
    """Inside the block, `module`'s output y is replaced by `fn(y)` (a forward hook, removed on exit).

    Explained in chapters/causal-divergence/02_experiments.md.
    """
    if not isinstance(module, torch.nn.Module):
        raise ValueError(f"module must be a torch.nn.Module; got {type(module).__name__}")
    handle = module.register_forward_hook(lambda _m, _inp, out: fn(out))
    try:
        yield
    finally:
        handle.remove()


def get_activation(model: torch.nn.Module, module: torch.nn.Module, x):
    """Run `model(x)` and return the output of `module` (a forward hook records it).

    Explained in chapters/causal-divergence/02_experiments.md.
    """
    store = {}

    def keep(out):
        store["h"] = out
        return out

    with patch_output(module, keep):
        model(x)
    if "h" not in store:
        raise ValueError("module was not called when running model(x); pass a submodule of model")
    return store["h"]


def activation_patch(model: torch.nn.Module, module: torch.nn.Module, x_trg, x_src, mask):
    """Model outputs on `x_trg` with `module`'s masked output coordinates taken from the run on `x_src`.

    Explained in chapters/causal-divergence/02_experiments.md.
    """
    check_same_shape("x_trg", x_trg, "x_src", x_src)
    h_src = get_activation(model, module, x_src)
    with patch_output(module, lambda h: coordinate_patch(h, h_src, mask)):
        return model(x_trg)
