"""TimeSeg's agent: the factorised start/end policy, the critic, batched episodes, PPO training and explanation.

Explained in chapters/timeseg/01_theory.md. The policy reads ``[x; m_{1:k−1}; t/T]`` (3 channels) with a small 1D
CNN and outputs ``π(t^s | x, m)`` over the T positions and, given the start, ``π(t^e | t^s, x, m)``. Forbidden
positions get the logit ``−1e10`` (``.ppo.masked_categorical``): a start inside an already chosen segment, and an
end before the start or past the next chosen position, so that segments are valid, non-empty and never overlap
(the official code forbids only ends before the start and merges overlaps by a union; ours is the paper's
"non-overlapping"). The critic reads the same channels plus ``k / K_max``.

At test time actions are the argmax, and the explanation is the union of the segments chosen *before* the step
that terminated the episode (the official code's rule): at most ``K_max − 1`` segments.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn

from ..common.checks import check_between, check_int, check_non_negative, check_positive
from ..common.timing import stopwatch
from .ppo import PPOConfig, masked_categorical, ppo_update, td_advantages
from .env import cross_entropy_on, objective, segment_mask, soft_target, step_reward, terminates

__all__ = ["TimeSegConfig", "SegmentPolicy", "Critic", "Episodes", "rollout", "train_timeseg", "explain",
           "Explanation", "TrainLog"]


@dataclass(frozen=True)
class TimeSegConfig:
    """TimeSeg's settings: the length penalty ``lam`` (λ), the termination threshold ``tau`` (τ), ``k_max``, the
    reward's form, the networks' width, and the training budget (``iterations`` of ``episodes`` series each).

    Explained in chapters/timeseg/01_theory.md.
    """

    lam: float = 0.3
    tau: float = 0.3
    k_max: int = 4
    log_reward: bool = False
    hidden: int = 16
    lr: float = 1e-3
    iterations: int = 150
    episodes: int = 256
    ppo: PPOConfig = field(default_factory=PPOConfig)

    def __post_init__(self):
        check_non_negative("lam", self.lam)
        check_between("tau", self.tau, 0.0, 1.0, closed="both")
        check_int("k_max", self.k_max, low=2)
        check_int("hidden", self.hidden)
        check_positive("lr", self.lr)
        check_int("iterations", self.iterations, low=0)
        check_int("episodes", self.episodes)

    def to_dict(self) -> dict:
        """The settings as a plain dict. Explained in chapters/timeseg/01_theory.md."""
        return asdict(self)


def _features(x: torch.Tensor, mask: torch.Tensor, *extra) -> torch.Tensor:
    n, length = x.shape
    pos = torch.linspace(0, 1, length).expand(n, length)
    return torch.stack([x, mask.float(), pos, *[e[:, None].expand(n, length) for e in extra]], 1)


def _conv_stack(c_in: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv1d(c_in, hidden, 5, padding=2), nn.ReLU(),
                         nn.Conv1d(hidden, hidden, 5, padding=4, dilation=2), nn.ReLU(),
                         nn.Conv1d(hidden, hidden, 5, padding=8, dilation=4), nn.ReLU())


class SegmentPolicy(nn.Module):
    """``π(t^s, t^e | x, m) = π(t^s | x, m) π(t^e | t^s, x, m)``, both categorical over the T positions.

    Explained in chapters/timeseg/01_theory.md.
    """

    def __init__(self, hidden: int = 32):
        super().__init__()
        self.body = _conv_stack(3, hidden)
        self.start_head = nn.Conv1d(hidden, 1, 1)
        self.query = nn.Linear(hidden, hidden)
        self.end_head = nn.Sequential(nn.Conv1d(hidden + 1, hidden, 1), nn.ReLU(), nn.Conv1d(hidden, 1, 1))

    @staticmethod
    def allowed(mask: torch.Tensor, start=None) -> torch.Tensor:
        """Allowed starts (``start=None``: every unchosen position, or all if none is left) or allowed ends (from
        the start up to the position before the next chosen one). Explained in chapters/timeseg/01_theory.md."""
        free = ~mask
        if start is None:
            return torch.where(free.any(-1, keepdim=True), free, torch.ones_like(free))
        t = torch.arange(mask.shape[1])
        c = mask.long().cumsum(-1)
        c_s = c.gather(1, start[:, None])
        return (t[None] >= start[:, None]) & ((c == c_s) | (t[None] == start[:, None]))

    def forward(self, x, mask, start=None, end=None, mode=None):
        """``(start, end, log π(start, end), H(start) + H(end | start))``. Samples the actions that are not given
        (``mode="argmax"`` takes the most likely ones). Explained in chapters/timeseg/01_theory.md."""
        h = self.body(_features(x, mask))                                   # (n, H, T)
        s, lp_s, h_s = masked_categorical(self.start_head(h)[:, 0], self.allowed(mask),
                                          mode if start is None else start)
        hs = h.gather(2, s[:, None, None].expand(-1, h.shape[1], 1))[..., 0]  # (n, H): features at the start
        rel = (torch.arange(x.shape[1])[None] - s[:, None]).float() / x.shape[1]
        z = torch.cat([h + self.query(hs)[:, :, None], rel[:, None]], 1)
        e, lp_e, h_e = masked_categorical(self.end_head(z)[:, 0], self.allowed(mask, s),
                                          mode if end is None else end)
        return s, e, lp_s + lp_e, h_s + h_e


class Critic(nn.Module):
    """``V(x, m_{1:k−1}, k)``: a CNN over ``[x; m; t/T; k/K_max]`` pooled over time. Explained in
    chapters/timeseg/01_theory.md."""

    def __init__(self, hidden: int = 32):
        super().__init__()
        self.body = _conv_stack(4, hidden)
        self.head = nn.Linear(2 * hidden, 1)

    def forward(self, x, mask, frac_step):
        h = self.body(_features(x, mask, frac_step))
        return self.head(torch.cat([h.mean(-1), h.amax(-1)], 1))[:, 0]


@dataclass
class Episodes:
    """A batch of episodes laid out ``(K_max, n)``: the state masks, actions, log-probabilities, rewards, dones
    and ``alive`` (the step happened), with the explanation each episode returns (``kept``, ``n_kept``).

    Explained in chapters/timeseg/01_theory.md.
    """

    state: torch.Tensor
    start: torch.Tensor
    end: torch.Tensor
    log_prob: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    alive: torch.Tensor
    kept: torch.Tensor
    n_kept: torch.Tensor
    target: torch.Tensor

    @property
    def returns(self) -> torch.Tensor:
        """Undiscounted return of each episode. Explained in chapters/timeseg/01_theory.md."""
        return torch.where(self.alive, self.reward, torch.zeros_like(self.reward)).sum(0)


@torch.no_grad()
def rollout(policy: SegmentPolicy, model, x: torch.Tensor, cfg: TimeSegConfig, greedy: bool = False) -> Episodes:
    """Run one episode per series of ``x`` with the black box ``model``: sampled actions, or the argmax with
    ``greedy``. Explained in chapters/timeseg/01_theory.md."""
    n, length = x.shape
    K = cfg.k_max
    target = soft_target(model, x)
    mask = torch.zeros(n, length, dtype=torch.bool)
    alive_now = torch.ones(n, dtype=torch.bool)
    ce_prev = torch.zeros(n)
    kept = torch.zeros(n, length, dtype=torch.bool)
    n_kept = torch.zeros(n, dtype=torch.long)
    rec = {"state": torch.zeros(K, n, length, dtype=torch.bool), "start": torch.zeros(K, n, dtype=torch.long),
           "end": torch.zeros(K, n, dtype=torch.long), "log_prob": torch.zeros(K, n), "reward": torch.zeros(K, n),
           "done": torch.zeros(K, n, dtype=torch.bool), "alive": torch.zeros(K, n, dtype=torch.bool)}
    for k in range(1, K + 1):
        idx = alive_now.nonzero()[:, 0]
        if idx.numel() == 0:
            break
        xa, ma = x[idx], mask[idx]
        s, e, lp, _ = policy(xa, ma, mode="argmax" if greedy else None)
        new = ma | segment_mask(s, e, length)
        ce_new = cross_entropy_on(model, xa, new, target[idx])
        ce_old = None if k == 1 else ce_prev[idx]
        r = step_reward(ce_new, ce_old, e - s + 1, length, cfg.lam, cfg.log_reward)
        d = terminates(ce_new, ce_old, k, K, cfg.tau)
        for key, v in (("state", ma), ("start", s), ("end", e), ("log_prob", lp), ("reward", r), ("done", d)):
            rec[key][k - 1, idx] = v
        rec["alive"][k - 1, idx] = True
        kept[idx[d]] = ma[d]                      # the terminating step's segment is dropped
        n_kept[idx[d]] = k - 1
        mask[idx] = new
        ce_prev[idx] = ce_new
        alive_now[idx[d]] = False
    return Episodes(kept=kept, n_kept=n_kept, target=target, **rec)


@dataclass
class TrainLog:
    """Per-iteration means of the sampled episodes (return, kept segments, kept fraction), PPO's losses, and the
    seconds and transitions of training. Explained in chapters/timeseg/01_theory.md."""

    returns: list = field(default_factory=list)
    n_kept: list = field(default_factory=list)
    fraction: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    seconds: float = 0.0
    transitions: int = 0

    def to_dict(self) -> dict:
        """Plain lists for saving. Explained in chapters/timeseg/01_theory.md."""
        return {"returns": self.returns, "n_kept": self.n_kept, "fraction": self.fraction,
                "seconds": self.seconds, "transitions": self.transitions,
                "losses": {k: [d[k] for d in self.losses] for k in (self.losses[0] if self.losses else {})}}


def _batch(policy, critic, model, x, ep: Episodes, cfg: TimeSegConfig):
    """Flatten the alive transitions of ``ep`` with their advantages and value targets."""
    K, n = ep.alive.shape
    frac = (torch.arange(K, dtype=torch.float32) / K)[:, None].expand(K, n)
    ki, ni = ep.alive.nonzero(as_tuple=True)
    with torch.no_grad():
        v = torch.zeros(K, n)
        v[ki, ni] = critic(x[ni], ep.state[ki, ni], frac[ki, ni])
    nv = torch.zeros(K, n)
    nv[:-1] = torch.where(ep.alive[1:], v[1:], torch.zeros_like(v[1:]))
    adv, tgt = td_advantages(ep.reward, v, nv, ep.done, gamma=cfg.ppo.gamma, gae_lambda=cfg.ppo.gae_lambda,
                             alive=ep.alive)
    return {"x": x[ni], "state": ep.state[ki, ni], "frac": frac[ki, ni], "start": ep.start[ki, ni],
            "end": ep.end[ki, ni], "old_log_prob": ep.log_prob[ki, ni], "advantages": adv[ki, ni],
            "targets": tgt[ki, ni]}


def train_timeseg(model, x_train, cfg: TimeSegConfig, seed: int = 0, progress=None):
    """Train TimeSeg's policy and critic with PPO against the black box ``model`` on the series ``x_train``;
    returns ``(policy, critic, TrainLog)``. Each iteration draws ``cfg.episodes`` series, runs one sampled episode
    on each and makes ``cfg.ppo.epochs`` passes of minibatches over its transitions.

    Explained in chapters/timeseg/01_theory.md. ``progress`` wraps the iteration range (a tqdm bar) if given.
    """
    x_train = torch.as_tensor(np.asarray(x_train), dtype=torch.float32)
    if x_train.ndim != 2:
        raise ValueError(f"x_train must have shape (n, T); got {tuple(x_train.shape)}")
    torch.manual_seed(check_int("seed", seed, low=0))
    gen = torch.Generator().manual_seed(seed)
    policy, critic = SegmentPolicy(cfg.hidden), Critic(cfg.hidden)
    params = list(policy.parameters()) + list(critic.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr)
    log = TrainLog()
    with stopwatch() as watch:
        its = range(cfg.iterations)
        for _ in (progress(its) if progress else its):
            idx = torch.randint(0, x_train.shape[0], (cfg.episodes,), generator=gen)
            x = x_train[idx]
            ep = rollout(policy, model, x, cfg)
            b = _batch(policy, critic, model, x, ep, cfg)

            def evaluate(j, b=b):
                _, _, lp, ent = policy(b["x"][j], b["state"][j], b["start"][j], b["end"][j])
                return lp, ent, critic(b["x"][j], b["state"][j], b["frac"][j])

            losses = ppo_update(evaluate, opt, params, b, cfg.ppo, gen)
            log.returns.append(float(ep.returns.mean()))
            log.n_kept.append(float(ep.n_kept.float().mean()))
            log.fraction.append(float(ep.kept.float().mean()))
            log.losses.append(losses)
            log.transitions += int(ep.alive.sum())
    log.seconds = watch.seconds
    return policy.eval(), critic.eval(), log


@dataclass
class Explanation:
    """TimeSeg's deterministic explanations of a batch: the masks, the kept segments ``[(start, end), …]`` per
    series, their number, the objective ``J`` of each mask and the seconds it took.

    Explained in chapters/timeseg/01_theory.md.
    """

    mask: torch.Tensor
    segments: list
    n_segments: torch.Tensor
    objective: torch.Tensor
    seconds: float


def explain(policy: SegmentPolicy, model, x, cfg: TimeSegConfig) -> Explanation:
    """TimeSeg's explanations of the series ``x`` (argmax actions; the terminating step's segment dropped).

    Explained in chapters/timeseg/01_theory.md.
    """
    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    with stopwatch() as watch:
        ep = rollout(policy, model, x, cfg, greedy=True)
    segs = [[(int(ep.start[k, i]), int(ep.end[k, i])) for k in range(int(ep.n_kept[i]))] for i in range(x.shape[0])]
    return Explanation(ep.kept, segs, ep.n_kept, objective(model, x, ep.kept, ep.target, cfg.lam), watch.seconds)
