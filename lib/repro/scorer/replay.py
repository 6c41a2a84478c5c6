"""A replay buffer for G independent runs: numpy ring buffers of shape (G, capacity, ...).

Explained in chapters/scorer/02_experiments.md. Each group fills its own ring and samples from it with its own
random generator (seeded from the group's seed), so a run's batches do not depend on which other runs share the
buffer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..common import check_int, check_seeds

__all__ = ["Batch", "ReplayBuffer"]


@dataclass
class Batch:
    """A batch per group as torch tensors: obs (G, B, d), action (G, B) int64, reward (G, B), next_obs (G, B, d),
    terminated (G, B) as float (1 = the episode really ended, so no bootstrap). Explained in
    chapters/scorer/01_theory.md."""

    obs: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    next_obs: torch.Tensor
    terminated: torch.Tensor


class ReplayBuffer:
    """Ring buffers for ``len(seeds)`` groups, ``capacity`` transitions each, observations of size ``obs_dim``.

    Explained in chapters/scorer/02_experiments.md.
    """

    def __init__(self, seeds, capacity: int, obs_dim: int):
        seeds = check_seeds(seeds)
        check_int("capacity", capacity)
        check_int("obs_dim", obs_dim)
        G = len(seeds)
        self.capacity, self.obs_dim, self.num_groups = int(capacity), int(obs_dim), G
        self.obs = np.zeros((G, capacity, obs_dim), dtype=np.float32)
        self.next_obs = np.zeros((G, capacity, obs_dim), dtype=np.float32)
        self.action = np.zeros((G, capacity), dtype=np.int64)
        self.reward = np.zeros((G, capacity), dtype=np.float32)
        self.terminated = np.zeros((G, capacity), dtype=np.float32)
        self.ptr = np.zeros(G, dtype=np.int64)
        self.size = np.zeros(G, dtype=np.int64)
        self.rngs = [np.random.default_rng([s, 1]) for s in seeds]   # stream 1 of each seed: sampling

    def add(self, obs, action, reward, next_obs, terminated, valid=None) -> None:
        """Store the transitions of one vector step, arrays (G, E, ...); those with ``valid`` False are skipped."""
        obs = np.asarray(obs, dtype=np.float32)
        G = self.num_groups
        if obs.ndim != 3 or obs.shape[0] != G or obs.shape[2] != self.obs_dim:
            raise ValueError(f"obs must have shape ({G}, E, {self.obs_dim}), got {obs.shape}")
        E = obs.shape[1]
        valid = np.ones((G, E), dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
        fields = [np.asarray(x) for x in (action, reward, next_obs, terminated)]
        if valid.shape != (G, E) or any(f.shape[:2] != (G, E) for f in fields):
            raise ValueError(f"action, reward, next_obs, terminated and valid must start with shape {(G, E)}")
        action, reward, next_obs, terminated = fields
        n = valid.sum(1)
        rank = np.cumsum(valid, axis=1) - 1                       # order of the kept transitions within a group
        g, e = np.nonzero(valid)
        pos = (self.ptr[g] + rank[g, e]) % self.capacity
        self.obs[g, pos] = obs[g, e]
        self.next_obs[g, pos] = next_obs[g, e]
        self.action[g, pos] = action[g, e]
        self.reward[g, pos] = reward[g, e]
        self.terminated[g, pos] = terminated[g, e]
        self.ptr = (self.ptr + n) % self.capacity
        self.size = np.minimum(self.size + n, self.capacity)

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` transitions per group, uniformly with replacement from what that group has stored."""
        check_int("batch_size", batch_size)
        if np.any(self.size == 0):
            raise ValueError("cannot sample: some group has stored no transition yet")
        idx = np.stack([rng.integers(0, n, batch_size) for rng, n in zip(self.rngs, self.size)])
        g = np.arange(self.num_groups)[:, None]
        t = torch.from_numpy
        return Batch(obs=t(self.obs[g, idx]), action=t(self.action[g, idx]), reward=t(self.reward[g, idx]),
                     next_obs=t(self.next_obs[g, idx]), terminated=t(self.terminated[g, idx]))
