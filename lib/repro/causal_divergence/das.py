"""Distributed alignment search (DAS): interchange interventions in a learned basis.

Explained in chapters/causal-divergence/02_experiments.md. With a learned invertible map R and a mask M that selects
the first k coordinates of the rotated space (the causal subspace),

    h_hat = R^{-1} [ (I - M) R h_trg + M R h_src ].

`kind="orthogonal"` keeps R orthogonal (DAS proper; torch's orthogonal parametrization), `kind="linear"` allows any
invertible R (initialised orthogonal, inverted with a linear solve), as the paper's toy code does. With
`learned_subspace=True` the hard mask becomes a soft one, m_i = sigmoid((b - i) / tau), whose boundary b is learned
(the "boundless" variant).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.parametrizations import orthogonal

from ..common import check_choice, check_int, check_positive

ROTATION_KINDS = ("orthogonal", "linear")


class Rotation(nn.Module):
    """An invertible d x d map z = R h (rows of h are states), orthogonal or general linear.

    Explained in chapters/causal-divergence/02_experiments.md.
    """

    def __init__(self, dim: int, kind: str = "orthogonal", generator: torch.Generator | None = None):
        super().__init__()
        check_choice("kind", kind, ROTATION_KINDS)
        check_int("dim", dim)
        self.dim, self.kind = int(dim), kind
        q, _ = torch.linalg.qr(torch.randn(dim, dim, generator=generator))
        lin = nn.Linear(dim, dim, bias=False)
        with torch.no_grad():
            lin.weight.copy_(q)
        if kind == "orthogonal":
            lin = orthogonal(lin)
            with torch.no_grad():
                lin.weight = q                  # start at the same random rotation as the linear kind
        self.lin = lin

    @property
    def matrix(self) -> torch.Tensor:
        return self.lin.weight

    def forward(self, h):
        return h @ self.matrix.T

    def inverse(self, z):
        R = self.matrix
        if self.kind == "orthogonal":
            return z @ R
        return torch.linalg.solve(R, z.T).T


class DAS(nn.Module):
    """An interchange intervention on a k-dimensional subspace of a learned basis (see the module docstring).

    `dim`: width d of the hidden state; `k`: dimension of the causal subspace (1 <= k <= d); `kind`: one of
    ROTATION_KINDS. Explained in chapters/causal-divergence/02_experiments.md.
    """

    def __init__(self, dim: int, k: int = 1, kind: str = "orthogonal", learned_subspace: bool = False,
                 temperature: float = 0.5, seed: int | None = None):
        super().__init__()
        if not 1 <= int(k) <= int(dim):
            raise ValueError(f"k={k} must be between 1 and the layer width dim={dim}")
        check_positive("temperature", temperature)
        g = torch.Generator().manual_seed(seed) if seed is not None else None
        self.rotation = Rotation(dim, kind, generator=g)
        self.dim, self.k, self.temperature = int(dim), int(k), float(temperature)
        self.learned_subspace = bool(learned_subspace)
        self.boundary = nn.Parameter(torch.tensor(float(k))) if learned_subspace else None

    def mask(self) -> torch.Tensor:
        """The (soft) 0/1 mask over rotated coordinates, length d."""
        i = torch.arange(self.dim, dtype=self.rotation.matrix.dtype)
        if self.learned_subspace:
            return torch.sigmoid((self.boundary - 0.5 - i) / self.temperature)
        return (i < self.k).to(i.dtype)

    def forward(self, h_trg, h_src):
        if h_trg.shape != h_src.shape:
            raise ValueError(f"h_trg and h_src must have the same shape; got {tuple(h_trg.shape)} and {tuple(h_src.shape)}")
        if h_trg.shape[-1] != self.dim:
            raise ValueError(f"h_trg has width {h_trg.shape[-1]}, but this DAS was built for dim={self.dim}")
        m = self.mask()
        z = (1 - m) * self.rotation(h_trg) + m * self.rotation(h_src)
        return self.rotation.inverse(z)

    def causal_coordinates(self, h):
        """The coordinates of h in the causal subspace, M R h (the first k rotated coordinates)."""
        return self.rotation(h)[..., : self.k]
