"""Environments for batched-seed RL: one gymnasium vector environment per independent run.

Explained in chapters/scorer/02_experiments.md. A *group* is one independent training run (an agent with one
seed). Each group owns its own gymnasium vector environment with ``envs_per_group`` copies, seeded only from the
group's seed, so a run gives the same episodes whether it trains alone or beside others.

Episode ends. gymnasium 1.x vector environments autoreset in NEXT_STEP mode: the step that ends an episode returns
the episode's true last observation, and the *following* call to ``step`` ignores the action, resets that copy and
returns the reset observation with reward 0. That following step is not a transition of the environment and must not
be stored. :class:`GroupedEnvs` marks it with ``valid=False``. It also keeps ``terminated`` (the episode really
ended: the bootstrap target is the reward alone) apart from ``truncated`` (the time limit cut it: bootstrap from the
true next observation, which NEXT_STEP returns on the ending step itself).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..common import check_int, check_seeds

__all__ = ["make_vector_env", "EnvStep", "GroupedEnvs", "ENV_IDS"]

ENV_IDS = ("CartPole-v1", "Acrobot-v1")


def make_vector_env(env_id: str, num_envs: int, **kwargs):
    """A gymnasium vector environment with ``num_envs`` copies of ``env_id``, autoreset NEXT_STEP.

    Explained in chapters/scorer/02_experiments.md. Uses the numpy-native vector implementation where gymnasium has
    one (CartPole-v1), else a synchronous vector of single environments (Acrobot-v1).
    """
    import gymnasium as gym

    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"env_id must be a gymnasium id such as 'CartPole-v1', got {env_id!r}")
    check_int("num_envs", num_envs)
    try:
        return gym.make_vec(env_id, num_envs=int(num_envs), vectorization_mode="vector_entry_point", **kwargs)
    except gym.error.Error:
        return gym.make_vec(env_id, num_envs=int(num_envs), vectorization_mode="sync", **kwargs)


@dataclass
class EnvStep:
    """What one call of :meth:`GroupedEnvs.step` returns; arrays of shape (G, E, ...).

    ``next_obs`` is the observation the transition led to (the true last one when an episode ended), ``obs`` the one
    to act on next (the same except one step after an end, when it is the reset observation). ``valid`` is False for
    the autoreset step, which is not a transition.
    Explained in chapters/scorer/02_experiments.md.
    """

    obs: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    valid: np.ndarray

    @property
    def next_obs(self) -> np.ndarray:
        return self.obs


@dataclass
class GroupedEnvs:
    """G independent vector environments (one per run), E copies each, stepped together.

    Explained in chapters/scorer/02_experiments.md. ``make(seed)`` builds one vector environment; by default
    :func:`make_vector_env`. Completed episodes are recorded per group: ``episodes[g]`` is a list of
    (environment steps of that group so far, undiscounted return, length).
    """

    env_id: str
    seeds: Sequence[int]
    envs_per_group: int = 1
    make: Callable | None = None
    env_kwargs: dict = field(default_factory=dict)

    def __post_init__(self):
        seeds = self.seeds = check_seeds(self.seeds)
        check_int("envs_per_group", self.envs_per_group)
        make = self.make or (lambda s: make_vector_env(self.env_id, self.envs_per_group, **self.env_kwargs))
        self.envs = [make(s) for s in seeds]
        for e in self.envs:
            mode = getattr(e.metadata.get("autoreset_mode"), "value", e.metadata.get("autoreset_mode"))
            if mode not in (None, "NextStep"):
                raise ValueError(f"GroupedEnvs handles NEXT_STEP autoreset only, the environment uses {mode!r}")
        self.obs_dim = int(np.prod(self.envs[0].single_observation_space.shape))
        self.n_actions = int(self.envs[0].single_action_space.n)
        self.num_groups = len(seeds)

    def reset(self) -> np.ndarray:
        """Reset every copy; group g's copies are seeded from ``seeds[g]``. Returns obs (G, E, obs_dim)."""
        G, E = self.num_groups, self.envs_per_group
        obs = [e.reset(seed=int(s))[0] for e, s in zip(self.envs, self.seeds)]
        self._prev_done = np.zeros((G, E), dtype=bool)
        self._ret = np.zeros((G, E))
        self._len = np.zeros((G, E), dtype=np.int64)
        self.steps = np.zeros(G, dtype=np.int64)          # real transitions per group
        self.episodes = [[] for _ in range(G)]
        return np.stack(obs).reshape(G, E, self.obs_dim).astype(np.float32)

    def step(self, actions) -> EnvStep:
        """Step every copy with ``actions`` (G, E) and book-keep episode ends (see the module docstring)."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_groups, self.envs_per_group):
            raise ValueError(f"actions must have shape {(self.num_groups, self.envs_per_group)}, got {actions.shape}")
        out = [e.step(a) for e, a in zip(self.envs, actions)]
        obs = np.stack([o[0] for o in out]).reshape(self.num_groups, self.envs_per_group, self.obs_dim)
        reward = np.stack([o[1] for o in out]).astype(np.float64)
        term = np.stack([o[2] for o in out]).astype(bool)
        trunc = np.stack([o[3] for o in out]).astype(bool)
        valid = ~self._prev_done
        reward = np.where(valid, reward, 0.0)
        term &= valid
        trunc &= valid
        self._ret += reward
        self._len += valid
        self.steps += valid.sum(1)
        done = term | trunc
        for g, e in zip(*np.nonzero(done)):
            self.episodes[g].append((int(self.steps[g]), float(self._ret[g, e]), int(self._len[g, e])))
        self._ret[done] = 0.0
        self._len[done] = 0
        self._prev_done = done
        return EnvStep(obs=obs.astype(np.float32), reward=reward, terminated=term, truncated=trunc, valid=valid)

    def episode_table(self):
        """Completed episodes as arrays per group: (steps at the end, return, length)."""
        return [np.array(ep, dtype=float).reshape(-1, 3) for ep in self.episodes]

    def close(self):
        for e in self.envs:
            e.close()
