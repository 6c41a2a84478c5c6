"""A small PPO (Schulman et al., 2017) for discrete, possibly factorised, actions: advantages, the clipped loss and
the minibatch update.

Explained in chapters/timeseg/01_theory.md, where TimeSeg's start/end policy is trained with it. The module knows
nothing about the environment or the networks: the caller collects transitions, and hands ``ppo_update`` a function
``evaluate(idx) -> (log_prob, entropy, value)`` that re-scores the stored actions of the transitions ``idx`` under the
current parameters. A factorised action ``a = (a_1, a_2)`` with ``π(a) = π(a_1) π(a_2 | a_1)`` enters only through
its joint log-probability ``log π(a_1) + log π(a_2 | a_1)`` and its entropy, so the same code serves a single
categorical and TimeSeg's (start, end) pair; ``masked_categorical`` gives both for logits with forbidden entries.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from ..common.checks import check_between, check_int, check_non_negative, check_positive

__all__ = ["PPOConfig", "td_advantages", "ppo_losses", "ppo_update", "masked_categorical"]

#: The logit given to forbidden actions (the official TimeSeg code uses -1e10 for end positions before the start).
FORBIDDEN = -1e10


@dataclass(frozen=True)
class PPOConfig:
    """PPO's settings; the defaults are those of TimeSeg's code (clip 0.2, entropy 0.01, smooth-L1 critic, γ 0.99,
    4 epochs of minibatches of 256, gradient norm clipped at 1), with ``gae_lambda = 0`` for its one-step TD
    advantage ``r + γ V(s')(1 − done) − V(s)``.

    Explained in chapters/timeseg/01_theory.md.
    """

    clip: float = 0.2
    entropy_coef: float = 0.01
    value_coef: float = 1.0
    gamma: float = 0.99
    gae_lambda: float = 0.0
    epochs: int = 4
    minibatch: int = 256
    max_grad_norm: float = 1.0
    normalize_advantage: bool = False

    def __post_init__(self):
        check_between("clip", self.clip, 0.0, 1.0)
        check_non_negative("entropy_coef", self.entropy_coef)
        check_non_negative("value_coef", self.value_coef)
        check_between("gamma", self.gamma, 0.0, 1.0, closed="both")
        check_between("gae_lambda", self.gae_lambda, 0.0, 1.0, closed="both")
        check_int("epochs", self.epochs)
        check_int("minibatch", self.minibatch)
        check_positive("max_grad_norm", self.max_grad_norm)

    def to_dict(self) -> dict:
        """The settings as a plain dict (for provenance records). Explained in chapters/timeseg/01_theory.md."""
        return asdict(self)


def td_advantages(rewards, values, next_values, dones, *, gamma: float = 0.99, gae_lambda: float = 0.0,
                  alive=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(advantages, value targets)`` of transitions laid out ``(steps, n)``: step ``k`` of episode ``i`` at
    ``[k, i]``, ``alive[k, i]`` False where that episode had already ended (those entries come back as 0).

    Explained in chapters/timeseg/01_theory.md. With ``δ_k = r_k + γ V(s_{k+1})(1 − done_k) − V(s_k)``, the advantage
    is GAE, ``A_k = δ_k + γλ(1 − done_k) A_{k+1}``; ``gae_lambda = 0`` is the one-step TD error that TimeSeg's code
    computes by hand, ``1`` the Monte-Carlo return minus the value. The target is ``A_k + V(s_k)``.
    """
    r, v, nv = (torch.as_tensor(t, dtype=torch.float32) for t in (rewards, values, next_values))
    d = torch.as_tensor(dones, dtype=torch.bool)
    if not (r.shape == v.shape == nv.shape == d.shape) or r.ndim != 2:
        raise ValueError(f"rewards, values, next_values and dones must share one (steps, n) shape; got "
                         f"{tuple(r.shape)}, {tuple(v.shape)}, {tuple(nv.shape)}, {tuple(d.shape)}")
    a = torch.ones_like(d) if alive is None else torch.as_tensor(alive, dtype=torch.bool)
    if a.shape != d.shape:
        raise ValueError(f"alive must have the (steps, n) shape {tuple(d.shape)}; got {tuple(a.shape)}")
    check_between("gamma", gamma, 0.0, 1.0, closed="both")
    check_between("gae_lambda", gae_lambda, 0.0, 1.0, closed="both")
    cont = (~d).float()
    delta = torch.where(a, r + gamma * nv * cont - v, torch.zeros_like(r))
    adv = torch.zeros_like(r)
    running = torch.zeros_like(r[0])
    for k in range(r.shape[0] - 1, -1, -1):
        running = delta[k] + gamma * gae_lambda * cont[k] * running
        running = torch.where(a[k], running, torch.zeros_like(running))
        adv[k] = running
    return adv, torch.where(a, adv + v, torch.zeros_like(v))


def ppo_losses(log_prob, old_log_prob, advantages, entropy, values, targets, cfg: PPOConfig) -> dict:
    """PPO's losses on a minibatch: the clipped surrogate ``−E[min(ρA, clip(ρ, 1±ε)A)]`` with
    ``ρ = exp(log π − log π_old)``, the smooth-L1 critic loss, ``−entropy_coef · E[H]``, their weighted sum
    ``total``, and the diagnostics ``clip_fraction`` and ``approx_kl``.

    Explained in chapters/timeseg/01_theory.md.
    """
    ratio = torch.exp(log_prob - old_log_prob)
    adv = advantages
    if cfg.normalize_advantage and adv.numel() > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * adv)
    policy = -surrogate.mean()
    value = F.smooth_l1_loss(values, targets)
    ent = -cfg.entropy_coef * entropy.mean()
    with torch.no_grad():
        clip_fraction = ((ratio - 1).abs() > cfg.clip).float().mean()
        approx_kl = (old_log_prob - log_prob).mean()
    return {"policy": policy, "value": value, "entropy": ent, "total": policy + cfg.value_coef * value + ent,
            "clip_fraction": clip_fraction, "approx_kl": approx_kl}


def ppo_update(evaluate, optimizer, parameters, batch: dict, cfg: PPOConfig, generator=None) -> dict:
    """``cfg.epochs`` passes of shuffled minibatches over the transitions in ``batch`` (tensors ``old_log_prob``,
    ``advantages``, ``targets``, one entry per transition); returns the mean of each loss term over the steps.

    Explained in chapters/timeseg/01_theory.md. ``evaluate(idx)`` must return ``(log_prob, entropy, value)`` of the
    transitions ``idx`` under the current parameters; gradients of ``parameters`` are clipped to
    ``cfg.max_grad_norm`` before each optimizer step.
    """
    for key in ("old_log_prob", "advantages", "targets"):
        if key not in batch:
            raise ValueError(f"batch must hold {key!r}; it has {sorted(batch)}")
    n = batch["old_log_prob"].shape[0]
    if n == 0:
        raise ValueError("batch must hold at least one transition")
    parameters = list(parameters)
    sums: dict[str, float] = {}
    steps = 0
    for _ in range(cfg.epochs):
        order = torch.randperm(n, generator=generator)
        for s in range(0, n, cfg.minibatch):
            idx = order[s:s + cfg.minibatch]
            log_prob, entropy, value = evaluate(idx)
            losses = ppo_losses(log_prob, batch["old_log_prob"][idx], batch["advantages"][idx], entropy, value,
                                batch["targets"][idx], cfg)
            optimizer.zero_grad()
            losses["total"].backward()
            torch.nn.utils.clip_grad_norm_(parameters, cfg.max_grad_norm)
            optimizer.step()
            for k, v in losses.items():
                sums[k] = sums.get(k, 0.0) + float(v.detach())
            steps += 1
    return {k: v / steps for k, v in sums.items()}


def masked_categorical(logits: torch.Tensor, allowed: torch.Tensor, actions=None):
    """``(actions, log_prob, entropy)`` of a categorical over the last dimension with the entries where ``allowed``
    is False forbidden (their logit set to ``FORBIDDEN``); samples ``actions`` when none are given.

    Explained in chapters/timeseg/01_theory.md. Every row must allow at least one entry. ``actions="argmax"`` takes
    the most likely allowed entry (TimeSeg's deterministic test-time action).
    """
    allowed = torch.as_tensor(allowed, dtype=torch.bool)
    if allowed.shape != logits.shape:
        raise ValueError(f"allowed must have the logits' shape {tuple(logits.shape)}; got {tuple(allowed.shape)}")
    if not bool(allowed.any(-1).all()):
        raise ValueError("allowed must allow at least one action in every row")
    masked = torch.where(allowed, logits, torch.full_like(logits, FORBIDDEN))
    logp_all = torch.log_softmax(masked, -1)
    p = logp_all.exp()
    entropy = -(torch.where(allowed, p * logp_all, torch.zeros_like(p))).sum(-1)
    if actions is None:
        actions = torch.multinomial(p.detach(), 1)[:, 0] if logits.ndim == 2 else \
            torch.distributions.Categorical(probs=p.detach()).sample()
    elif isinstance(actions, str):
        if actions != "argmax":
            raise ValueError(f"actions must be a tensor, None or 'argmax'; got {actions!r}")
        actions = masked.argmax(-1)
    actions = torch.as_tensor(actions, dtype=torch.long)
    return actions, logp_all.gather(-1, actions[..., None])[..., 0], entropy
