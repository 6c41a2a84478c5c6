"""A small DRC(D, N) in torch: a convolutional encoder, D stacked ConvLSTM layers repeated N ticks per env step.

Explained in chapters/sokoban-planning/01_theory.md. Following Guez et al. (2019) and the paper's agent: every layer
sees the encoded observation, the layer below (the first layer sees the top layer of the previous tick), a
pool-and-inject summary of its own state (per-channel mean and max over space, mixed by a linear map and broadcast)
and a boundary "fence" plane; gates are i, f, o (sigmoid) and j (tanh); c' = f c + i j, h' = o tanh c'. The policy
head is an MLP on the flattened top-layer h after the last tick, concatenated with the encoder's output (a skip). Kernels are 3x3 everywhere (the paper's encoder has
4x4 kernels, which offset its channels; odd kernels keep ours centred).

`ablate` takes a (D, C) 0/1 mask and multiplies h and c by it after every tick (zero-ablation of channels).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..common import check_int

__all__ = ["GATES", "DRCConfig", "DRC"]

GATES = ("i", "f", "j", "o")


@dataclass(frozen=True)
class DRCConfig:
    """Shape of a `DRC`: grid `size`, encoder channels `enc`, hidden channels `hidden` per layer, `layers` (D),
    `ticks` (N) per step, `head` units. Explained in chapters/sokoban-planning/01_theory.md."""

    size: int = 7
    enc: int = 16
    hidden: int = 16
    layers: int = 3
    ticks: int = 3
    head: int = 128
    in_planes: int = 4
    actions: int = 4

    def __post_init__(self):
        for name in ("size", "enc", "hidden", "layers", "ticks", "head", "in_planes", "actions"):
            check_int(name, getattr(self, name))

    def to_dict(self) -> dict:
        """The config as plain data (stored in checkpoints)."""
        return asdict(self)


class DRC(nn.Module):
    """The DRC agent; `step(obs, state)` runs the N ticks of one env step. Explained in
    chapters/sokoban-planning/01_theory.md."""

    def __init__(self, cfg: DRCConfig = DRCConfig()):
        super().__init__()
        if not isinstance(cfg, DRCConfig):
            raise ValueError(f"cfg must be a DRCConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        c, e = cfg.hidden, cfg.enc
        self.enc1 = nn.Conv2d(cfg.in_planes, e, 3, padding=1)
        self.enc2 = nn.Conv2d(e, e, 3, padding=1)
        self.ih = nn.ModuleList(nn.Conv2d(e + c + c + 1, 4 * c, 3, padding=1) for _ in range(cfg.layers))
        self.hh = nn.ModuleList(nn.Conv2d(c, 4 * c, 3, padding=1, bias=False) for _ in range(cfg.layers))
        self.pool = nn.ModuleList(nn.Linear(2 * c, c) for _ in range(cfg.layers))
        self.fc = nn.Linear((c + e) * cfg.size * cfg.size, cfg.head)
        self.policy = nn.Linear(cfg.head, cfg.actions)
        with torch.no_grad():
            for conv in self.ih:                            # forget-gate bias 1: remember by default
                conv.bias[c:2 * c] += 1.0
        fence = torch.zeros(1, 1, cfg.size, cfg.size)
        fence[..., 0, :] = fence[..., -1, :] = fence[..., :, 0] = fence[..., :, -1] = 1.0
        self.register_buffer("fence", fence, persistent=False)

    def initial_state(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Zero (h, c), each (D, B, C, H, W)."""
        cfg = self.cfg
        z = torch.zeros(cfg.layers, batch, cfg.hidden, cfg.size, cfg.size, device=self.fence.device)
        return z, z.clone()

    def encode(self, obs: torch.Tensor) -> torch.Tensor:
        """The encoder's planes (B, enc, H, W)."""
        return self.enc2(F.relu(self.enc1(obs)))

    def step(self, obs: torch.Tensor, state, *, ticks: int | None = None, ablate: torch.Tensor | None = None,
             record: list | None = None):
        """One env step: `ticks` (default N) ticks of all D layers on `obs` (B, planes, H, W).

        Returns (logits (B, actions), new state). When `record` is a list, appends h (D, B, C, H, W) after each
        tick to it.
        """
        cfg = self.cfg
        if obs.ndim != 4 or tuple(obs.shape[1:]) != (cfg.in_planes, cfg.size, cfg.size):
            raise ValueError(f"obs must be (B, {cfg.in_planes}, {cfg.size}, {cfg.size}), got {tuple(obs.shape)}")
        e = self.encode(obs)
        fence = self.fence.expand(obs.shape[0], -1, -1, -1)
        h, c = (list(s.unbind(0)) for s in state)
        for _ in range(cfg.ticks if ticks is None else ticks):
            for layer in range(cfg.layers):
                below = h[layer - 1]                       # layer 0 reads the top layer of the last tick
                pooled = torch.cat([h[layer].mean((2, 3)), h[layer].amax((2, 3))], dim=1)
                inject = self.pool[layer](pooled)[:, :, None, None].expand_as(h[layer])
                x = torch.cat([e, below, inject, fence], dim=1)
                gi, gf, gj, go = (self.ih[layer](x) + self.hh[layer](h[layer])).chunk(4, dim=1)
                c_new = torch.sigmoid(gf) * c[layer] + torch.sigmoid(gi) * torch.tanh(gj)
                h_new = torch.sigmoid(go) * torch.tanh(c_new)
                if ablate is not None:
                    m = ablate[layer][None, :, None, None]
                    h_new, c_new = h_new * m, c_new * m
                h[layer], c[layer] = h_new, c_new
            if record is not None:
                record.append(torch.stack(h).detach())
        logits = self.policy(F.relu(self.fc(torch.cat([h[-1], e], 1).flatten(1))))
        return logits, (torch.stack(h), torch.stack(c))

    def n_params(self) -> int:
        """Number of weights."""
        return sum(p.numel() for p in self.parameters())
