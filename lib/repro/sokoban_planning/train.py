"""Behaviour cloning of the BFS solver with DAgger-style relabelling, and saving/loading the trained DRC.

Explained in chapters/sokoban-planning/02_experiments.md. Each iteration rolls a batch of training levels out to the
end (or `max_steps`): at every live step the solver's table gives the optimal action of the state the agent is in,
the loss is the cross-entropy of the DRC's policy against it, and the action actually taken is the solver's with
probability beta and otherwise a sample of the agent's own policy. beta is 1 for the first half of
`beta_fraction` of training, then falls linearly to 0 at `beta_fraction`. So early batches are pure behaviour
cloning on solver trajectories, and later ones relabel the states the agent itself visits (DAgger, Ross et al.
2011). States from which no solution exists are not labelled. The learning rate follows a cosine from `lr` to
`lr / 10`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..common import check_int, check_positive, stopwatch
from ..nn.checkpoint import load_shipped, module_from, save_checkpoint, ship_command
from .game import SokobanBatch, parse_level, solve_table
from .drc import DRC, DRCConfig

__all__ = ["TrainConfig", "solver_tables", "expert_actions", "train_bc", "save_agent", "load_agent"]


@dataclass(frozen=True)
class TrainConfig:
    """Behaviour-cloning settings: iterations, levels per batch, episode cap, Adam learning rate, the fraction of
    training by which beta has fallen to 0 (module docstring), gradient clip and seed. Explained in
    chapters/sokoban-planning/02_experiments.md."""

    iterations: int = 1500
    batch: int = 64
    max_steps: int = 30
    lr: float = 1e-3
    beta_fraction: float = 0.5
    clip: float = 1.0
    seed: int = 0


def solver_tables(grids) -> list:
    """One `repro.sokoban_planning.game.SolveTable` per level of `grids` (N, H, W). Explained in
    chapters/sokoban-planning/02_experiments.md."""
    return [solve_table(parse_level(g)) for g in np.asarray(grids)]


def expert_actions(env: SokobanBatch, tables) -> np.ndarray:
    """(B,) optimal action of each level's current state from its table, -1 where the state is dead or done.

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    if len(tables) != len(env):
        raise ValueError(f"tables must have one table per level ({len(env)}), got {len(tables)}")
    players, masks = env.player_index(), env.box_masks()
    out = np.array([t.lookup(p, m)[1] for t, p, m in zip(tables, players, masks)], dtype=np.int64)
    out[env.done] = -1
    return out


def train_bc(model: DRC, grids, tables, cfg: TrainConfig = TrainConfig(), progress=None) -> dict:
    """Train `model` in place by behaviour cloning with DAgger relabelling on levels `grids` with their `tables`.

    Returns a log: per iteration the loss, the accuracy on labelled steps, beta and the batch's solve rate, plus
    the seconds taken. `progress`, if given, wraps the iteration range (a tqdm-like callable). Explained in
    chapters/sokoban-planning/02_experiments.md.
    """
    if not isinstance(model, DRC):
        raise ValueError(f"model must be a DRC, got {type(model).__name__}")
    grids = np.asarray(grids)
    if len(tables) != len(grids):
        raise ValueError("tables must have one table per level of grids")
    check_int("iterations", cfg.iterations)
    check_positive("lr", cfg.lr)
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: 0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * min(i, cfg.iterations) / cfg.iterations)))
    log = {k: [] for k in ("loss", "accuracy", "beta", "solved")}
    with stopwatch() as watch:
        steps = range(cfg.iterations) if progress is None else progress(range(cfg.iterations))
        model.train()
        for it in steps:
            beta = float(np.clip(2.0 - 2.0 * it / max(1.0, cfg.beta_fraction * cfg.iterations), 0.0, 1.0))
            idx = rng.choice(len(grids), cfg.batch, replace=False)
            env = SokobanBatch(grids[idx])
            losses, correct, count = _dagger_batch(model, env, [tables[i] for i in idx], cfg, beta, rng)
            loss = torch.stack(losses).sum() / max(count, 1)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            opt.step()
            sched.step()
            log["loss"].append(float(loss.detach()))
            log["accuracy"].append(correct / max(count, 1))
            log["beta"].append(beta)
            log["solved"].append(float(env.done.mean()))
        model.eval()
    log["seconds"] = watch.seconds
    return log


def _dagger_batch(model: DRC, env: SokobanBatch, tabs: list, cfg: TrainConfig, beta: float, rng) -> tuple:
    """Play one batch of levels to the end (or cfg.max_steps): at each step the expert's action is the label, and the
    move taken is the expert's with probability `beta`, else the agent's own sample (DAgger). Only levels not yet
    finished are computed. Returns (per-step summed losses, correct labels, labelled steps)."""
    state = model.initial_state(cfg.batch)
    live = np.arange(cfg.batch)
    losses, correct, count = [], 0, 0
    for _ in range(cfg.max_steps):
        logits, state = model.step(torch.from_numpy(env.observe()[live]), state)
        expert = expert_actions(env, tabs)[live]
        valid = expert >= 0
        if valid.any():
            v = torch.from_numpy(np.flatnonzero(valid))
            target = torch.from_numpy(expert[valid])
            losses.append(F.cross_entropy(logits[v], target, reduction="sum"))
            correct += int((logits[v].argmax(1) == target).sum())
            count += int(valid.sum())
        with torch.no_grad():
            own = torch.multinomial(torch.softmax(logits, 1), 1)[:, 0].numpy()
        act = np.zeros(cfg.batch, dtype=np.int64)
        act[live] = np.where(valid & (rng.random(len(live)) < beta), expert, own)
        env.step(act)
        keep = np.flatnonzero(~env.done[live])
        if len(keep) == 0:
            break
        if len(keep) < len(live):
            k = torch.from_numpy(keep)
            state = (state[0][:, k], state[1][:, k])
            live = live[keep]
    return losses, correct, count


def save_agent(model: DRC, path, train_cfg: TrainConfig, log: dict | None = None, **provenance) -> Path:
    """Write the DRC's config, weights, training config, a short training log and a provenance record to `path`
    (loads with `torch.load(weights_only=True)`). Explained in chapters/sokoban-planning/02_experiments.md."""
    if not isinstance(model, DRC):
        raise ValueError(f"model must be a DRC, got {type(model).__name__}")
    short = {k: [float(x) for x in v] for k, v in (log or {}).items() if isinstance(v, list)}
    if log and "seconds" in log:
        provenance["train_seconds"] = float(log["seconds"])
    return save_checkpoint(model, path, extra={"log": short}, train=asdict(train_cfg), **provenance)


def load_agent(path) -> tuple[DRC, dict, dict]:
    """Read a file written by `save_agent`: (model in eval mode, provenance, training log).

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    blob, provenance = load_shipped(path, ship_command("sokoban-planning"))
    return module_from(blob, lambda config: DRC(DRCConfig(**config))), provenance, dict(blob["log"])
