"""Summaries of RL runs: return curves, AUC, bootstrap confidence intervals, greedy rollouts for value bias.

Explained in chapters/scorer/02_experiments.md. Curves are computed on a common grid of environment steps, so runs
with different episode lengths can be averaged; confidence intervals are percentile bootstraps over runs (seeds)
from ``scipy.stats.bootstrap``.
"""
from __future__ import annotations

import warnings

import numpy as np
import torch
from scipy import stats

from .dqn import one_thread
from .envs import GroupedEnvs

__all__ = ["return_curve", "last_episodes_mean", "auc", "smooth", "bootstrap_ci", "greedy_rollouts"]


def _episodes(episodes) -> np.ndarray:
    ep = np.asarray(episodes, dtype=float).reshape(-1, 3) if len(episodes) else np.zeros((0, 3))
    if ep.ndim != 2 or ep.shape[1] != 3:
        raise ValueError(f"episodes must be an (n, 3) array of (end step, return, length), got shape {ep.shape}")
    return ep


def return_curve(episodes, grid, window: int = 20) -> np.ndarray:
    """The mean return of the last ``window`` episodes finished by each step of ``grid`` (NaN before the first).

    ``episodes`` is one run's (n, 3) array from :meth:`~repro.rl.envs.GroupedEnvs.episode_table`.
    """
    ep = _episodes(episodes)
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    grid = np.asarray(grid, dtype=float)
    n_done = np.searchsorted(ep[:, 0], grid, side="right")
    csum = np.concatenate([[0.0], np.cumsum(ep[:, 1])])
    lo = np.maximum(n_done - window, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (csum[n_done] - csum[lo]) / (n_done - lo)
    return np.where(n_done > 0, out, np.nan)


def last_episodes_mean(episodes, n: int = 20) -> float:
    """Mean undiscounted return of a run's last ``n`` completed episodes."""
    ep = _episodes(episodes)
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if len(ep) == 0:
        return float("nan")
    return float(ep[-n:, 1].mean())


def auc(curve, grid) -> float:
    """Normalised area under a return curve: its average height over ``grid`` (trapezoids; NaNs count as 0)."""
    y, x = np.nan_to_num(np.asarray(curve, dtype=float)), np.asarray(grid, dtype=float)
    if y.shape != x.shape or x.size < 2:
        raise ValueError(f"curve and grid must be 1-D of the same length >= 2, got {y.shape} and {x.shape}")
    return float(np.trapezoid(y, x) / (x[-1] - x[0]))


def smooth(x, window: int) -> np.ndarray:
    """Moving average over the last ``window`` values along the last axis (shorter at the start)."""
    x = np.asarray(x, dtype=float)
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    c = np.cumsum(np.concatenate([np.zeros(x.shape[:-1] + (1,)), x], axis=-1), axis=-1)
    n = np.arange(1, x.shape[-1] + 1)
    lo = np.maximum(n - window, 0)
    return (c[..., n] - c[..., lo]) / (n - lo)


def bootstrap_ci(samples, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0, axis: int = 0):
    """(mean, low, high) of the mean over ``axis`` (runs), with a percentile bootstrap interval.

    Works on a vector of per-run numbers or, along ``axis``, on per-run curves (then each is an array).
    """
    x = np.asarray(samples, dtype=float)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if x.shape[axis] < 2:
        raise ValueError(f"need at least 2 runs along axis {axis} for a bootstrap, got {x.shape[axis]}")
    mean = x.mean(axis=axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # degenerate resamples (all runs equal) warn; the CI is a point
        res = stats.bootstrap((x,), np.mean, axis=axis, vectorized=True, confidence_level=confidence,
                              n_resamples=n_resamples, method="percentile", rng=np.random.default_rng(seed))
    lo, hi = res.confidence_interval
    return mean, np.asarray(lo) if np.ndim(lo) else float(lo), np.asarray(hi) if np.ndim(hi) else float(hi)


def greedy_rollouts(net, env_id: str, seeds, episodes: int = 8, gamma: float = 0.99, max_steps: int = 500,
                    seed_offset: int = 10_000) -> dict:
    """Run each group's greedy policy for ``episodes`` episodes; compare Q at the start state with the return.

    Explained in chapters/scorer/02_experiments.md. Returns arrays (G, episodes): ``q0`` = max_a Q(s_0, a), ``mc`` =
    the discounted Monte-Carlo return of the episode, ``ret`` = its undiscounted return. Value bias is q0 - mc. The
    evaluation environments are seeded with ``seed + seed_offset`` so they differ from training.
    """
    if not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}")
    with one_thread():
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
