"""Batched greedy rollouts of the DRC (or a random policy) that record pushes and, optionally, hidden states.

Explained in chapters/sokoban-planning/02_experiments.md. Finished levels leave the batch, so a rollout costs what its
live levels cost. `hidden[t, b]` is the state (D, C, H, W) after the last tick of step t, recorded for live steps;
`pushes` lists (step, level, square the box left, direction) for every push.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..common import check_choice, check_int
from .game import SokobanBatch
from .drc import DRC

__all__ = ["Rollout", "rollout", "first_step_ticks"]


@dataclass
class Rollout:
    """What a rollout saw: `solved` and `steps` (B,), `live` (T, B) (level unfinished at the start of step t),
    `pushes` (P, 4) int array of (step, level, square, direction), `actions` (T, B) (-1 where not live), and
    `hidden` (T, B, D, C, H, W) float32 or None.

    Explained in chapters/sokoban-planning/02_experiments.md.
    """

    solved: np.ndarray
    steps: np.ndarray
    live: np.ndarray
    pushes: np.ndarray
    actions: np.ndarray
    hidden: np.ndarray | None

    @property
    def solve_rate(self) -> float:
        """Fraction of levels solved."""
        return float(self.solved.mean())


def _check_rollout(model, policy: str, actions, max_steps: int, record: bool) -> int:
    """The arguments of `rollout` that must agree, checked with a clear error; returns max_steps as an int."""
    check_choice("policy", policy, ("greedy", "random", "replay"))
    if (policy == "replay") != (actions is not None):
        raise ValueError("actions must be given exactly when policy='replay'")
    max_steps = check_int("max_steps", max_steps)
    if policy == "greedy" and not isinstance(model, DRC):
        raise ValueError("model must be a DRC for policy='greedy'")
    if record and model is None:
        raise ValueError("record=True needs a model")
    return max_steps


def rollout(model: DRC | None, grids, max_steps: int = 30, *, policy: str = "greedy", ablate=None,
            record: bool = False, seed: int = 0, actions=None) -> Rollout:
    """Play every level of `grids` (B, H, W) for at most `max_steps` steps with the DRC's greedy policy
    (`policy="greedy"`), uniformly random actions (`policy="random"`, `model` may be None), or the (T, B) `actions`
    of an earlier rollout (`policy="replay"`: another model watches the same episodes).

    `ablate` is a (D, C) 0/1 array: channels at 0 are zeroed after every tick. Explained in
    chapters/sokoban-planning/02_experiments.md.
    """
    max_steps = _check_rollout(model, policy, actions, max_steps, record)
    grids = np.asarray(grids)
    env = SokobanBatch(grids)
    b = len(env)
    rng = np.random.default_rng(seed)
    mask = None if ablate is None else torch.as_tensor(np.asarray(ablate), dtype=torch.float32)
    if model is not None:
        cfg = model.cfg
        if mask is not None and tuple(mask.shape) != (cfg.layers, cfg.hidden):
            raise ValueError(f"ablate must be ({cfg.layers}, {cfg.hidden}), got {tuple(mask.shape)}")
        state = model.initial_state(b)
        hidden = np.zeros((max_steps, b, cfg.layers, cfg.hidden) + grids.shape[1:], np.float32) if record else None
    else:
        hidden = None
    live_log = np.zeros((max_steps, b), bool)
    act_log = np.full((max_steps, b), -1, dtype=np.int64)
    pushes = []
    live = np.flatnonzero(~env.done)
    with torch.no_grad():
        for t in range(max_steps):
            if len(live) == 0:
                break
            live_log[t, live] = True
            act = np.zeros(b, dtype=np.int64)
            if model is not None:
                logits, state = model.step(torch.from_numpy(env.observe()[live]), state, ablate=mask)
                if record:
                    hidden[t, live] = state[0].permute(1, 0, 2, 3, 4).numpy()
            if policy == "greedy":
                act[live] = logits.argmax(1).numpy()
            elif policy == "random":
                act[live] = rng.integers(0, 4, len(live))
            else:
                act[live] = np.asarray(actions)[t, live]
            act_log[t, live] = act[live]
            env.step(act)
            for i in np.flatnonzero(env.pushed >= 0):
                pushes.append((t, i, env.pushed[i], act[i]))
            keep = np.flatnonzero(~env.done[live])
            if model is not None and len(keep) < len(live):
                k = torch.from_numpy(keep)
                state = (state[0][:, k], state[1][:, k])
            live = live[keep]
    return Rollout(solved=env.done.copy(), steps=env.steps.copy(), live=live_log,
                   pushes=np.array(pushes, dtype=np.int64).reshape(-1, 4), actions=act_log, hidden=hidden)


def first_step_ticks(model: DRC, grids, ticks: int = 9) -> np.ndarray:
    """The hidden state after each of `ticks` ticks on the first observation of every level (the agent thinks
    `ticks` ticks before its first move): (ticks, B, D, C, H, W). Explained in
    chapters/sokoban-planning/02_experiments.md."""
    if not isinstance(model, DRC):
        raise ValueError("model must be a DRC")
    ticks = check_int("ticks", ticks)
    env = SokobanBatch(np.asarray(grids))
    record: list = []
    with torch.no_grad():
        model.step(torch.from_numpy(env.observe()), model.initial_state(len(env)), ticks=ticks, record=record)
    return torch.stack(record).permute(0, 2, 1, 3, 4, 5).numpy()
