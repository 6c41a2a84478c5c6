"""Hard Concrete gates (Louizos, Welling and Kingma, 2018): a differentiable stand-in for a 0/1 mask.

Explained in chapters/flexhinm/01_theory.md. A gate with location ``log_alpha`` draws ``u ~ U(0, 1)``,
``s = sigmoid((log u - log(1 - u) + log_alpha) / beta)``, stretches it to ``(gamma, zeta)`` and clips it to [0, 1].
The gate is exactly 0 or exactly 1 with positive probability, and its expected L0 norm has a closed form.
"""
from __future__ import annotations

import math

import torch

__all__ = ["BETA", "GAMMA", "ZETA", "hard_concrete_sample", "expected_l0", "deterministic_gate"]

BETA, GAMMA, ZETA = 2.0 / 3.0, -0.1, 1.1


def _check(log_alpha):
    if not torch.is_tensor(log_alpha):
        raise ValueError("log_alpha must be a torch tensor")
    if not torch.isfinite(log_alpha).all():
        raise ValueError("log_alpha must be finite")


def hard_concrete_sample(log_alpha, generator=None):
    """One draw of the gates ``z`` in [0, 1], differentiable in ``log_alpha``.

    Explained in chapters/flexhinm/01_theory.md.
    """
    _check(log_alpha)
    u = torch.rand(log_alpha.shape, generator=generator, dtype=log_alpha.dtype).clamp(1e-6, 1 - 1e-6)
    s = torch.sigmoid((torch.log(u) - torch.log1p(-u) + log_alpha) / BETA)
    return (s * (ZETA - GAMMA) + GAMMA).clamp(0.0, 1.0)


def expected_l0(log_alpha):
    """The closed form ``P(z > 0) = sigmoid(log_alpha - beta log(-gamma / zeta))`` for every gate.

    Explained in chapters/flexhinm/01_theory.md. Its sum is the expected number of open gates.
    """
    _check(log_alpha)
    return torch.sigmoid(log_alpha - BETA * math.log(-GAMMA / ZETA))


def deterministic_gate(log_alpha):
    """The test-time gate ``clip(sigmoid(log_alpha) (zeta - gamma) + gamma, 0, 1)``.

    Explained in chapters/flexhinm/01_theory.md.
    """
    _check(log_alpha)
    return (torch.sigmoid(log_alpha) * (ZETA - GAMMA) + GAMMA).clamp(0.0, 1.0)
