"""A tiny U-Net DDPM (16 → 8 → 4 pixels) with a cross-attention slot at the 8×8 and 4×4 levels.

Explained in chapters/neuroadapter/01_theory.md and chapters/neuroadapter/02_experiments.md. Stage 0 trains it on the
images with a single learned *null token* as its only context (the stand-in for Stable Diffusion's empty text
prompt), then freezes it. Each ``CrossAttention`` has an empty ``ip`` slot that a NeuroAdapter fills with the
decoupled brain branch (``repro.neuroadapter.adapter``); while the slot is empty the model is the image-only DDPM.
The three attention sites (``down``, ``mid``, ``up``) match the three layers the paper hooks.

One choice of ours: the queries see a fixed 2-d sinusoidal position code added to the normalised features. A
U-Net with zero padding knows where it is only near the borders; Stable Diffusion's large features encode position,
ours would not without it.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..common.checks import check_int

__all__ = ["UNetConfig", "TinyUNet", "CrossAttention", "timestep_embedding", "position_code"]


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding (n, dim) of integer timesteps ``t`` (n,). Explained in
    chapters/neuroadapter/01_theory.md.
    """
    dim = check_int("dim", dim, low=2)
    if t.ndim != 1:
        raise ValueError(f"t must be a 1-d tensor of timesteps; got shape {tuple(t.shape)}")
    half = dim // 2
    freqs = torch.exp(-math.log(10_000) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], -1)


def position_code(side: int, channels: int) -> torch.Tensor:
    """A fixed 2-d sinusoidal position code (side·side, channels): rows and columns, ``channels // 4``
    frequencies each. Explained in chapters/neuroadapter/02_experiments.md.
    """
    side, channels = check_int("side", side), check_int("channels", channels, low=4)
    k = torch.arange(1, channels // 4 + 1, dtype=torch.float32)
    r = (torch.arange(side, dtype=torch.float32) + 0.5) / side
    rr, cc = torch.meshgrid(r, r, indexing="ij")
    rr, cc = rr.reshape(-1, 1) * math.pi * k, cc.reshape(-1, 1) * math.pi * k
    code = torch.cat([torch.sin(rr), torch.cos(rr), torch.sin(cc), torch.cos(cc)], -1)
    return F.pad(code, (0, channels - code.shape[1]))


class UNetConfig(dict):
    """The U-Net's sizes (a dict, so it saves as plain JSON). Explained in chapters/neuroadapter/02_experiments.md."""

    def __init__(self, base: int = 16, width: int = 32, context: int = 64, heads: int = 4, temb: int = 64):
        super().__init__(base=check_int("base", base), width=check_int("width", width),
                         context=check_int("context", context), heads=check_int("heads", heads),
                         temb=check_int("temb", temb))


class _Res(nn.Module):
    def __init__(self, cin: int, cout: int, temb: int):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(temb, cout)
        self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x))) + self.t(temb)[:, :, None, None]
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class CrossAttention(nn.Module):
    """Cross-attention from the pixels of a feature map (queries) to a context of tokens, with a decoupled slot.

    Explained in chapters/neuroadapter/01_theory.md. ``out = to_out(Attn(Q, K_null, V_null) + λ·softmax(Q K_ipᵀ /
    √d) V_ip)``; the second term exists only while ``self.ip`` holds a branch (``repro.neuroadapter.adapter``),
    whose own query projection replaces ``to_q`` there (see ``BrainBranch``).
    While ``self.record`` is a list, each call appends the head-averaged brain attention (n, queries, tokens).
    """

    def __init__(self, channels: int, side: int, context: int, heads: int):
        super().__init__()
        self.heads, self.dim_head = check_int("heads", heads), channels // heads
        self.norm = nn.GroupNorm(8, channels)
        self.register_buffer("pos", position_code(side, channels), persistent=False)
        self.to_q = nn.Linear(channels, channels, bias=False)
        self.to_k = nn.Linear(context, channels, bias=False)
        self.to_v = nn.Linear(context, channels, bias=False)
        self.to_out = nn.Linear(channels, channels)
        self.ip = None
        self.scale_ip = 1.0
        self.record = None

    def _split(self, x):
        n, s, _ = x.shape
        return x.view(n, s, self.heads, self.dim_head).transpose(1, 2)

    def forward(self, h: torch.Tensor, null: torch.Tensor, tokens: torch.Tensor | None = None) -> torch.Tensor:
        """``h`` (n, C, s, s), ``null`` (1, C_ctx), ``tokens`` (n, p, C_ctx) or None. Explained in
        chapters/neuroadapter/01_theory.md.
        """
        n, c, s, _ = h.shape
        x = self.norm(h).flatten(2).transpose(1, 2) + self.pos
        q = self._split(self.to_q(x))
        ctx = null.expand(n, -1, -1)
        out = F.scaled_dot_product_attention(q, self._split(self.to_k(ctx)), self._split(self.to_v(ctx)))
        if self.ip is not None and tokens is not None:
            q = self._split(self.ip.to_q(x))
            k, v = self._split(self.ip.to_k(tokens)), self._split(self.ip.to_v(tokens))
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dim_head), -1)   # (n, H, q, p)
            if self.record is not None:
                self.record.append(a.mean(1).detach())
            out = out + self.scale_ip * (a @ v)
        out = self.to_out(out.transpose(1, 2).reshape(n, s * s, c))
        return h + out.transpose(1, 2).view(n, c, s, s)

    def brain_keys(self, tokens: torch.Tensor, n_cond: int):
        """The brain branch's keys and values (each (n_cond, heads, p, dim_head)) of the first ``n_cond`` rows of
        ``tokens`` (N, p, C_ctx), or None while the slot is empty: what ``forward(h, null, tokens)`` computes from the
        tokens at every call, for ``forward_guided``, which a sampler calls with the same tokens at every step.

        Explained in chapters/neuroadapter/01_theory.md. The projections run on all N rows, as in ``forward``, and
        are sliced afterwards, so the numbers are the ones ``forward`` uses.
        """
        if self.ip is None:
            return None
        return self._split(self.ip.to_k(tokens))[:n_cond], self._split(self.ip.to_v(tokens))[:n_cond]

    def forward_guided(self, h: torch.Tensor, null: torch.Tensor, keys) -> torch.Tensor:
        """``forward`` for classifier-free guidance at inference: ``h`` (2n, C, s, s) stacks n conditional samples
        over n unconditional ones, whose brain tokens are all zero; ``keys`` is ``brain_keys(tokens, n)`` of the
        stacked tokens. Returns bitwise what ``forward(h, null, tokens)`` returns, with less work:

        - the null branch attends to a single token, whose softmax weight is exactly 1 for every query, so its
          output is ``V_null`` at every query, taken directly instead of through ``scaled_dot_product_attention``;
        - zero tokens have zero keys and values (the projections have no bias), so the brain branch adds exactly zero
          to the unconditional half: it runs on the conditional half only (the same per-sample products and
          softmax rows as on the stacked batch).

        Explained in chapters/neuroadapter/01_theory.md. For sampling only (no gradient): the shortcut's gradient
        would sum in another order than that of ``scaled_dot_product_attention``, so training keeps ``forward``.
        """
        n2, c, s, _ = h.shape
        x = self.norm(h).flatten(2).transpose(1, 2) + self.pos
        out = self._split(self.to_v(null.expand(n2, -1, -1))).expand(-1, -1, s * s, -1)   # V_null at every query
        if keys is not None:
            k, v = keys
            n = len(k)
            q = self._split(self.ip.to_q(x))[:n]
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dim_head), -1)   # (n, H, q, p)
            if self.record is not None:
                self.record.append(a.mean(1).detach())
            out = torch.cat([out[:n] + self.scale_ip * (a @ v), out[n:]])
        out = self.to_out(out.transpose(1, 2).reshape(n2, s * s, c))
        return h + out.transpose(1, 2).view(n2, c, s, s)


class TinyUNet(nn.Module):
    """ε-prediction U-Net for 1×16×16 images: 16 → 8 → 4 → 8 → 16, cross-attention at ``down`` (8×8), ``mid``
    (4×4) and ``up`` (8×8). Explained in chapters/neuroadapter/02_experiments.md.
    """

    SITES = ("down", "mid", "up")

    def __init__(self, config: UNetConfig | None = None):
        super().__init__()
        cfg = UNetConfig(**(config or {}))
        self.config = dict(cfg)
        b, w, ctx, heads, te = cfg["base"], cfg["width"], cfg["context"], cfg["heads"], cfg["temb"]
        self.temb = nn.Sequential(nn.Linear(te, te), nn.SiLU(), nn.Linear(te, te))
        self.null = nn.Parameter(torch.randn(1, ctx) * 0.1)
        self.inp = nn.Conv2d(1, b, 3, padding=1)
        self.r16 = _Res(b, b, te)
        self.d8 = nn.Conv2d(b, b, 3, stride=2, padding=1)
        self.r8 = _Res(b, w, te)
        self.d4 = nn.Conv2d(w, w, 3, stride=2, padding=1)
        self.m1, self.m2 = _Res(w, w, te), _Res(w, w, te)
        self.u8 = _Res(2 * w, w, te)
        self.u16 = _Res(w + b, b, te)
        self.out = nn.Sequential(nn.GroupNorm(8, b), nn.SiLU(), nn.Conv2d(b, 1, 3, padding=1))
        self.attn = nn.ModuleDict({"down": CrossAttention(w, 8, ctx, heads), "mid": CrossAttention(w, 4, ctx, heads),
                                   "up": CrossAttention(w, 8, ctx, heads)})

    def forward(self, x: torch.Tensor, t: torch.Tensor, tokens: torch.Tensor | None = None) -> torch.Tensor:
        """Predicted noise for ``x`` (n, 1, 16, 16) at timesteps ``t`` (n,), with brain ``tokens`` (n, p, C_ctx)
        for the adapter slots (ignored while they are empty). Explained in chapters/neuroadapter/01_theory.md.
        """
        return self._eps(x, t, lambda site, h, null: self.attn[site](h, null, tokens))

    def brain_keys(self, tokens: torch.Tensor, n_cond: int) -> dict:
        """``{site: CrossAttention.brain_keys(tokens, n_cond)}``: the brain keys and values of the conditional
        rows, computed once per sampling run for ``forward_guided``. Explained in chapters/neuroadapter/01_theory.md.
        """
        if tokens.ndim != 3:
            raise ValueError(f"tokens must have shape (n, p, C); got {tuple(tokens.shape)}")
        return {s: self.attn[s].brain_keys(tokens, n_cond) for s in self.SITES}

    def forward_guided(self, x: torch.Tensor, t: torch.Tensor, keys: dict) -> torch.Tensor:
        """Bitwise ``forward(x, t, tokens)`` for a guidance batch at inference: ``x`` (2n, 1, 16, 16) stacks the
        conditional samples over the unconditional ones (zero tokens), ``keys`` is ``brain_keys(tokens, n)``.

        Explained in chapters/neuroadapter/01_theory.md; see ``CrossAttention.forward_guided`` for what it skips.
        """
        return self._eps(x, t, lambda site, h, null: self.attn[site].forward_guided(h, null, keys[site]))

    def _eps(self, x: torch.Tensor, t: torch.Tensor, attend) -> torch.Tensor:
        """The U-Net's layers, with ``attend(site, h, null)`` as the cross-attention of each site."""
        if x.ndim != 4 or x.shape[1:] != (1, 16, 16):
            raise ValueError(f"x must have shape (n, 1, 16, 16); got {tuple(x.shape)}")
        temb = self.temb(timestep_embedding(t, self.config["temb"]))
        null = self.null[None]
        h16 = self.r16(self.inp(x), temb)
        h8 = attend("down", self.r8(self.d8(h16), temb), null)
        h4 = self.m1(self.d4(h8), temb)
        h4 = self.m2(attend("mid", h4, null), temb)
        u8 = attend("up", self.u8(torch.cat([F.interpolate(h4, scale_factor=2.0), h8], 1), temb), null)
        u16 = self.u16(torch.cat([F.interpolate(u8, scale_factor=2.0), h16], 1), temb)
        return self.out(u16)
