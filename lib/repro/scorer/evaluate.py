"""Summaries of RL runs: return curves, AUC, greedy rollouts for value bias.

Explained in chapters/scorer/02_experiments.md. Curves are computed on a common grid of environment steps, so runs
with different episode lengths can be averaged; their confidence intervals over seeds are the book's
(`repro.common.bootstrap_ci`), and their smoothing `repro.common.trailing_mean`.
"""
from __future__ import annotations

import numpy as np
import torch

from ..common import check_int, thread_limit
from .envs import GroupedEnvs

__all__ = ["return_curve", "last_episodes_mean", "auc", "greedy_rollouts"]


def _episodes(episodes) -> np.ndarray:
    ep = np.asarray(episodes, dtype=float).reshape(-1, 3) if len(episodes) else np.zeros((0, 3))
    if ep.ndim != 2 or ep.shape[1] != 3:
        raise ValueError(f"episodes must be an (n, 3) array of (end step, return, length), got shape {ep.shape}")
    return ep


def return_curve(episodes, grid, window: int = 20) -> np.ndarray:
    """The mean return of the last ``window`` episodes finished by each step of ``grid`` (NaN before the first).

    ``episodes`` is one run's (n, 3) array from :meth:`~repro.scorer.envs.GroupedEnvs.episode_table`. Explained in
    chapters/scorer/02_experiments.md.
    """
    ep = _episodes(episodes)
    check_int("window", window)
    grid = np.asarray(grid, dtype=float)
    n_done = np.searchsorted(ep[:, 0], grid, side="right")
    csum = np.concatenate([[0.0], np.cumsum(ep[:, 1])])
    lo = np.maximum(n_done - window, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (csum[n_done] - csum[lo]) / (n_done - lo)
    return np.where(n_done > 0, out, np.nan)


def last_episodes_mean(episodes, n: int = 20) -> float:
    """Mean undiscounted return of a run's last ``n`` completed episodes (chapters/scorer/02_experiments.md)."""
    ep = _episodes(episodes)
    check_int("n", n)
    if len(ep) == 0:
        return float("nan")
    return float(ep[-n:, 1].mean())


def auc(curve, grid) -> float:
    """Normalised area under a return curve: its average height over ``grid`` (trapezoids; NaNs count as 0).

    Explained in chapters/scorer/02_experiments.md.
    """
    y, x = np.nan_to_num(np.asarray(curve, dtype=float)), np.asarray(grid, dtype=float)
    if y.shape != x.shape or x.size < 2:
        raise ValueError(f"curve and grid must be 1-D of the same length >= 2, got {y.shape} and {x.shape}")
    return float(np.trapezoid(y, x) / (x[-1] - x[0]))


def greedy_rollouts(net, env_id: str, seeds, episodes: int = 8, gamma: float = 0.99, max_steps: int = 500,
                    seed_offset: int = 10_000) -> dict:
    """Run each group's greedy policy for ``episodes`` episodes; compare Q at the start state with the return.

    Explained in chapters/scorer/02_experiments.md. Returns arrays (G, episodes): ``q0`` = max_a Q(s_0, a), ``mc`` =
    the discounted Monte-Carlo return of the episode, ``ret`` = its undiscounted return. Value bias is q0 - mc. The
    evaluation environments are seeded with ``seed + seed_offset`` so they differ from training.
    """
    check_int("episodes", episodes)
    with thread_limit(1, blas=False):
        return _rollouts(net, env_id, seeds, int(episodes), gamma, max_steps, seed_offset)


def _rollouts(net, env_id, seeds, episodes, gamma, max_steps, seed_offset) -> dict:
    seeds = [int(s) + seed_offset for s in np.atleast_1d(seeds)]
    envs = GroupedEnvs(env_id, seeds, int(episodes))
    if len(seeds) != net.G:
        raise ValueError(f"net has {net.G} groups but {len(seeds)} seeds were given")
    obs = envs.reset()
    G, E = net.G, int(episodes)
    alive = np.ones((G, E), dtype=bool)
    mc, ret, disc = np.zeros((G, E)), np.zeros((G, E)), np.ones((G, E))
    q0 = None
    for _ in range(max_steps):
        with torch.no_grad():
            q = net.q_values(torch.from_numpy(obs)).numpy()
        if q0 is None:
            q0 = q.max(-1)
        st = envs.step(q.argmax(-1))
        live = alive & st.valid
        mc += np.where(live, disc * st.reward, 0.0)
        ret += np.where(live, st.reward, 0.0)
        disc *= gamma
        alive &= ~(st.terminated | st.truncated)
        obs = st.obs
        if not alive.any():
            break
    envs.close()
    return {"q0": q0, "mc": mc, "ret": ret}
