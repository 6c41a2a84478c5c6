"""The dynamic multilayer random dot product graph (D-MRDPG) and the paper's simulation scenarios.

Explained in chapters/multilayer-changepoints/01_theory.md (the model) and 02_localisation.md (the scenarios).

Notation: T time points, n nodes, L layers. At time t, layer l has edge probabilities
P_l(t) = X W_l(t) Y^T (directed; Y = X for undirected networks), and A(t) in {0,1}^{n x n x L} has independent
Bernoulli entries (the upper triangle only, mirrored, when undirected). Change points eta_1 < ... < eta_K are
the times after which the weights W_l change: A(1..eta_1) share one P, A(eta_1+1..eta_2) the next, and so on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import check_choice, check_int, check_non_negative
from ._checks import check_points

__all__ = ["Sequence", "sample_network", "piecewise_sequence", "ddm_probabilities", "msbm_probabilities",
           "scenario", "SCENARIOS", "weak_jump", "jump_sizes"]

SCENARIOS = ("null", "s1", "s2", "s3", "s3-paper", "s4")


@dataclass(frozen=True)
class Sequence:
    """A simulated sequence: adjacency tensor A (T, n, n, L), segment probabilities P (K+1, n, n, L),
    true change points, and whether the networks are directed.

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """

    A: np.ndarray
    P: np.ndarray
    change_points: np.ndarray
    directed: bool

    @property
    def T(self) -> int:
        return self.A.shape[0]

    @property
    def kappa(self) -> np.ndarray:
        """Jump sizes kappa_k = ||P(eta_k + 1) - P(eta_k)||_F."""
        return jump_sizes(self.P)


def jump_sizes(P) -> np.ndarray:
    """kappa_k = ||P_{k+1} - P_k||_F for segment probabilities P of shape (K+1, n, n, L).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 4:
        raise ValueError(f"P must have shape (K+1, n, n, L), got {P.shape}")
    return np.sqrt(((P[1:] - P[:-1]) ** 2).sum(axis=(1, 2, 3)))


def sample_network(P, size, rng, directed=True) -> np.ndarray:
    """Draw `size` independent networks with edge probabilities P (n, n, L); returns (size, n, n, L) 0/1 floats.

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[1]:
        raise ValueError(f"P must have shape (n, n, L), got {P.shape}")
    if np.any(P < 0) or np.any(P > 1):
        raise ValueError("P must hold probabilities in [0, 1]")
    size = check_int("size", size, 1)
    A = (rng.random((size,) + P.shape) < P).astype(float)
    if not directed:
        if not np.allclose(P, P.transpose(1, 0, 2)):
            raise ValueError("P must be symmetric for an undirected network")
        up = np.triu(np.ones(P.shape[:2], dtype=bool))[None, :, :, None]
        A = np.where(up, A, A.transpose(0, 2, 1, 3))
    return A


def piecewise_sequence(P, change_points, T, rng, directed=True) -> Sequence:
    """Sample a sequence of length T whose segment k (between consecutive change points) has probabilities P[k].

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    P = np.asarray(P, dtype=float)
    T = check_int("T", T, 2)
    cps = check_points("change_points", change_points, T)
    if P.ndim != 4 or P.shape[0] != cps.size + 1:
        raise ValueError(f"P must have shape (K+1, n, n, L) with K={cps.size}, got {P.shape}")
    bounds = np.concatenate([[0], cps, [T]])
    A = np.concatenate([sample_network(P[k], bounds[k + 1] - bounds[k], rng, directed)
                        for k in range(cps.size + 1)])
    return Sequence(A=A, P=P, change_points=cps, directed=directed)


def ddm_probabilities(X, Y, W) -> np.ndarray:
    """P_l = X W_l Y^T for latent positions X, Y (n, d) and weights W (L, d, d); returns (n, n, L).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    X, Y, W = (np.asarray(v, dtype=float) for v in (X, Y, W))
    if X.ndim != 2 or Y.shape != X.shape:
        raise ValueError(f"X and Y must both have shape (n, d), got {X.shape} and {Y.shape}")
    if W.ndim != 3 or W.shape[1:] != (X.shape[1], X.shape[1]):
        raise ValueError(f"W must have shape (L, d, d) with d={X.shape[1]}, got {W.shape}")
    return np.einsum("id,ldk,jk->ijl", X, W, Y)


def _ddm_weights(rho, L, d, rng, reverse=False):
    """W_l entries ~ U((rho L + l - 1)/(4L), (rho L + l)/(4L)), l = 1..L; `reverse` swaps the layers' ranges."""
    ls = np.arange(1, L + 1)[::-1] if reverse else np.arange(1, L + 1)
    lo = (rho * L + ls - 1) / (4 * L)
    return lo[:, None, None] + rng.random((L, d, d)) / (4 * L)


def msbm_probabilities(labels, p_in, p_out) -> np.ndarray:
    """Multilayer stochastic block model: P_ijl = p_in[l] if labels[l][i] == labels[l][j] else p_out[l].

    Explained in chapters/multilayer-changepoints/02_localisation.md. `labels` is (L, n) or (n,) (shared).
    """
    p_in, p_out = np.atleast_1d(p_in).astype(float), np.atleast_1d(p_out).astype(float)
    lab = np.asarray(labels)
    if lab.ndim == 1:
        lab = np.broadcast_to(lab, (p_in.size, lab.size))
    if lab.shape[0] != p_in.size or p_out.size != p_in.size:
        raise ValueError("labels, p_in and p_out must agree on the number of layers L")
    same = lab[:, :, None] == lab[:, None, :]                     # (L, n, n)
    P = np.where(same, p_in[:, None, None], p_out[:, None, None])
    return np.clip(P.transpose(1, 2, 0), 0.0, 1.0)


def _blocks(n, sizes):
    """Community labels for n nodes split by the fractions `sizes`."""
    edges = np.round(np.cumsum(sizes) / np.sum(sizes) * n).astype(int)
    return np.searchsorted(edges, np.arange(n), side="right")


def _positions(n, d, rng, directed):
    """Latent positions X, Y (n, d) on the simplex, Dirichlet(1); Y = X for undirected networks."""
    X = rng.dirichlet(np.ones(d), size=n)
    return X, (X if not directed else rng.dirichlet(np.ones(d), size=n))


def _symmetric(W, directed):
    """W unchanged for directed networks, else (W + W^T) / 2 layer by layer."""
    return W if directed else (W + W.transpose(0, 2, 1)) / 2


def _ddm_pair(n, L, rng, directed, d=5):
    """The two DDM probability tensors of scenarios null and S1: weights from rho = 2, then rho = 3 reversed."""
    X, Y = _positions(n, d, rng, directed)
    W1, W2 = _ddm_weights(2, L, d, rng), _ddm_weights(3, L, d, rng, reverse=True)
    return ddm_probabilities(X, Y, _symmetric(W1, directed)), ddm_probabilities(X, Y, _symmetric(W2, directed))


def _msbm_rates(L, rng):
    """Within- and between-community edge probabilities per layer of the MSBM scenarios S2-S4."""
    ls = np.arange(1, L + 1)
    return (3 * L + ls - 1 + rng.random(L)) / (4 * L), (2 * L + ls - 1 + rng.random(L)) / (4 * L)


def _null(n, L, rng, directed):
    """No change: one DDM segment (the second weights are drawn too, so the generator matches S1's)."""
    P1, _ = _ddm_pair(n, L, rng, directed)
    return P1[None], []


def _s1(n, L, rng, directed):
    """S1: DDM weights switch at 70 and back at 140."""
    P1, P2 = _ddm_pair(n, L, rng, directed)
    return np.stack([P1, P2, P1]), [70, 140]


def _s2(n, L, rng, directed):
    """S2: the number of communities goes 4, 2, 4, 4 (layers' rates reversed), 3, 4."""
    p_in, p_out = _msbm_rates(L, rng)
    ks, rev = [4, 2, 4, 4, 3, 4], [False, False, False, True, False, False]
    Ps = [msbm_probabilities(_blocks(n, np.ones(k)), p_in[::-1] if r else p_in, p_out[::-1] if r else p_out)
          for k, r in zip(ks, rev)]
    return np.stack(Ps), [20, 60, 80, 160, 180]


def _s3(n, L, rng, directed):
    """S3: only layer 1's community sizes change (equal thirds, then one community twice as large)."""
    p_in, p_out = _msbm_rates(L, rng)
    Ps = []
    for sizes in [[1, 1, 1], [2, 1, 1], [1, 1, 1], [2, 1, 1]]:
        lab = np.tile(_blocks(n, [1, 1, 1]), (L, 1))
        lab[0] = _blocks(n, sizes)
        Ps.append(msbm_probabilities(lab, p_in, p_out))
    return np.stack(Ps), [50, 100, 150]


def _s3_paper(n, L, rng, directed):
    """S3 as the authors' generator builds it: layer 1's community sizes go (3, 4, 3), (4, 3, 3), (5, 3, 2) and back
    to (3, 4, 3) tenths of n, so each change moves only a tenth of the nodes; layers 2..L keep four equal communities.

    The rates are drawn once (the paper's "only the first layer's community sizes change"); the authors' code draws
    every layer's rates afresh for the third segment, which makes its middle change easier.
    """
    p_in, p_out = _msbm_rates(L, rng)
    Ps = []
    for sizes in [[3, 4, 3], [4, 3, 3], [5, 3, 2], [3, 4, 3]]:
        lab = np.tile(_blocks(n, [1, 1, 1, 1]), (L, 1))
        lab[0] = _blocks(n, sizes)
        Ps.append(msbm_probabilities(lab, p_in, p_out))
    return np.stack(Ps), [50, 100, 150]


def _s4(n, L, rng, directed):
    """S4: three equal communities whose sparsity shifts by 0.1 * delta_t."""
    p_in, p_out = _msbm_rates(L, rng)
    lab = _blocks(n, [1, 1, 1])
    Ps = [msbm_probabilities(lab, p_in - 0.1 * dl, p_out - 0.1 * dl) for dl in [0, 1, 2, 1, 0, 1]]
    return np.stack(Ps), [20, 60, 80, 160, 180]


#: Each scenario's builder: (n, L, rng, directed) -> (segment probabilities (K+1, n, n, L), change points for T=200).
_BUILDERS = {"null": _null, "s1": _s1, "s2": _s2, "s3": _s3, "s3-paper": _s3_paper, "s4": _s4}


def scenario(name, n=50, T=200, L=4, rng=None, directed=True) -> Sequence:
    """One sequence of the paper's scenarios: "null", "s1" (DDM), "s2", "s3", "s3-paper", "s4" (MSBM).

    Explained in chapters/multilayer-changepoints/02_localisation.md, which says where our choices differ
    from the paper's (community sizes in S2 and "s3" are our reconstruction; "s3-paper" takes S3's sizes from the
    authors' generator). The paper's change points are for
    T = 200; other lengths scale them.
    """
    check_choice("name", name, SCENARIOS)
    n, T, L = check_int("n", n, 4), check_int("T", T, 20), check_int("L", L, 1)
    rng = np.random.default_rng(rng)
    P, points = _BUILDERS[name](n, L, rng, directed)
    return piecewise_sequence(P, [int(round(v * T / 200)) for v in points], T, rng, directed)


def weak_jump(kappa, n=50, T=200, L=4, rng=None, directed=True, d=5, at=None) -> Sequence:
    """A DDM sequence with one change point at `at` (default T // 2) and jump size exactly `kappa`: W_2 = W_1 + delta, where
    delta = kappa / (n sqrt(L)) (the rows of X lie on the simplex, so P shifts by delta everywhere).

    Explained in chapters/multilayer-changepoints/03_inference.md.
    """
    check_non_negative("kappa", kappa)
    n, T, L = check_int("n", n, 2), check_int("T", T, 4), check_int("L", L, 1)
    rng = np.random.default_rng(rng)
    delta = kappa / (n * np.sqrt(L))
    if delta > 0.25:
        raise ValueError(f"kappa={kappa} is too large for n={n}, L={L} (the probabilities would leave [0, 1])")
    X, Y = _positions(n, d, rng, directed)
    P1 = ddm_probabilities(X, Y, _symmetric(_ddm_weights(2, L, d, rng), directed))
    at = T // 2 if at is None else check_int("at", at, 1)
    return piecewise_sequence(np.stack([P1, P1 + delta]), [at], T, rng, directed)
