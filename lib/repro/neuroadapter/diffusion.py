"""The diffusion pieces: the cosine schedule, the forward process, the Min-SNR weighted ε loss, the DDIM step,
classifier-free guidance and the sampler that records attention at every step.

Explained in chapters/neuroadapter/01_theory.md. Timesteps are integers ``0 … T-1`` with ``ᾱ_t`` from the cosine
schedule (Nichol & Dhariwal, 2021); DDIM is deterministic (η = 0).
"""
from __future__ import annotations

import math

import torch

from ..common.checks import check_int, check_non_negative, check_positive

__all__ = ["Schedule", "min_snr_weight", "diffusion_loss", "ddim_step", "guided_eps", "ddim_timesteps", "sample"]


class Schedule:
    """The cosine noise schedule with ``T`` steps: ``alpha_bar[t]`` for ``t = 0 … T-1``.

    Explained in chapters/neuroadapter/01_theory.md.
    """

    def __init__(self, T: int = 200, s: float = 0.008):
        self.T = check_int("T", T, low=2)
        s = check_positive("s", s)
        f = torch.cos((torch.arange(self.T + 1, dtype=torch.float64) / self.T + s) / (1 + s) * math.pi / 2) ** 2
        betas = torch.clip(1 - f[1:] / f[:-1], 0, 0.999)
        self.alpha_bar = torch.cumprod(1 - betas, 0).float()

    def q_sample(self, x0: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """``x_t = √ᾱ_t x0 + √(1-ᾱ_t) ε``. Explained in chapters/neuroadapter/01_theory.md."""
        if x0.shape != eps.shape:
            raise ValueError(f"x0 and eps must have the same shape; got {tuple(x0.shape)} and {tuple(eps.shape)}")
        ab = self.alpha_bar[t].view(-1, *([1] * (x0.ndim - 1)))
        return ab.sqrt() * x0 + (1 - ab).sqrt() * eps

    def snr(self, t: torch.Tensor) -> torch.Tensor:
        """``SNR_t = ᾱ_t / (1 - ᾱ_t)``. Explained in chapters/neuroadapter/01_theory.md."""
        ab = self.alpha_bar[t]
        return ab / (1 - ab)


def min_snr_weight(schedule: Schedule, t: torch.Tensor, gamma: float = 5.0) -> torch.Tensor:
    """The Min-SNR weight of the ε loss, ``min(SNR_t, γ) / SNR_t``. Explained in chapters/neuroadapter/01_theory.md."""
    gamma = check_positive("gamma", gamma)
    snr = schedule.snr(t)
    return torch.clamp(snr, max=gamma) / snr


def diffusion_loss(model, schedule: Schedule, x0: torch.Tensor, tokens=None, generator=None,
                   gamma: float = 5.0) -> torch.Tensor:
    """One Min-SNR weighted ε-prediction MSE on a batch ``x0`` (n, 1, 16, 16) with random timesteps and noise.

    Explained in chapters/neuroadapter/01_theory.md. ``model(x_t, t, tokens)`` predicts ε.
    """
    if x0.ndim != 4:
        raise ValueError(f"x0 must be a batch of images (n, 1, h, w); got shape {tuple(x0.shape)}")
    t = torch.randint(0, schedule.T, (len(x0),), generator=generator)
    eps = torch.randn(x0.shape, generator=generator)
    pred = model(schedule.q_sample(x0, t, eps), t, tokens)
    per = ((pred - eps) ** 2).flatten(1).mean(1)
    return (min_snr_weight(schedule, t, gamma) * per).mean()


def ddim_timesteps(schedule: Schedule, steps: int = 25) -> list[int]:
    """``steps`` evenly spaced timesteps from ``T-1`` down to 0. Explained in chapters/neuroadapter/01_theory.md."""
    steps = check_int("steps", steps)
    if steps > schedule.T:
        raise ValueError(f"steps must be at most T = {schedule.T}; got {steps}")
    return [int(round(v)) for v in torch.linspace(schedule.T - 1, 0, steps).tolist()]


def ddim_step(schedule: Schedule, x: torch.Tensor, eps: torch.Tensor, t: int, t_prev: int | None,
              clip: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """One deterministic DDIM step from ``t`` to ``t_prev`` (None: to the clean image). Returns ``(x_prev, x0_hat)``.

    Explained in chapters/neuroadapter/01_theory.md: ``x̂0 = (x_t - √(1-ᾱ_t) ε) / √ᾱ_t``, then
    ``x_prev = √ᾱ_prev x̂0 + √(1-ᾱ_prev) ε``.
    """
    if x.shape != eps.shape:
        raise ValueError(f"x and eps must have the same shape; got {tuple(x.shape)} and {tuple(eps.shape)}")
    if not 0 <= t < schedule.T:
        raise ValueError(f"t must be in [0, {schedule.T - 1}]; got {t}")
    ab = schedule.alpha_bar[t]
    ab_prev = schedule.alpha_bar[t_prev] if t_prev is not None else torch.tensor(1.0)
    x0 = (x - (1 - ab).sqrt() * eps) / ab.sqrt()
    if clip:
        x0 = x0.clamp(-1, 1)
    return ab_prev.sqrt() * x0 + (1 - ab_prev).sqrt() * eps, x0


def guided_eps(eps_cond: torch.Tensor, eps_uncond: torch.Tensor, guidance: float) -> torch.Tensor:
    """Classifier-free guidance, ``ε_u + g (ε_c - ε_u)``. Explained in chapters/neuroadapter/01_theory.md."""
    guidance = check_non_negative("guidance", guidance)
    return eps_uncond + guidance * (eps_cond - eps_uncond)


@torch.no_grad()
def sample(model, schedule: Schedule, tokens: torch.Tensor, guidance: float = 3.0, steps: int = 25, seed: int = 0,
           record: bool = False):
    """DDIM samples for brain ``tokens`` (n, p, C) with guidance against zero tokens; returns ``(images, attention)``.

    Explained in chapters/neuroadapter/01_theory.md. ``attention`` is, when ``record``, a list over steps of
    ``{site: (n, queries, p)}`` head-averaged brain attention of the conditional pass (else None).

    Each step is one pass of ``model`` (a ``TinyUNet``) over the conditional and unconditional batches stacked;
    ``model.forward_guided`` gives bitwise what ``model(torch.cat([x, x]), t, torch.cat([tokens, zeros]))`` gives,
    with the brain keys and values computed once for all steps instead of at every step.
    """
    if tokens.ndim != 3:
        raise ValueError(f"tokens must have shape (n, p, C); got {tuple(tokens.shape)}")
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    n = len(tokens)
    x = torch.randn((n, 1, 16, 16), generator=g)
    ts = ddim_timesteps(schedule, steps)
    keys = model.brain_keys(torch.cat([tokens, torch.zeros_like(tokens)]), n)
    trace = [] if record else None
    for i, t in enumerate(ts):
        for site in model.SITES:
            model.attn[site].record = [] if record else None
        out = model.forward_guided(torch.cat([x, x]), torch.full((2 * n,), t, dtype=torch.long), keys)
        if record:
            trace.append({s: model.attn[s].record[0][:n] for s in model.SITES})
        x, _ = ddim_step(schedule, x, guided_eps(out[:n], out[n:], guidance), t, ts[i + 1] if i + 1 < len(ts) else None)
    for site in model.SITES:
        model.attn[site].record = None
    return x.clamp(-1, 1), trace
