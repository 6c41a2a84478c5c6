"""The BL block, the deep utility and its two losses (chapters/behavior-learning/01_theory.md).

A unit is the penalised utility-maximisation problem max U s.t. C <= 0, T = 0; a block of h units maps z to
B(z) = lam_U * phi1(W_U z + b_U) - lam_C * phi2(W_C z + b_C) - lam_T * phi3(W_T z + b_T), with lam = softplus(raw)
+ 1e-8 > 0. Blocks stack; a linear head gives U(x, y). Parameter names follow blnetwork's
(``backbone.blocks.i.unit.lin_u``, ``lam``, ``head``) so that its state dict loads into ours.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..common import check_choice, check_int, check_positive

PHI1 = {"tanh": torch.tanh, "none": lambda v: v}
PHI3 = {"abs": torch.abs, "square": torch.square}


class BLUnit(nn.Module):
    """h units of one block: the utility, inequality-constraint and equality-constraint maps and their lam.
    (chapters/behavior-learning/01_theory.md)"""

    def __init__(self, in_dim: int, h: int, phi1="tanh", phi2="relu", phi3="abs", beta=1.0):
        super().__init__()
        self.phi1, self.phi2, self.phi3 = (check_choice("phi1", phi1, PHI1), check_choice("phi2", phi2, ("relu", "softplus")),
                                           check_choice("phi3", phi3, PHI3))
        self.beta = check_positive("beta", beta)
        self.lin_u, self.lin_c, self.lin_t = (nn.Linear(in_dim, h) for _ in range(3))
        self.lam = nn.Parameter(torch.ones(3, h))

    def multipliers(self) -> torch.Tensor:
        """lam_U, lam_C, lam_T as rows: softplus of the raw parameter plus 1e-8, so always positive.
        (chapters/behavior-learning/01_theory.md)"""
        return F.softplus(self.lam) + 1e-8

    def forward(self, z):
        lam = self.multipliers()
        u = PHI1[self.phi1](self.lin_u(z))
        c = F.relu(self.lin_c(z)) if self.phi2 == "relu" else F.softplus(self.lin_c(z), beta=self.beta)
        t = PHI3[self.phi3](self.lin_t(z))
        return lam[0] * u - lam[1] * c - lam[2] * t


class _Block(nn.Module):
    def __init__(self, unit):
        super().__init__()
        self.unit = unit

    def forward(self, z):
        return self.unit(z)


class _Backbone(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def forward(self, z):
        for b in self.blocks:
            z = b(z)
        return z


class BLModel(nn.Module):
    """U(x, y) = w . B_L(...B_1([x; y])) + b (chapters/behavior-learning/01_theory.md).

    ``y_dim`` is the number of classes K for classification (y enters one-hot) or the width of y for regression.
    """

    def __init__(self, x_dim: int, y_dim: int, hidden=(16, 8), phi1="tanh", phi2="relu", phi3="abs", beta=1.0,
                 task="discrete"):
        super().__init__()
        self.x_dim, self.y_dim = check_int("x_dim", x_dim), check_int("y_dim", y_dim)
        self.task = check_choice("task", task, ("discrete", "continuous"))
        hidden = [check_int("hidden", h) for h in hidden]
        if not hidden:
            raise ValueError("hidden must name at least one block width")
        dims = [self.x_dim + self.y_dim] + hidden[:-1]
        self.backbone = _Backbone([_Block(BLUnit(d, h, phi1, phi2, phi3, beta)) for d, h in zip(dims, hidden)])
        self.head = nn.Linear(hidden[-1], 1)

    def forward(self, x, y):
        """U(x, y), shape (B, 1); y is a class index (discrete) or a (B, y_dim) / (B,) float (continuous).
        (chapters/behavior-learning/01_theory.md)"""
        if self.task == "discrete" and y.ndim == 1:
            y = F.one_hot(y.long(), self.y_dim).to(x.dtype)
        elif y.ndim == 1:
            y = y.unsqueeze(1)
        return self.head(self.backbone(torch.cat([x, y.to(x.dtype)], dim=1)))

    def logits(self, x):
        """U(x, e_k) for every class k, shape (B, K): the Gibbs model's logits, at a cost of K forward passes.
        (chapters/behavior-learning/01_theory.md)"""
        if self.task != "discrete":
            raise ValueError("task: logits need task='discrete'")
        b, k = x.shape[0], self.y_dim
        eye = torch.eye(k, dtype=x.dtype, device=x.device)
        return self.forward(x.repeat_interleave(k, 0), eye.repeat(b, 1)).view(b, k)


def ce_loss(logits, y, tau: float = 1.0):
    """Cross-entropy of the Gibbs model p(y|x) ∝ exp(U/tau) over enumerated labels.
    (chapters/behavior-learning/01_theory.md)"""
    return F.cross_entropy(logits / check_positive("tau", tau), y.long())


def dsm_loss(model, x, y, sigma: float = 1.0, tau: float = 1.0, n_noise: int = 1):
    """Denoising score matching on y: 1/2 E || grad_y~ U(x, y~)/tau + (y~ - y)/sigma^2 ||^2, y~ = y + sigma eps.

    Noise comes from torch's global generator (``torch.randn_like``), one draw per repetition, as in blnetwork.
    The repetitions' terms are summed and divided by ``n_noise``; with one repetition (the default) the term is
    returned as it is, which is the same number (each term is >= 0, so 0 + term and term / 1 are exact) with two
    fewer operations to differentiate twice.
    (chapters/behavior-learning/01_theory.md)"""
    sigma, tau, n_noise = check_positive("sigma", sigma), check_positive("tau", tau), check_int("n_noise", n_noise)
    total = None
    for _ in range(n_noise):
        y_t = (y + torch.randn_like(y) * sigma).detach().requires_grad_(True)
        grad = torch.autograd.grad(model(x, y_t).sum(), y_t, create_graph=True)[0]
        r = grad / tau + (y_t - y) / sigma ** 2
        term = 0.5 * (r.pow(2).mean() if r.ndim == 1 else r.pow(2).sum(1).mean())
        total = term if total is None else total + term
    return total if n_noise == 1 else total / n_noise


def load_blnetwork_state(model: BLModel, state_dict) -> BLModel:
    """Load a blnetwork ``BLDeep`` state dict into ours (the names are the same); returns the model.
    (chapters/behavior-learning/01_theory.md)"""
    missing = set(model.state_dict()) ^ set(state_dict)
    if missing:
        raise ValueError(f"state_dict: names differ from ours: {sorted(missing)[:4]}")
    model.load_state_dict(state_dict)
    return model
