"""The trained models shipped under ``data/neuroadapter/``: the frozen image DDPM (stage 0, one for every seed, as
the paper's Stable Diffusion is one for every subject) and the adapters of each seed (stage 1, plus the two-stage
baseline's feature adapter).

Explained in chapters/neuroadapter/02_experiments.md. ``python -m repro.book ship neuroadapter`` remakes ``unet.pt``
and then every shipped seed's adapters (trained on that U-Net); ``… ship neuroadapter --seed SEED`` remakes
``adapter-seed{SEED}.pt`` only (``ship``). Each file holds half precision state dicts, the training losses and a
provenance record (command, seed, commit, time), and loads with ``torch.load(weights_only=True)``
(``repro.nn.checkpoint``).
"""
from __future__ import annotations

from pathlib import Path

import torch

from ..common import check_int, stopwatch
from ..nn.checkpoint import load_shipped, module_state, save_shipped, ship_command
from .adapter import NeuroAdapter, train_adapter, train_unet
from .cortex import NOISE, VOXELS, Cortex, digit_stimuli
from .unet import TinyUNet, UNetConfig

__all__ = ["SETUP", "SHIPPED_SEEDS", "unet_path", "adapter_path", "make_unet", "save_unet", "load_unet",
           "make_adapters", "save_adapters", "load_adapters", "seed_data", "FEATURES", "ship"]

#: Training sizes, the same at every scale (fixed on development seed 100).
SETUP = {"unet_steps": 5000, "unet_batch": 64, "unet_lr": 2e-3, "unet_seed": 0,
         "adapter_steps": 2500, "adapter_batch": 64, "adapter_lr": 2e-3, "weight_decay": 1e-2,
         "feature_steps": 1000}
#: The seeds whose adapters are shipped (100 is the development seed).
SHIPPED_SEEDS = (0, 1, 2, 100)


def _dir() -> Path:
    from .. import DATA_DIR

    return DATA_DIR / "neuroadapter"


def unet_path() -> Path:
    """``data/neuroadapter/unet.pt``. Explained in chapters/neuroadapter/02_experiments.md."""
    return _dir() / "unet.pt"


def adapter_path(seed: int) -> Path:
    """``data/neuroadapter/adapter-seed{seed}.pt``. Explained in chapters/neuroadapter/02_experiments.md."""
    return _dir() / f"adapter-seed{check_int('seed', seed, low=0)}.pt"


def _full(state: dict) -> dict:
    return {k: v.float() for k, v in state.items()}


def make_unet(steps: int | None = None, progress=None) -> tuple[TinyUNet, list[float]]:
    """Stage 0: a ``TinyUNet`` trained on the training digits (their seed-0 shifts) for ``steps`` (default
    ``SETUP["unet_steps"]``). Explained in chapters/neuroadapter/02_experiments.md.
    """
    steps = check_int("steps", steps if steps is not None else SETUP["unet_steps"])
    torch.manual_seed(SETUP["unet_seed"])
    unet = TinyUNet(UNetConfig())
    tr = digit_stimuli("train", SETUP["unet_seed"])
    losses = train_unet(unet, tr.x, steps, SETUP["unet_batch"], SETUP["unet_lr"], SETUP["unet_seed"], progress=progress)
    return unet.eval(), losses


def save_unet(unet: TinyUNet, losses, seconds: float, path=None) -> Path:
    """Write the stage-0 U-Net with its losses and provenance. Explained in chapters/neuroadapter/02_experiments.md."""
    contents = {"config": dict(unet.config), "state": module_state(unet, torch.float16), "losses": torch.tensor(losses)}
    return save_shipped(Path(path) if path else unet_path(), contents, command=ship_command("neuroadapter"),
                        seed=SETUP["unet_seed"], setup=SETUP, seconds=seconds)


def load_unet(path=None) -> tuple[TinyUNet, dict]:
    """The shipped stage-0 U-Net (eval mode, float32) and ``{"losses", "provenance"}``.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    blob, provenance = load_shipped(Path(path) if path else unet_path(), ship_command("neuroadapter"))
    unet = TinyUNet(UNetConfig(**blob["config"]))
    unet.load_state_dict(_full(blob["state"]))
    return unet.eval().requires_grad_(False), {"losses": blob["losses"].tolist(), "provenance": provenance}



def seed_data(seed: int, n_test: int = 597) -> dict:
    """The data of one seed: training and test stimuli, the fitted cortex, and voxel responses with independent
    noise for training (noise seed ``1000 + seed``) and test (``2000 + seed``) trials.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    seed = check_int("seed", seed, low=0)
    train, test = digit_stimuli("train", seed), digit_stimuli("test", seed, n_test_base=check_int("n_test", n_test))
    cortex = Cortex(seed).fit(train)
    return {"train": train, "test": test, "cortex": cortex, "vox_train": cortex.respond(train, 1000 + seed),
            "vox_test": cortex.respond(test, 2000 + seed)}


def _feature_net(data: dict):
    from .metrics import HeldOutClassifier

    return HeldOutClassifier(data["train"].x, data["train"].y, hidden=FEATURES, seed=1)


#: Width of the feature network of the two-stage baseline (its hidden layer is the intermediate feature space).
FEATURES = 64


def make_adapters(seed: int, unet: TinyUNet, progress=None, steps: int | None = None) -> dict:
    """Stage 1 at ``seed``: the NeuroAdapter trained on (image, voxels) pairs of the seed's cortex, and the two-stage
    baseline's adapter trained on the feature network's features of the same images. Returns
    ``{"adapter", "feature_adapter", "feature_scale", "losses", "feature_losses", "seconds"}``.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    seed = check_int("seed", seed, low=0)
    steps = check_int("steps", steps if steps is not None else SETUP["adapter_steps"])
    data = seed_data(seed, 1)
    with stopwatch() as adapter_watch:
        torch.manual_seed(seed)
        adapter = NeuroAdapter(unet, data["cortex"].n_parcels, VOXELS)
        losses = train_adapter(unet, adapter, data["train"].x, data["vox_train"], steps, SETUP["adapter_batch"],
                               SETUP["adapter_lr"], SETUP["weight_decay"], seed=seed, progress=progress)
    with stopwatch() as feature_watch:
        f = _feature_net(data).features(data["train"].x)
        scale = torch.tensor([f.mean(0).tolist(), (f.std(0) + 1e-6).tolist()])
        fz = ((f - scale[0].numpy()) / scale[1].numpy()).reshape(len(f), 4, FEATURES // 4)
        feat = NeuroAdapter(unet, 4, FEATURES // 4)
        f_steps = max(1, steps * SETUP["feature_steps"] // SETUP["adapter_steps"])
        f_losses = train_adapter(unet, feat, data["train"].x, fz, f_steps, SETUP["adapter_batch"],
                                 SETUP["adapter_lr"], SETUP["weight_decay"], seed=seed, progress=progress)
        adapter.attach(unet)
    return {"adapter": adapter, "feature_adapter": feat, "feature_scale": scale, "losses": losses,
            "feature_losses": f_losses, "seconds": {"adapter": adapter_watch.seconds,
                                                    "feature_adapter": feature_watch.seconds}}


def save_adapters(models: dict, seed: int, path=None) -> Path:
    """Write ``make_adapters``' output with its provenance. Explained in chapters/neuroadapter/02_experiments.md."""
    contents = {"adapter": module_state(models["adapter"], torch.float16),
                "feature_adapter": module_state(models["feature_adapter"], torch.float16),
                "feature_scale": models["feature_scale"], "losses": torch.tensor(models["losses"]),
                "feature_losses": torch.tensor(models["feature_losses"])}
    return save_shipped(Path(path) if path else adapter_path(seed), contents,
                        command=ship_command("neuroadapter", seed), seed=seed, setup=SETUP, noise=NOISE,
                        seconds=models["seconds"])


def load_adapters(seed: int, unet: TinyUNet, path=None) -> dict:
    """Read a file written by ``save_adapters`` (the same dict as ``make_adapters`` plus ``provenance``); a seed
    that was not shipped raises FileNotFoundError naming the shipped seeds and the command that makes one.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    seed = check_int("seed", seed, low=0)
    path = Path(path) if path else adapter_path(seed)
    if not path.is_file():
        have = sorted(int(p.stem.split("seed")[1]) for p in _dir().glob("adapter-seed*.pt"))
        raise FileNotFoundError(f"no shipped adapters for seed {seed} ({path.name}); the shipped seeds are "
                                f"{', '.join(map(str, have)) or 'none'}. Make one with "
                                f"`{ship_command('neuroadapter', seed)}` (a few CPU-minutes) or run the chapter at "
                                f"scale='full', which retrains it")
    blob, provenance = load_shipped(path, ship_command("neuroadapter", seed))
    p = blob["adapter"]["mapper.weight"].shape
    adapter = NeuroAdapter(unet, p[0], p[1])
    adapter.load_state_dict(_full(blob["adapter"]))
    feat = NeuroAdapter(unet, 4, FEATURES // 4)
    feat.load_state_dict(_full(blob["feature_adapter"]))
    return {"adapter": adapter.eval(), "feature_adapter": feat.eval(), "feature_scale": blob["feature_scale"],
            "losses": blob["losses"].tolist(), "feature_losses": blob["feature_losses"].tolist(),
            "seconds": provenance["seconds"], "provenance": provenance}


def ship(seed: int | None = None) -> list[Path]:
    """Write the shipped files: without `seed`, the stage-0 U-Net and then the adapters of every ``SHIPPED_SEEDS``
    (they are trained on that U-Net); with `seed`, that seed's adapters only, on the shipped U-Net. Returns the paths;
    ``python -m repro.book ship neuroadapter [--seed N]`` calls it.
    Explained in chapters/neuroadapter/02_experiments.md.
    """
    paths = []
    if seed is None:
        with stopwatch() as watch:
            unet, losses = make_unet()
        paths.append(save_unet(unet, losses, watch.seconds))
    for s in SHIPPED_SEEDS if seed is None else (check_int("seed", seed, low=0),):
        paths.append(save_adapters(make_adapters(s, load_unet()[0]), s))     # a fresh U-Net: adapters attach to it
    return paths
