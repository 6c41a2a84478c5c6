"""The NeuroAdapter: parcels as tokens (``ParcelMapper``), the decoupled brain branch of every cross-attention
(``BrainBranch``), token dropout, and the training of stage 1 on a frozen U-Net.

Explained in chapters/neuroadapter/01_theory.md and chapters/neuroadapter/02_experiments.md. The mapper is the
paper's per-parcel linear map ``E_{b,p} = x_{b,p} W_p + c_p``; the branch's ``to_k``/``to_v`` start as copies of the
frozen ``to_k``/``to_v`` of the null-token path (the paper copies the text projections). Only the mapper and the
branches train; the U-Net stays frozen.
"""
from __future__ import annotations

import copy
import time

import numpy as np
import torch
from torch import nn

from ..common.checks import check_between, check_int, check_positive
from .diffusion import Schedule, diffusion_loss

__all__ = ["ParcelMapper", "BrainBranch", "NeuroAdapter", "token_dropout", "train_adapter", "train_unet"]


class ParcelMapper(nn.Module):
    """Per-parcel linear map of ``n_voxels`` voxels to a ``dim``-d token: ``E_p = x_p W_p + c_p``.

    Explained in chapters/neuroadapter/01_theory.md. Input (n, parcels, voxels), output (n, parcels, dim).
    """

    def __init__(self, n_parcels: int, n_voxels: int, dim: int = 64):
        super().__init__()
        p, v, d = check_int("n_parcels", n_parcels), check_int("n_voxels", n_voxels), check_int("dim", dim)
        self.weight = nn.Parameter(torch.randn(p, v, d) / np.sqrt(v))
        self.bias = nn.Parameter(torch.zeros(p, d))

    def forward(self, voxels: torch.Tensor) -> torch.Tensor:
        """Tokens of ``voxels`` (n, parcels, voxels). Explained in chapters/neuroadapter/01_theory.md."""
        if voxels.ndim != 3 or voxels.shape[1:] != self.weight.shape[:2]:
            raise ValueError(f"voxels must have shape (n, {self.weight.shape[0]}, {self.weight.shape[1]}); "
                             f"got {tuple(voxels.shape)}")
        return torch.einsum("npv,pvd->npd", voxels, self.weight) + self.bias


class BrainBranch(nn.Module):
    """``to_q``, ``to_k`` and ``to_v`` of the decoupled brain branch of one cross-attention, copied from the frozen
    ones. Explained in chapters/neuroadapter/01_theory.md.

    The paper trains ``to_k``/``to_v`` only and reuses Stable Diffusion's queries, which text training made
    meaningful. Our stage 0 attends to a single null token, whose softmax is 1 whatever the query, so its ``to_q``
    never receives a gradient and stays at its random initialisation; the branch therefore trains its own copy.
    """

    def __init__(self, attention):
        super().__init__()
        self.to_q = copy.deepcopy(attention.to_q).requires_grad_(True)
        self.to_k = copy.deepcopy(attention.to_k).requires_grad_(True)
        self.to_v = copy.deepcopy(attention.to_v).requires_grad_(True)


class NeuroAdapter(nn.Module):
    """The trainable part: a ``ParcelMapper`` and one ``BrainBranch`` per attention site of a ``TinyUNet``.

    Explained in chapters/neuroadapter/01_theory.md. ``attach(unet)`` fills the U-Net's slots; ``tokens(voxels,
    keep)`` maps voxels to tokens and zeroes the tokens where ``keep`` is False (masking, dropout, the
    unconditional input of guidance).
    """

    def __init__(self, unet, n_parcels: int, n_voxels: int):
        super().__init__()
        self.mapper = ParcelMapper(n_parcels, n_voxels, unet.config["context"])
        self.branches = nn.ModuleDict({s: BrainBranch(unet.attn[s]) for s in unet.SITES})

    def attach(self, unet) -> None:
        """Put the branches into ``unet``'s cross-attention slots. Explained in chapters/neuroadapter/01_theory.md."""
        for s, b in self.branches.items():
            unet.attn[s].ip = b

    def tokens(self, voxels: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        """Brain tokens of ``voxels``; zero where ``keep`` (n, parcels) or (parcels,) is False.

        Explained in chapters/neuroadapter/01_theory.md.
        """
        e = self.mapper(voxels)
        if keep is not None:
            keep = torch.as_tensor(keep, dtype=torch.bool)
            if keep.shape[-1] != e.shape[1]:
                raise ValueError(f"keep must have {e.shape[1]} entries per sample; got shape {tuple(keep.shape)}")
            e = e * keep.reshape(-1 if keep.ndim == 2 else 1, e.shape[1], 1).to(e.dtype)
        return e


def _warmup_cosine(opt, steps: int):
    warm = max(1, steps // 20)
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: min(1.0, (i + 1) / warm) * 0.5 * (1 + np.cos(np.pi * min(i, steps) / steps)))


def _optimise(opt, batch_loss, steps: int, progress=None) -> list[float]:
    """``steps`` steps of ``opt`` on ``batch_loss()`` under the warm-up + cosine schedule; the losses."""
    sched = _warmup_cosine(opt, steps)
    losses = []
    for _ in range(steps) if progress is None else progress(range(steps)):
        loss = batch_loss()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return losses


def token_dropout(n: int, p: int, generator=None) -> torch.Tensor:
    """The paper's fMRI token dropout: per sample a ratio ``r ~ U(0, 1)``, each token dropped when ``u ≤ r``.

    Explained in chapters/neuroadapter/01_theory.md. Returns the *keep* mask (n, p), bool.
    """
    n, p = check_int("n", n), check_int("p", p)
    r = torch.rand((n, 1), generator=generator)
    return torch.rand((n, p), generator=generator) > r


def train_unet(unet, images: np.ndarray, steps: int, batch: int = 128, lr: float = 2e-3, seed: int = 0,
               schedule: Schedule | None = None, progress=None) -> list[float]:
    """Stage 0: train ``unet`` on ``images`` (n, 16, 16) with the Min-SNR ε loss and its null token; returns the
    losses. Explained in chapters/neuroadapter/02_experiments.md.
    """
    steps, batch = check_int("steps", steps), check_int("batch", batch)
    lr = check_positive("lr", lr)
    schedule = schedule or Schedule()
    x = torch.as_tensor(np.asarray(images, dtype=np.float32))[:, None]
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    opt = torch.optim.AdamW(unet.parameters(), lr=lr, weight_decay=0.0)

    def batch_loss():
        idx = torch.randint(0, len(x), (batch,), generator=g)
        return diffusion_loss(unet, schedule, x[idx], None, g)

    return _optimise(opt, batch_loss, steps, progress)


def train_adapter(unet, adapter: NeuroAdapter, images: np.ndarray, voxels: np.ndarray, steps: int, batch: int = 128,
                  lr: float = 2e-3, weight_decay: float = 1e-2, dropout: bool = True, seed: int = 0,
                  schedule: Schedule | None = None, progress=None) -> list[float]:
    """Stage 1: freeze ``unet``, train ``adapter`` on (image, voxels) pairs with the Min-SNR ε loss and token
    dropout; returns the losses. Explained in chapters/neuroadapter/02_experiments.md.
    """
    steps, batch = check_int("steps", steps), check_int("batch", batch)
    lr, weight_decay = check_positive("lr", lr), check_between("weight_decay", weight_decay, 0, 1, "left")
    if len(images) != len(voxels):
        raise ValueError(f"images and voxels must have the same length; got {len(images)} and {len(voxels)}")
    schedule = schedule or Schedule()
    unet.requires_grad_(False).eval()
    adapter.attach(unet)
    x = torch.as_tensor(np.asarray(images, dtype=np.float32))[:, None]
    v = torch.as_tensor(np.asarray(voxels, dtype=np.float32))
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    opt = torch.optim.AdamW(adapter.parameters(), lr=lr, weight_decay=weight_decay)

    def batch_loss():
        idx = torch.randint(0, len(x), (batch,), generator=g)
        keep = token_dropout(batch, v.shape[1], g) if dropout else None
        return diffusion_loss(unet, schedule, x[idx], adapter.tokens(v[idx], keep), g)

    return _optimise(opt, batch_loss, steps, progress)
