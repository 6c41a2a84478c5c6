"""The chapter's shipped files and settings: the level pool, the trained agent, and the scale of each analysis.

Explained in chapters/sokoban-planning/02_experiments.md. `make_levels` writes `data/sokoban-planning/levels.npz`
(training and test pools from one generator seed, with the solver's optimal lengths); `make_agent` trains the DRC on
the training pool by behaviour cloning with DAgger relabelling and writes `data/sokoban-planning/agent.pt`; `ship`
(`python -m repro.book ship sokoban-planning`) makes both. Both scales of the chapter load the shipped agent:
retraining costs more CPU time than the chapter's full-scale budget.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .. import DATA_DIR
from ..common import check_int
from ..nn.checkpoint import load_arrays, save_arrays, ship_command
from .game import generate_levels
from .drc import DRC, DRCConfig
from .train import TrainConfig, save_agent, solver_tables, train_bc

__all__ = ["LEVELS_PATH", "AGENT_PATH", "AGENT_CONFIG", "TRAIN_CONFIG", "LEVEL_SEED", "SETTINGS", "make_levels",
           "load_levels", "held_out", "make_agent", "ship"]

LEVELS_PATH = DATA_DIR / "sokoban-planning" / "levels.npz"
AGENT_PATH = DATA_DIR / "sokoban-planning" / "agent.pt"
LEVEL_SEED = 1000                     # the pools' generator seed (train and test pools are disjoint draws)
AGENT_CONFIG = DRCConfig(size=7, enc=8, hidden=8, layers=3, ticks=3, head=128)
TRAIN_CONFIG = TrainConfig(iterations=1000, batch=32, max_steps=30, lr=3e-3, beta_fraction=0.8, seed=7)
SETTINGS = {
    # held-out levels per seed, episode cap, random-channel draws, tick count of the plan-growth analysis
    "ci": {"n_test": 150, "max_steps": 30, "random_draws": 3, "growth_ticks": 9, "smoke_iterations": 4},
    "full": {"n_test": 450, "max_steps": 30, "random_draws": 5, "growth_ticks": 9, "smoke_iterations": 4},
}


def make_levels(n_train: int = 3000, n_test: int = 1000, seed: int = LEVEL_SEED, path=LEVELS_PATH) -> Path:
    """Generate the training and test pools (7x7, two boxes; no test level repeats a training level or another
    test level) and save them with their optimal lengths and a provenance record. Explained in chapters/sokoban-planning/02_experiments.md."""
    n_train, n_test = check_int("n_train", n_train), check_int("n_test", n_test)
    t0 = time.perf_counter()
    grids, lengths = generate_levels(n_train + n_test + n_test // 5, seed=seed)
    seen = {g.tobytes() for g in grids[:n_train]}
    test = [i for i in range(n_train, len(grids)) if grids[i].tobytes() not in seen
            and not seen.add(grids[i].tobytes())][:n_test]          # test levels: unseen in training, distinct
    if len(test) < n_test:
        raise ValueError("too many repeated levels; lower n_test")
    grids = np.concatenate([grids[:n_train], grids[test]])
    lengths = np.concatenate([lengths[:n_train], lengths[test]])
    arrays = {"train": grids[:n_train], "test": grids[n_train:], "train_lengths": lengths[:n_train],
              "test_lengths": lengths[n_train:]}
    return save_arrays(path, arrays, command=ship_command("sokoban-planning"), seed=seed, n_train=n_train,
                       n_test=n_test, seconds=round(time.perf_counter() - t0, 1))


def load_levels(path=LEVELS_PATH) -> dict:
    """The shipped pools: {"train", "test": (N, 7, 7) uint8 grids, "train_lengths", "test_lengths", "provenance"}.

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    arrays, provenance = load_arrays(path, ship_command("sokoban-planning"))
    return {**{k: arrays[k] for k in ("train", "test", "train_lengths", "test_lengths")}, "provenance": provenance}


def held_out(levels: dict, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` test levels drawn without replacement by `seed` (the analyses' seed): (grids, optimal lengths).

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    n = check_int("n", n)
    if n > len(levels["test"]):
        raise ValueError(f"n must be at most the test pool's {len(levels['test'])} levels, got {n}")
    idx = np.sort(np.random.default_rng(check_int("seed", seed, low=0)).choice(len(levels["test"]), n,
                                                                                replace=False))
    return levels["test"][idx], levels["test_lengths"][idx]


def make_agent(levels: dict, path=AGENT_PATH, cfg: DRCConfig = AGENT_CONFIG, train_cfg: TrainConfig = TRAIN_CONFIG,
               progress=None) -> tuple[DRC, dict]:
    """Train the chapter's agent on the training pool and save it (with provenance) to `path`: (model, log).

    Explained in chapters/sokoban-planning/02_experiments.md.
    """
    import torch

    torch.manual_seed(train_cfg.seed)
    model = DRC(cfg)
    tables = solver_tables(levels["train"])
    log = train_bc(model, levels["train"], tables, train_cfg, progress=progress)
    save_agent(model, path, train_cfg, log, command=ship_command("sokoban-planning"), seed=train_cfg.seed,
               level_seed=levels["provenance"].get("seed"), threads=torch.get_num_threads())
    return model, log


def ship(seed: int | None = None) -> list[Path]:
    """Make the shipped level pools and then train the shipped agent on them (`make_levels`, `make_agent`); returns
    the paths. The chapter ships one agent (training seed ``TRAIN_CONFIG.seed``), so `seed` must be None.
    ``python -m repro.book ship sokoban-planning`` calls it. Explained in chapters/sokoban-planning/02_experiments.md.
    """
    if seed is not None:
        raise ValueError(f"sokoban-planning ships one level pool and one agent (training seed {TRAIN_CONFIG.seed}), "
                         f"not one per seed: run it without --seed")
    levels_path = make_levels()
    make_agent(load_levels(levels_path))
    return [levels_path, AGENT_PATH]
