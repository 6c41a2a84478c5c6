"""The library peer: diffusers' ``UNet2DConditionModel`` built from a tiny config (no weights, no hub), conditioned
on the same brain tokens through its own cross-attention, trained side by side with our U-Net on the same batches.

Explained in chapters/neuroadapter/02_experiments.md. Both models start from scratch and train *jointly* with a
fresh ``ParcelMapper`` (the comparison is of the two conditioned U-Nets, not of our frozen two-stage recipe), with
the same Min-SNR ε loss, optimiser, batches and timesteps.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import torch

from ..common.checks import check_int
from ..common.timing import stopwatch
from .adapter import NeuroAdapter, ParcelMapper, token_dropout
from .diffusion import Schedule, diffusion_loss
from .unet import TinyUNet, UNetConfig

__all__ = ["diffusers_unet", "race"]


def diffusers_unet(context: int = 64):
    """A diffusers ``UNet2DConditionModel`` for 1×16×16 images with about our U-Net's widths (16, 32, 32), cross-
    attention at 8×8 and 4×4, context width ``context``. Explained in chapters/neuroadapter/02_experiments.md.
    """
    context = check_int("context", context)
    logging.getLogger("diffusers").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from diffusers import UNet2DConditionModel

        return UNet2DConditionModel(
            sample_size=16, in_channels=1, out_channels=1, layers_per_block=1, block_out_channels=(16, 32, 32),
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=context,
            attention_head_dim=8, norm_num_groups=8)


class _Diffusers(torch.nn.Module):
    def __init__(self, n_parcels: int, n_voxels: int, context: int):
        super().__init__()
        self.unet, self.mapper = diffusers_unet(context), ParcelMapper(n_parcels, n_voxels, context)

    def forward(self, x, t, tokens):
        return self.unet(x, t, encoder_hidden_states=tokens).sample


class _Ours(torch.nn.Module):
    def __init__(self, n_parcels: int, n_voxels: int):
        super().__init__()
        self.unet = TinyUNet(UNetConfig())
        self.adapter = NeuroAdapter(self.unet, n_parcels, n_voxels)
        self.adapter.attach(self.unet)
        self.mapper = self.adapter.mapper

    def forward(self, x, t, tokens):
        return self.unet(x, t, tokens)


def race(images, voxels, steps: int, batch: int = 64, lr: float = 2e-3, seed: int = 0) -> dict:
    """Train our conditioned U-Net and the diffusers one for ``steps`` on the same batches; returns
    ``{name: {"losses", "ms_per_step", "parameters"}}``. Explained in chapters/neuroadapter/02_experiments.md.
    """
    steps, batch = check_int("steps", steps), check_int("batch", batch)
    x = torch.as_tensor(np.asarray(images, dtype=np.float32))[:, None]
    v = torch.as_tensor(np.asarray(voxels, dtype=np.float32))
    if len(x) != len(v) or v.ndim != 3:
        raise ValueError(f"images and voxels (n, parcels, voxels) must have the same length; got {tuple(x.shape)} "
                         f"and {tuple(v.shape)}")
    out, sched = {}, Schedule()
    for name, make in (("ours (TinyUNet)", lambda: _Ours(v.shape[1], v.shape[2])),
                       ("diffusers UNet2DConditionModel", lambda: _Diffusers(v.shape[1], v.shape[2], 64))):
        torch.manual_seed(seed)
        model = make()
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        g = torch.Generator().manual_seed(seed)
        losses = []
        with stopwatch() as watch:
            for _ in range(steps):
                idx = torch.randint(0, len(x), (batch,), generator=g)
                keep = token_dropout(batch, v.shape[1], g)
                tokens = model.mapper(v[idx]) * keep[..., None]
                loss = diffusion_loss(model, sched, x[idx], tokens, g)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(float(loss.detach()))
        out[name] = {"losses": losses, "ms_per_step": 1e3 * watch.seconds / steps,
                     "parameters": sum(p.numel() for n_, p in model.named_parameters() if not n_.startswith("mapper"))}
    return out
