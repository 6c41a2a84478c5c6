"""DQN with many independent runs in one batched model, and an encoder/Q-head split of its parameters.

Explained in chapters/scorer/02_experiments.md (and the representation/value split in chapters/scorer/01_theory.md).

- :class:`QNetwork` holds G networks at once. Every weight has a leading group dimension and the layers are batched
  matrix products (``torch.baddbmm``), so G runs cost little more than one. Each group's weights are initialised
  from its own seed. The parameters live in two flat leaf tensors, ``enc`` (G, P_enc) for the encoder f_phi and
  ``head`` (G, P_head) for the Q-head Q_theta, so that a method such as SCORER can give them different losses,
  learning rates and optimizers.
  Architecture (the classic-control network of SCORER's released code): f(s) = L1Norm(ReLU(W1 s + b1)),
  Q(z) = W3 ReLU(W2 z + b2) + b3, with L1Norm(x) = x / max(mean|x|, 1e-8), orthogonal init with gain sqrt(2) and 0.01
  for the last layer, zero biases.
- :class:`BatchedAdam` is Adam over (G, P) parameters with a learning rate per group, a mask that freezes chosen
  groups (their parameters and moments stay bitwise unchanged) and per-group global-norm clipping. Adam is
  elementwise, so one BatchedAdam equals G independent Adams.
- :func:`td_errors` gives the Bellman errors delta = y - Q(f(s))_a with a stop-gradient target.
- :func:`train` is the training loop: epsilon-greedy acting in :class:`~repro.scorer.envs.GroupedEnvs`, a
  :class:`~repro.scorer.replay.ReplayBuffer`, an update rule (:class:`DQNUpdate`, or SCORER's in
  :mod:`repro.scorer.stackelberg`), hard target updates, and the diagnostics the chapter plots.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ..common import check_between, check_int, check_seeds, thread_limit
from .envs import GroupedEnvs
from .replay import Batch, ReplayBuffer

__all__ = ["QNetwork", "BatchedAdam", "td_errors", "DQNConfig", "DQNUpdate", "TrainLog", "train",
           "epsilon_schedule", "l1_norm"]


def l1_norm(x: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """x / max(mean |x|, eps) over the last dimension (SCORER's ``L1Norm``; chapters/scorer/02_experiments.md)."""
    return x / x.abs().mean(-1, keepdim=True).clamp_min(eps)


class QNetwork:
    """G Q-networks as batched weights: an encoder (``enc``) and a Q-head (``head``), each a flat (G, P) tensor.

    Explained in chapters/scorer/02_experiments.md (architecture and init in this module's docstring).
    """

    def __init__(self, seeds, obs_dim: int, n_actions: int, hidden: int = 64, latent: int = 64):
        seeds = check_seeds(seeds)
        for name, v in (("obs_dim", obs_dim), ("n_actions", n_actions), ("hidden", hidden), ("latent", latent)):
            check_int(name, v)
        self.seeds, self.G = seeds, len(seeds)
        self.obs_dim, self.n_actions, self.hidden, self.latent = int(obs_dim), int(n_actions), int(hidden), int(latent)
        self.enc_shapes = {"W1": (obs_dim, latent), "b1": (1, latent)}
        self.head_shapes = {"W2": (latent, hidden), "b2": (1, hidden), "W3": (hidden, n_actions), "b3": (1, n_actions)}
        enc, head = [], []
        for s in seeds:
            g = torch.Generator().manual_seed(int(s))
            w = {}
            for name, (i, o), gain in (("W1", (obs_dim, latent), 2 ** 0.5), ("W2", (latent, hidden), 2 ** 0.5),
                                       ("W3", (hidden, n_actions), 0.01)):
                m = torch.empty(o, i)
                torch.nn.init.orthogonal_(m, gain=gain, generator=g)
                w[name] = m.T.contiguous()
            enc.append(torch.cat([w["W1"].flatten(), torch.zeros(latent)]))
            head.append(torch.cat([w["W2"].flatten(), torch.zeros(hidden), w["W3"].flatten(), torch.zeros(n_actions)]))
        self.enc = torch.stack(enc).requires_grad_()
        self.head = torch.stack(head).requires_grad_()

    @staticmethod
    def _unpack(flat: torch.Tensor, shapes: dict) -> dict:
        out, i = {}, 0
        for name, shape in shapes.items():
            n = shape[0] * shape[1]
            out[name] = flat[:, i:i + n].view(flat.shape[0], *shape)
            i += n
        return out

    def encode(self, x: torch.Tensor, enc: torch.Tensor | None = None) -> torch.Tensor:
        """f_phi(x) for x (G, N, obs_dim) -> (G, N, latent); ``enc`` overrides the encoder weights (e.g. a target)."""
        p = self._unpack(self.enc if enc is None else enc, self.enc_shapes)
        return l1_norm(torch.relu(torch.baddbmm(p["b1"], x, p["W1"])))

    def q_head(self, z: torch.Tensor, head: torch.Tensor | None = None) -> torch.Tensor:
        """Q_theta(z) for z (G, N, latent) -> (G, N, n_actions)."""
        p = self._unpack(self.head if head is None else head, self.head_shapes)
        return torch.baddbmm(p["b3"], torch.relu(torch.baddbmm(p["b2"], z, p["W2"])), p["W3"])

    def q_values(self, x: torch.Tensor, enc=None, head=None) -> torch.Tensor:
        """Q_theta(f_phi(x)) for x (G, N, obs_dim)."""
        return self.q_head(self.encode(x, enc), head)

    def output_bias(self) -> torch.Tensor:
        """A view of b3, the Q-head's output bias (G, 1, n_actions); adding c to it shifts every Q-value by c."""
        return self._unpack(self.head, self.head_shapes)["b3"]

    def snapshot(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Detached copies of (enc, head)."""
        return self.enc.detach().clone(), self.head.detach().clone()


class BatchedAdam:
    """Adam on a (G, P) parameter tensor with per-group learning rates, a per-group freeze mask and clipping.

    Explained in chapters/scorer/02_experiments.md. ``step(grad, mask, lr_scale)`` updates the groups where ``mask``
    is True; the others keep their parameters, moments and step counts bitwise. With ``max_grad_norm`` each group's
    gradient is rescaled to at most that L2 norm (per group, since clipping is not elementwise).
    """

    def __init__(self, param: torch.Tensor, lr, betas=(0.9, 0.999), eps: float = 1e-8, max_grad_norm=None):
        if param.ndim != 2:
            raise ValueError(f"param must be a (G, P) tensor, got shape {tuple(param.shape)}")
        lr = torch.as_tensor(lr, dtype=param.dtype).flatten()
        lr = lr.expand(param.shape[0]).clone() if lr.numel() == 1 else lr
        if lr.shape != (param.shape[0],) or bool((lr < 0).any()):
            raise ValueError(f"lr must be a non-negative number or one per group ({param.shape[0]}), got {lr}")
        if max_grad_norm is not None and max_grad_norm <= 0:
            raise ValueError(f"max_grad_norm must be positive or None, got {max_grad_norm!r}")
        self.param, self.lr, self.betas, self.eps, self.max_grad_norm = param, lr, betas, eps, max_grad_norm
        self.m = torch.zeros_like(param)
        self.v = torch.zeros_like(param)
        self.t = torch.zeros(param.shape[0], dtype=param.dtype)

    @torch.no_grad()
    def step(self, grad: torch.Tensor, mask: torch.Tensor | None = None, lr_scale: float = 1.0) -> None:
        G = self.param.shape[0]
        mask = torch.ones(G, dtype=torch.bool) if mask is None else mask
        if self.max_grad_norm is not None:
            norm = grad.pow(2).sum(1, keepdim=True).sqrt()
            grad = grad * (self.max_grad_norm / (norm + 1e-6)).clamp(max=1.0)
        b1, b2 = self.betas
        mk = mask[:, None]
        self.t = torch.where(mask, self.t + 1, self.t)
        self.m = torch.where(mk, b1 * self.m + (1 - b1) * grad, self.m)
        self.v = torch.where(mk, b2 * self.v + (1 - b2) * grad * grad, self.v)
        t = self.t.clamp(min=1)[:, None]
        step = (self.lr[:, None] * lr_scale / (1 - b1 ** t)) * self.m / ((self.v / (1 - b2 ** t)).sqrt() + self.eps)
        self.param.copy_(torch.where(mk, self.param - step, self.param))


def td_errors(net: QNetwork, target: tuple, batch: Batch, gamma: float, detach_encoder=None,
              groups=None) -> torch.Tensor:
    """Bellman errors delta_i = y_i - Q(f(s_i))_{a_i}, shape (G, B), with y from the target nets (no gradient).

    Explained in chapters/scorer/01_theory.md: y = r + gamma (1 - terminated) max_a' Q_target(f_target(s'))_{a'}.
    ``detach_encoder`` (bool, or a bool mask per group) stops the gradient into the encoder for those groups.
    ``groups`` (indices) computes the errors of those groups only; gradients still reach ``net.enc``/``net.head``.
    """
    check_between("gamma", gamma, 0, 1, closed="both")
    enc, head = net.enc, net.head
    if groups is not None:
        groups = torch.as_tensor(groups, dtype=torch.long)
        enc, head, target = enc[groups], head[groups], tuple(t[groups] for t in target)
        batch = Batch(**{k: v[groups] for k, v in vars(batch).items()})
    with torch.no_grad():
        q_next = net.q_values(batch.next_obs, *target).max(-1).values
        y = batch.reward + gamma * (1.0 - batch.terminated) * q_next
    z = net.encode(batch.obs, enc)
    if detach_encoder is not None:
        mask = torch.as_tensor(detach_encoder, dtype=torch.bool).expand(enc.shape[0])
        z = torch.where(mask[:, None, None], z.detach(), z)
    q = net.q_head(z, head).gather(-1, batch.action[..., None]).squeeze(-1)
    return y - q


class DQNUpdate:
    """Plain DQN: one Adam step of both parameter groups on the MSBE (1/B) sum_i delta_i^2 per update.

    Explained in chapters/scorer/02_experiments.md (the baseline; SCORER's update is repro.scorer.ScorerUpdate).
    """

    batches_per_update = 1

    def __init__(self, lr: float = 1e-3, max_grad_norm=None):
        self.lr, self.max_grad_norm = lr, max_grad_norm

    def bind(self, net: QNetwork) -> None:
        self.opt_enc = BatchedAdam(net.enc, self.lr, max_grad_norm=self.max_grad_norm)
        self.opt_head = BatchedAdam(net.head, self.lr, max_grad_norm=self.max_grad_norm)

    def __call__(self, net, target, batches, gamma, lr_scale=1.0) -> dict:
        delta = td_errors(net, target, batches[0], gamma)
        loss = delta.pow(2).mean(1).sum()                  # a sum over groups keeps their gradients separate
        g_enc, g_head = torch.autograd.grad(loss, [net.enc, net.head])
        self.opt_enc.step(g_enc, lr_scale=lr_scale)
        self.opt_head.step(g_head, lr_scale=lr_scale)
        d = delta.detach()
        return {"delta_mean": d.mean(1), "delta_var": d.var(1, unbiased=False)}


def epsilon_schedule(step, start: float, end: float, decay_steps: int) -> float:
    """Linear exploration schedule: ``start`` at step 0 to ``end`` at ``decay_steps``, then constant.

    Explained in chapters/scorer/02_experiments.md (epsilon-greedy exploration).
    """
    if decay_steps <= 0:
        return end
    return float(end + (start - end) * max(0.0, 1.0 - step / decay_steps))


@dataclass
class DQNConfig:
    """Hyper-parameters of :func:`train`. Steps count environment transitions of one run (group).

    Explained in chapters/scorer/02_experiments.md, whose settings table shows the values used there.
    """

    env_id: str = "CartPole-v1"
    total_steps: int = 20_000
    envs_per_group: int = 1
    buffer_size: int = 20_000
    batch_size: int = 64
    gamma: float = 0.99
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_decay_steps: int = 8_000
    learning_starts: int = 1_000
    train_every: int = 1            # vector steps between updates
    target_every: int = 500         # environment steps between hard target updates
    hidden: int = 64
    latent: int = 64
    lr_decay: bool = False          # linear decay of every learning rate to 0 over training
    log_every: int = 250            # updates between snapshots (parameters, probe encodings)
    n_probe: int = 128              # fixed probe states per run, for encoder drift

    def validate(self) -> None:
        for name in ("total_steps", "envs_per_group", "buffer_size", "batch_size", "train_every", "target_every",
                     "hidden", "latent", "log_every", "n_probe"):
            check_int(name, getattr(self, name))
        check_between("gamma", self.gamma, 0, 1, closed="both")
        if self.learning_starts < self.batch_size or self.learning_starts >= self.total_steps:
            raise ValueError(f"learning_starts must be in [batch_size, total_steps), got {self.learning_starts!r}")


@dataclass
class TrainLog:
    """What :func:`train` returns. Per-update statistics are (n_updates, G) arrays; snapshots are lists.

    Explained in chapters/scorer/02_experiments.md.
    """

    seeds: list
    episodes: list                   # per group: array (n_episodes, 3) of (env step at the end, return, length)
    update_steps: np.ndarray         # env steps (per run) at each update
    stats: dict                      # name -> (n_updates, G) array, e.g. delta_mean, delta_var
    snap_updates: np.ndarray         # update index of each snapshot
    snap_enc: list = field(default_factory=list)    # (G, P_enc) arrays
    snap_head: list = field(default_factory=list)   # (G, P_head) arrays
    snap_probe: list = field(default_factory=list)  # (G, n_probe, latent) encodings of the fixed probe states
    probe_states: np.ndarray | None = None
    seconds: float = 0.0
    env_steps: int = 0
    net: QNetwork | None = None
    target: tuple | None = None
    buffer: ReplayBuffer | None = None


def train(cfg: DQNConfig, seeds, update=None, progress=None) -> TrainLog:
    """Train one run per seed with ``update`` (default :class:`DQNUpdate`), all runs batched in one model.

    Explained in chapters/scorer/02_experiments.md. Every run draws its exploration, replay samples, environment
    and initial weights from its own seed only. ``progress`` wraps the step loop (e.g. ``repro.common.progress``).
    The loop runs torch on one thread (never more than it was given): its matrices are tiny, and extra threads only
    add synchronisation, which on a busy machine can make training many times slower.
    """
    cfg.validate()
    seeds = check_seeds(seeds)
    with thread_limit(1, blas=False):
        loop = _Loop(cfg, seeds, DQNUpdate() if update is None else update)
        steps = range(loop.n_vec)
        for t in (steps if progress is None else progress(steps, desc="env steps")):
            loop.step(t)
        return loop.finish()


class _Loop:
    """The state of one :func:`train` call: environments, networks, replay, the update rule and the log.

    One vector step (:meth:`step`) acts epsilon-greedily (:meth:`act`), stores the transitions, learns when an
    update is due (:meth:`learn`, which also takes the snapshots) and refreshes the target networks.
    """

    def __init__(self, cfg: DQNConfig, seeds: list, update):
        self.cfg, self.seeds, self.update, self.E = cfg, seeds, update, cfg.envs_per_group
        self.envs = GroupedEnvs(cfg.env_id, seeds, self.E)
        self.net = QNetwork(seeds, self.envs.obs_dim, self.envs.n_actions, cfg.hidden, cfg.latent)
        self.target = self.net.snapshot()
        update.bind(self.net)
        self.buf = ReplayBuffer(seeds, cfg.buffer_size, self.envs.obs_dim)
        self.act_rngs = [np.random.default_rng([s, 2]) for s in seeds]
        self.n_vec = cfg.total_steps // self.E
        self.first_update = int(np.ceil(cfg.learning_starts / self.E))      # the vector step of the first update
        self.n_updates = len(range(self.first_update, self.n_vec, cfg.train_every))
        self.stats, self.update_steps = {}, np.zeros(self.n_updates, dtype=np.int64)
        self.log = TrainLog(seeds=seeds, episodes=[], update_steps=self.update_steps, stats=self.stats,
                            snap_updates=np.zeros(0))
        self.probe, self.k, self.t0 = None, 0, time.perf_counter()
        self.obs = self.envs.reset()

    def act(self, env_step: int) -> np.ndarray:
        """Epsilon-greedy actions (G, E): each run explores with its own generator."""
        eps = epsilon_schedule(env_step, self.cfg.eps_start, self.cfg.eps_end, self.cfg.eps_decay_steps)
        with torch.no_grad():
            greedy = self.net.q_values(torch.from_numpy(self.obs)).argmax(-1).numpy()
        actions = np.empty((len(self.seeds), self.E), dtype=np.int64)
        for g, rng in enumerate(self.act_rngs):
            explore, rand = rng.random(self.E) < eps, rng.integers(0, self.envs.n_actions, self.E)
            actions[g] = np.where(explore, rand, greedy[g])
        return actions

    def learn(self, env_step: int) -> None:
        """One update of every run on fresh replay batches; its statistics go to the log, with a snapshot of the
        parameters and probe encodings every ``log_every`` updates (and before the first)."""
        cfg = self.cfg
        if self.probe is None:                                 # fixed probe states, drawn once per run
            self.probe = _probe_states(self.buf, self.seeds, cfg.n_probe)
            self.log.probe_states = self.probe.numpy()
            _snapshot(self.log, self.net, self.probe, 0)
        scale = 1.0 - self.k / self.n_updates if cfg.lr_decay else 1.0
        batches = [self.buf.sample(cfg.batch_size) for _ in range(self.update.batches_per_update)]
        out = self.update(self.net, self.target, batches, cfg.gamma, lr_scale=scale)
        for name, v in out.items():
            if name not in self.stats:
                self.stats[name] = torch.zeros(self.n_updates, len(self.seeds))
            self.stats[name][self.k] = v
        self.update_steps[self.k] = env_step
        self.k += 1
        if self.k % cfg.log_every == 0:
            _snapshot(self.log, self.net, self.probe, self.k)

    def step(self, t: int) -> None:
        """Vector step ``t``: act, store, learn if an update is due, refresh the targets every ``target_every``."""
        cfg, env_step = self.cfg, t * self.E
        actions = self.act(env_step)
        st = self.envs.step(actions)
        self.buf.add(self.obs, actions, st.reward, st.next_obs, st.terminated, st.valid)
        self.obs = st.obs
        if env_step >= cfg.learning_starts and (t - self.first_update) % cfg.train_every == 0:
            self.learn(env_step)
        if (env_step + self.E) // cfg.target_every > env_step // cfg.target_every:
            self.target = self.net.snapshot()

    def finish(self) -> TrainLog:
        """Close the environments and return the log, trimmed to the updates done."""
        log, k = self.log, self.k
        log.stats = {name: v[:k].numpy() for name, v in self.stats.items()}
        log.update_steps = self.update_steps[:k]
        log.snap_updates = log.snap_updates.astype(int)
        log.episodes = self.envs.episode_table()
        log.seconds = time.perf_counter() - self.t0
        log.env_steps = self.n_vec * self.E
        log.net, log.target, log.buffer = self.net, self.target, self.buf
        self.envs.close()
        return log


def _probe_states(buf: ReplayBuffer, seeds, n: int) -> torch.Tensor:
    rngs = [np.random.default_rng([s, 3]) for s in seeds]
    idx = np.stack([r.integers(0, size, n) for r, size in zip(rngs, buf.size)])
    return torch.from_numpy(buf.obs[np.arange(len(seeds))[:, None], idx])


def _snapshot(log: TrainLog, net: QNetwork, probe: torch.Tensor, k: int) -> None:
    enc, head = net.snapshot()
    with torch.no_grad():
        z = net.encode(probe)
    log.snap_enc.append(enc.numpy())
    log.snap_head.append(head.numpy())
    log.snap_probe.append(z.numpy())
    log.snap_updates = np.append(log.snap_updates, k)
