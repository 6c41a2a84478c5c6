"""The trained black boxes and TimeSeg policies of one seed: made by ``make_models``, shipped under
``data/timeseg/models-seed{seed}.pt`` for the ci build, retrained by the chapter at ``scale="full"``.

Explained in chapters/timeseg/02_experiments.md. PPO with 120 iterations of 256 episodes (80 for the policies other than
the main one) takes a minute or two per policy on one CPU thread, five policies per seed, which is past the ci budget; the file keeps every state dict,
the training logs and its provenance record (command, seed, commit, time), and loads with
``torch.load(weights_only=True)`` (``repro.nn.checkpoint``). ``python -m repro.book ship timeseg [--seed N]`` remakes
the files (``ship``).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..common import check_int, stopwatch
from ..nn.checkpoint import load_shipped, module_state, save_shipped, ship_command
from .agent import SegmentPolicy, TimeSegConfig, train_timeseg
from .blackbox import TCN, accuracy, train_blackbox
from .data import gunpoint, make_dataset

__all__ = ["SETUP", "LAMBDAS", "POLICIES", "MAIN", "SHIPPED_SEEDS", "training_data", "test_data", "make_models",
           "save_models", "load_models", "shipped_path", "ship"]

#: Data and training sizes, the same at every scale (full scale retrains with them at the build's seed).
SETUP = {"length": 100, "n_train": 2000, "bb_epochs": 10, "gunpoint_epochs": 100, "iterations": 120,
         "iterations_other": 80, "episodes": 256}
#: The λ sweep on SeqComb-like series; the other data sets use λ = 0.3.
LAMBDAS = (0.1, 0.3, 1.0)
#: (data set, λ) of every policy trained per seed.
POLICIES = tuple(("seqcomb", lam) for lam in LAMBDAS) + (("lowvar", 0.3), ("gunpoint", 0.3))
#: The policy most claims read: it trains for ``SETUP["iterations"]``, the others for ``SETUP["iterations_other"]``.
MAIN = ("seqcomb", 0.3)
#: The seeds whose models are shipped (development seed 100 was a pilot and is not).
SHIPPED_SEEDS = (0, 1, 2)


def training_data(name: str, seed: int):
    """The series a black box and its policy train on. Explained in chapters/timeseg/02_experiments.md."""
    if name == "gunpoint":
        return gunpoint("train")
    return make_dataset(name, SETUP["n_train"], SETUP["length"], seed)


def test_data(name: str, n: int, seed: int):
    """Test series, drawn with a seed (10 000 + seed) that no training set uses; GunPoint's own test split.

    Explained in chapters/timeseg/02_experiments.md.
    """
    if name == "gunpoint":
        return gunpoint("test")
    return make_dataset(name, check_int("n", n), SETUP["length"], 10_000 + seed)


def _key(name: str, lam: float) -> str:
    return f"{name}-lam{lam:g}"


def make_models(seed: int, progress=None) -> dict:
    """Train the three black boxes and the five policies of ``POLICIES`` at ``seed``; returns
    ``{"blackbox": {name: TCN}, "policy": {"<name>-lam<λ>": SegmentPolicy}, "logs": …, "accuracy": …}``.

    Explained in chapters/timeseg/02_experiments.md.
    """
    seed = check_int("seed", seed, low=0)
    out = {"blackbox": {}, "policy": {}, "logs": {}, "accuracy": {}, "seconds": {}}
    for name in ("seqcomb", "lowvar", "gunpoint"):
        tr = training_data(name, seed)
        epochs = SETUP["gunpoint_epochs"] if name == "gunpoint" else SETUP["bb_epochs"]
        bs = 16 if name == "gunpoint" else 64
        with stopwatch() as watch:
            model, _ = train_blackbox(tr.x, tr.y, tr.n_classes, epochs=epochs, batch_size=bs, seed=seed)
        out["seconds"][f"blackbox-{name}"] = watch.seconds
        te = test_data(name, 500, seed)
        out["blackbox"][name] = model
        out["accuracy"][name] = accuracy(model, te.x, te.y)
    for name, lam in POLICIES:
        its = SETUP["iterations"] if (name, lam) == MAIN else SETUP["iterations_other"]
        cfg = replace(TimeSegConfig(), lam=lam, iterations=its, episodes=SETUP["episodes"])
        pol, _, log = train_timeseg(out["blackbox"][name], training_data(name, seed).x, cfg, seed=seed,
                                    progress=progress)
        out["policy"][_key(name, lam)] = pol
        out["logs"][_key(name, lam)] = log.to_dict()
        out["seconds"][_key(name, lam)] = log.seconds
    return out


def shipped_path(seed: int) -> Path:
    """``data/timeseg/models-seed{seed}.pt``. Explained in chapters/timeseg/02_experiments.md."""
    from .. import DATA_DIR

    return DATA_DIR / "timeseg" / f"models-seed{check_int('seed', seed, low=0)}.pt"


def save_models(models: dict, seed: int, path=None) -> Path:
    """Write ``make_models``' output with its provenance record. Explained in chapters/timeseg/02_experiments.md."""
    contents = {"blackbox": {k: module_state(m) for k, m in models["blackbox"].items()},
                "blackbox_config": {k: m.config for k, m in models["blackbox"].items()},
                "policy": {k: module_state(p) for k, p in models["policy"].items()},
                "logs": models["logs"], "accuracy": models["accuracy"], "seconds": models["seconds"]}
    return save_shipped(Path(path) if path else shipped_path(seed), contents, command=ship_command("timeseg", seed),
                        seed=seed, setup=SETUP, config=TimeSegConfig().to_dict())


def load_models(seed: int, path=None) -> dict:
    """Read a file written by ``save_models``: the same dict as ``make_models`` plus ``provenance``.

    Explained in chapters/timeseg/02_experiments.md.
    """
    path = Path(path) if path else shipped_path(seed)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the ci build ships seeds {', '.join(map(str, SHIPPED_SEEDS))}; "
                                f"run the chapter at scale='full' (it retrains) or `{ship_command('timeseg', seed)}`")
    blob, provenance = load_shipped(path, ship_command("timeseg", seed))
    out = {"blackbox": {}, "policy": {}, "logs": blob["logs"], "accuracy": blob["accuracy"],
           "seconds": blob["seconds"], "provenance": provenance}
    for k, state in blob["blackbox"].items():
        m = TCN(**blob["blackbox_config"][k])
        m.load_state_dict(state)
        out["blackbox"][k] = m.eval()
    hidden = provenance["config"]["hidden"]
    for k, state in blob["policy"].items():
        p = SegmentPolicy(hidden)
        p.load_state_dict(state)
        out["policy"][k] = p.eval()
    return out


def ship(seed: int | None = None) -> list[Path]:
    """Train and write the shipped models of `seed` (default: every seed of ``SHIPPED_SEEDS``); returns the paths.
    ``python -m repro.book ship timeseg [--seed N]`` calls it. Explained in chapters/timeseg/02_experiments.md."""
    seeds = SHIPPED_SEEDS if seed is None else (check_int("seed", seed, low=0),)
    return [save_models(make_models(s), s) for s in seeds]
