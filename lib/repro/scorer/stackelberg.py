"""SCORER: Stackelberg coupling of representation learning (encoder, follower) and Q-learning (Q-head, leader).

Explained in chapters/scorer/ (01_theory.md derives the losses, 02_experiments.md runs them): a small reproduction
of Martinez, Li, Lu and Chen, "Stackelberg coupling of online representation learning and reinforcement learning"
(ICLR 2026, arXiv 2508.07452), following the released code (DQN_SCORER.py) where it differs from the abstract.

With Bellman errors delta_i = y_i - Q_theta(f_phi(s_i))_{a_i} on a batch of B transitions (stop-gradient target y):

- the **leader**, the Q-head theta, takes an Adam step on the MSBE (1/B) sum_i delta_i^2 with the encoder's output
  under stop-gradient (:func:`leader_loss`);
- the **follower**, the encoder phi, then takes an Adam step on a fresh batch, with the updated theta frozen, on the
  batch *variance* of the Bellman errors (1/B) sum_i (delta_i - mean delta)^2 (:func:`follower_loss`); the ablation
  (the code's ``--use_be_variance`` off) gives the follower the MSBE instead;
- the asymmetry of the two players is in their learning rates (leader slower), not in how often they update.

The module also holds the chapter's diagnostics: relative parameter change per 1k updates, encoder drift on fixed
probe states, and the MSBE = variance + squared mean identity.
"""
from __future__ import annotations

import numpy as np
import torch

from repro.common import check_choice, check_int, check_positive
from .dqn import BatchedAdam, QNetwork, td_errors

__all__ = ["KINDS", "msbe", "bellman_variance", "leader_loss", "follower_loss", "ScorerUpdate",
           "relative_change", "encoder_drift", "msbe_decomposition"]

KINDS = ("dqn", "scorer", "scorer-msbe")
FOLLOWER_LOSSES = ("variance", "msbe")


def msbe(delta: torch.Tensor) -> torch.Tensor:
    """Mean squared Bellman error over the last (batch) dimension: (1/B) sum_i delta_i^2.

    Explained in chapters/scorer/01_theory.md.
    """
    return delta.pow(2).mean(-1)


def bellman_variance(delta: torch.Tensor) -> torch.Tensor:
    """Batch variance of the Bellman errors, (1/B) sum_i (delta_i - mean delta)^2 (the follower's loss).

    Explained in chapters/scorer/01_theory.md.
    """
    return (delta - delta.mean(-1, keepdim=True)).pow(2).mean(-1)


def msbe_decomposition(delta) -> tuple[float, float, float]:
    """(MSBE, variance, squared mean) of a 1-D array of Bellman errors: MSBE = variance + mean^2 exactly.

    Explained in chapters/scorer/01_theory.md.
    """
    d = np.asarray(delta, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"delta must be a non-empty 1-D array, got shape {d.shape}")
    return float(np.mean(d ** 2)), float(np.var(d)), float(np.mean(d) ** 2)


def leader_loss(net: QNetwork, target, batch, gamma: float) -> torch.Tensor:
    """The leader's loss per group (G,): the MSBE with the encoder's output under stop-gradient.

    Explained in chapters/scorer/01_theory.md.
    """
    return msbe(td_errors(net, target, batch, gamma, detach_encoder=True))


def follower_loss(net: QNetwork, target, batch, gamma: float, kind: str = "variance") -> torch.Tensor:
    """The follower's loss per group (G,): the batch variance of delta (``kind="variance"``) or the MSBE (ablation).

    The Q-head stays frozen because :class:`ScorerUpdate` differentiates this loss with respect to the encoder only.
    Explained in chapters/scorer/01_theory.md.
    """
    check_choice("kind", kind, FOLLOWER_LOSSES)
    delta = td_errors(net, target, batch, gamma)
    return bellman_variance(delta) if kind == "variance" else msbe(delta)


class ScorerUpdate:
    """One update of every group: DQN, SCORER (follower on the variance) or SCORER-MSBE (ablation), batched.

    Explained in chapters/scorer/02_experiments.md. ``kinds[g]`` is the rule of group g. Per update, as in the
    released code:

    1. leader step on batch 1: every group's Q-head takes an Adam step on the MSBE. DQN groups also step their
       encoder on the same gradient (a plain DQN update); SCORER groups see the encoder under stop-gradient and their
       encoder is frozen (its parameters and Adam state are untouched);
    2. follower step on batch 2, with the updated Q-head: SCORER groups step their encoder on the variance (or MSBE)
       of the Bellman errors; nothing else moves.

    Learning rates: ``lr_leader`` (Q-head) and ``lr_follower`` (encoder) for SCORER groups, ``lr_dqn`` for both of a
    DQN group, unless ``lr_dqn_encoder`` gives its encoder a rate of its own (a DQN at SCORER's two rates).
    ``leader_every=k`` lets SCORER's leader step only every k-th update (the abstract's "updates less frequently",
    which the released code does not do; 1 reproduces the code).
    """

    batches_per_update = 2

    def __init__(self, kinds, lr_leader: float = 5e-4, lr_follower: float = 1.5e-3, lr_dqn: float = 1e-3,
                 max_grad_norm=None, leader_every: int = 1, lr_dqn_encoder: float | None = None):
        kinds = list(kinds)
        bad = [k for k in kinds if k not in KINDS]
        if not kinds or bad:
            raise ValueError(f"kinds must be a non-empty list of {KINDS}, got {kinds!r}")
        lr_dqn_encoder = lr_dqn if lr_dqn_encoder is None else lr_dqn_encoder
        for name, v in (("lr_leader", lr_leader), ("lr_follower", lr_follower), ("lr_dqn", lr_dqn),
                        ("lr_dqn_encoder", lr_dqn_encoder)):
            check_positive(name, v)
        check_int("leader_every", leader_every)
        self.kinds, self.leader_every, self.max_grad_norm = kinds, int(leader_every), max_grad_norm
        self.is_dqn = torch.tensor([k == "dqn" for k in kinds])
        self.is_follower = ~self.is_dqn
        self.is_var = torch.tensor([k == "scorer" for k in kinds])
        self.lr_head = torch.tensor([lr_dqn if k == "dqn" else lr_leader for k in kinds])
        self.lr_enc = torch.tensor([lr_dqn_encoder if k == "dqn" else lr_follower for k in kinds])
        self.n_updates = 0

    def bind(self, net: QNetwork) -> None:
        """Create the two optimizers (encoder, Q-head) for ``net``'s groups."""
        if net.G != len(self.kinds):
            raise ValueError(f"net has {net.G} groups but kinds names {len(self.kinds)}")
        self.opt_enc = BatchedAdam(net.enc, self.lr_enc, max_grad_norm=self.max_grad_norm)
        self.opt_head = BatchedAdam(net.head, self.lr_head, max_grad_norm=self.max_grad_norm)

    def leader_step(self, net, target, batch, gamma, lr_scale=1.0) -> torch.Tensor:
        """Step 1 (see the class docstring); returns the batch's Bellman errors (G, B) before the step."""
        delta = td_errors(net, target, batch, gamma, detach_encoder=self.is_follower)
        g_enc, g_head = torch.autograd.grad(msbe(delta).sum(), [net.enc, net.head])
        lead = self.is_dqn | (self.n_updates % self.leader_every == 0)
        self.opt_head.step(g_head, mask=lead, lr_scale=lr_scale)
        self.opt_enc.step(g_enc, mask=self.is_dqn, lr_scale=lr_scale)
        return delta.detach()

    def follower_step(self, net, target, batch, gamma, lr_scale=1.0) -> None:
        """Step 2: SCORER groups' encoders descend the variance (or, for the ablation, the MSBE) of delta."""
        idx = torch.nonzero(self.is_follower).flatten()            # DQN groups have no follower step
        delta = td_errors(net, target, batch, gamma, groups=idx)
        loss = torch.where(self.is_var[idx], bellman_variance(delta), msbe(delta))
        (g_enc,) = torch.autograd.grad(loss.sum(), [net.enc])
        self.opt_enc.step(g_enc, mask=self.is_follower, lr_scale=lr_scale)

    def __call__(self, net, target, batches, gamma, lr_scale=1.0) -> dict:
        delta = self.leader_step(net, target, batches[0], gamma, lr_scale)
        if bool(self.is_follower.any()):
            self.follower_step(net, target, batches[1], gamma, lr_scale)
        self.n_updates += 1
        return {"delta_mean": delta.mean(1), "delta_var": delta.var(1, unbiased=False)}


def relative_change(snapshots, lag: int) -> np.ndarray:
    """||p_k - p_{k-lag}|| / ||p_{k-lag}|| per group, for snapshots (list of (G, P) arrays); shape (K - lag, G).

    Explained in chapters/scorer/02_experiments.md: with snapshots every 250 updates, ``lag=4`` is the relative
    change per 1k updates.
    """
    S = np.asarray(snapshots, dtype=float)
    if S.ndim != 3:
        raise ValueError(f"snapshots must be a list of (G, P) arrays, got shape {S.shape}")
    if not isinstance(lag, (int, np.integer)) or not 1 <= lag < len(S):
        raise ValueError(f"lag must be an integer in [1, {len(S) - 1}], got {lag!r}")
    return np.linalg.norm(S[lag:] - S[:-lag], axis=2) / np.linalg.norm(S[:-lag], axis=2)


def encoder_drift(probe_encodings, lag: int) -> np.ndarray:
    """Mean over probe states of ||f_k(s) - f_{k-lag}(s)||, relative to the mean ||f_{k-lag}(s)||; shape (K-lag, G).

    Explained in chapters/scorer/02_experiments.md. ``probe_encodings`` is a list of (G, n_probe, latent) arrays.
    """
    Z = np.asarray(probe_encodings, dtype=float)
    if Z.ndim != 4:
        raise ValueError(f"probe_encodings must be a list of (G, n, latent) arrays, got shape {Z.shape}")
    if not isinstance(lag, (int, np.integer)) or not 1 <= lag < len(Z):
        raise ValueError(f"lag must be an integer in [1, {len(Z) - 1}], got {lag!r}")
    diff = np.linalg.norm(Z[lag:] - Z[:-lag], axis=3).mean(2)
    return diff / np.linalg.norm(Z[:-lag], axis=3).mean(2)
