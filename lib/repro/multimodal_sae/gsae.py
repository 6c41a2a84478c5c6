"""The paired TopK SAE of the paper and its two variants, GSAE (ℓ2,1 group loss) and MGSAE (plus a shared mask).

Explained in chapters/multimodal-sae/01_theory.md. One SAE with weights shared by the two modalities and a
pre-bias per modality, b_0 for images and b_1 for text:

    z_x = TopK(m ⊙ (W_enc (x - b_0) + b_enc)),    x_hat = W_dec z_x + b_0     (and y with b_1),

trained on pairs (x, y) with

    L = |x - x_hat|^2 + |y - y_hat|^2 + λ Σ_i sqrt(z_{x,i}^2 + z_{y,i}^2).

m ∈ {0,1}^p keeps each latent with probability 1 - p_mask, is drawn afresh for every pair and is the same for both of
its members; it is used in training only. SAE is λ = 0 and p_mask = 0; GSAE λ > 0, p_mask = 0; MGSAE both > 0.

`PairedSAE` holds M such models stacked along a leading axis (one λ and one p_mask each, the same initialisation)
and trains them together on the same batches: a λ × p_mask sweep costs one batched loop. The TopK itself is the
book's `repro.nn.sae.topk_activation`. (The paper applies the mask before adding b_enc; we mask the whole
pre-activation so that a masked latent cannot fire through its bias.)
"""
from __future__ import annotations


import numpy as np
import torch
from torch import nn

from ..common import check_between, check_int, check_non_negative, check_positive, stopwatch
from ..nn.sae import normalize_columns_, remove_parallel_gradient_, topk_activation


class PairedSAE(nn.Module):
    """M stacked paired TopK SAEs of width p on d-dimensional pairs; see the module docstring.

    Explained in chapters/multimodal-sae/01_theory.md.
    """

    def __init__(self, d: int, p: int, k: int, lambdas, p_masks, shared_bias: bool = False, seed: int = 0):
        super().__init__()
        check_int("d", d)
        check_int("p", p)
        check_int("k", k)
        if k > p:
            raise ValueError(f"k must be at most p={p}, got {k}")
        lambdas = [check_non_negative("lambdas", float(v)) for v in np.atleast_1d(lambdas)]
        p_masks = [check_between("p_masks", float(v), 0, 1, closed="left") for v in np.atleast_1d(p_masks)]
        if len(lambdas) != len(p_masks) or not lambdas:
            raise ValueError(f"lambdas and p_masks must have the same non-zero length, got {len(lambdas)} and "
                             f"{len(p_masks)}")
        M = len(lambdas)
        self.d, self.p, self.k, self.M = d, p, k, M
        self.shared_bias = bool(shared_bias)
        self.register_buffer("lambdas", torch.tensor(lambdas))
        self.register_buffer("p_masks", torch.tensor(p_masks))
        gen = torch.Generator().manual_seed(int(seed))
        W = torch.randn(d, p, generator=gen)
        W = W / W.norm(dim=0, keepdim=True)
        self.W_dec = nn.Parameter(W.expand(M, d, p).clone())            # (M, d, p), unit columns
        self.W_enc = nn.Parameter(W.t().expand(M, p, d).clone())        # tied initialisation
        self.b_enc = nn.Parameter(torch.zeros(M, p))
        self.b_pre = nn.Parameter(torch.zeros(M, 2, d))                  # b_0 (images), b_1 (text)

    def _stack(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim == 2:
            x = x.expand(self.M, *x.shape)
        if x.ndim != 3 or x.shape[0] != self.M or x.shape[2] != self.d:
            raise ValueError(f"x must have shape (B, {self.d}) or ({self.M}, B, {self.d}), got {tuple(x.shape)}")
        return x

    def _b(self, modality: int) -> int:
        return 0 if self.shared_bias else modality

    def pre_activation(self, x: torch.Tensor, modality: int) -> torch.Tensor:
        """W_enc (x - b_modality) + b_enc, shape (M, B, p); modality 0 is images, 1 text."""
        if modality not in (0, 1):
            raise ValueError(f"modality must be 0 (image) or 1 (text), got {modality!r}")
        x = self._stack(x)
        return torch.bmm(x - self.b_pre[:, self._b(modality), None], self.W_enc.transpose(1, 2)) + self.b_enc[:, None]

    def encode(self, x: torch.Tensor, modality: int, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Sparse codes (M, B, p), with the training mask (M, B, p) if given."""
        pre = self.pre_activation(x, modality)
        return topk_activation(pre if mask is None else pre * mask, self.k)

    def decode(self, z: torch.Tensor, modality: int) -> torch.Tensor:
        """W_dec z + b_modality, shape (M, B, d)."""
        return torch.bmm(z, self.W_dec.transpose(1, 2)) + self.b_pre[:, self._b(modality), None]

    def loss(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None):
        """Per-model losses (M,): reconstruction of both members (mean over the batch) + λ · group norm."""
        zx, zy = self.encode(x, 0, mask), self.encode(y, 1, mask)
        rec = ((self._stack(x) - self.decode(zx, 0)).pow(2).sum(-1)
               + (self._stack(y) - self.decode(zy, 1)).pow(2).sum(-1)).mean(1)
        group = torch.sqrt(zx.pow(2) + zy.pow(2) + 1e-12).sum(-1).mean(1)
        return rec + self.lambdas * group, rec, group

    def draw_mask(self, batch: int, gen: torch.Generator) -> torch.Tensor:
        """The shared cross-modal mask (M, B, p): 1 with probability 1 - p_mask of each model."""
        u = torch.rand(self.M, batch, self.p, generator=gen)
        return (u >= self.p_masks[:, None, None]).float()

    @torch.no_grad()
    def normalize_decoder(self):
        """Rescale every decoder column to unit norm."""
        normalize_columns_(self.W_dec, dim=1)

    @torch.no_grad()
    def remove_parallel_gradient(self):
        """Drop the part of W_dec's gradient that would change its columns' norms."""
        remove_parallel_gradient_(self.W_dec, dim=1)


def train_paired(sae: PairedSAE, x: torch.Tensor, y: torch.Tensor, steps: int, batch_size: int = 256,
                 lr: float = 1e-3, seed: int = 0) -> dict:
    """Train every stacked model of `sae` with Adam on matched rows of x and y (N, d), the same batches for all.

    Batches and masks come from two separate generators, so that p_mask = 0 changes nothing else. Returns dict(loss
    (steps, M), recon, group, seconds). Explained in chapters/multimodal-sae/01_theory.md.
    """
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, torch.Tensor) or t.ndim != 2 or t.shape[1] != sae.d:
            raise ValueError(f"{name} must be a tensor of shape (N, {sae.d})")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    check_int("steps", steps, 0)
    check_int("batch_size", batch_size)
    check_positive("lr", lr)
    g_batch = torch.Generator().manual_seed(int(seed))
    g_mask = torch.Generator().manual_seed(int(seed) + 7919)
    with torch.no_grad():
        sae.b_pre[:, 0] = (x.mean(0) + y.mean(0)) / 2 if sae.shared_bias else x.mean(0)
        sae.b_pre[:, 1] = y.mean(0)
    opt = torch.optim.Adam(sae.parameters(), lr=lr)
    masked = bool((sae.p_masks > 0).any())
    hist = {"loss": [], "recon": [], "group": []}
    with stopwatch() as watch:
        for _ in range(steps):
            idx = torch.randint(x.shape[0], (batch_size,), generator=g_batch)
            mask = sae.draw_mask(batch_size, g_mask) if masked else None
            loss, rec, group = sae.loss(x[idx], y[idx], mask)
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()
            sae.remove_parallel_gradient()
            opt.step()
            sae.normalize_decoder()
            hist["loss"].append(loss.detach().numpy())
            hist["recon"].append(rec.detach().numpy())
            hist["group"].append(group.detach().numpy())
        hist = {k: np.stack(v) if v else np.zeros((0, sae.M)) for k, v in hist.items()}
    hist["seconds"] = watch.seconds
    sae.eval()
    return hist


@torch.no_grad()
def encode_pairs(sae: PairedSAE, x: torch.Tensor, y: torch.Tensor):
    """Codes (M, N, p) and reconstructions (M, N, d) of both modalities, without the mask.

    Explained in chapters/multimodal-sae/01_theory.md.
    """
    zx, zy = sae.encode(x, 0), sae.encode(y, 1)
    return zx, zy, sae.decode(zx, 0), sae.decode(zy, 1)
