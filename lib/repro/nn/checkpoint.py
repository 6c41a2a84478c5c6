"""Saving and loading the book's small trained models with their provenance (DESIGN.md §5).

A checkpoint is one `torch.save` file holding the model's config, its state dict and a provenance dict (command,
seed, commit, time...). It loads with `torch.load(weights_only=True)`, so nothing but tensors and plain data is read.
Used by chapters that ship a trained model under data/ (chapters/temporal-sae).
"""
from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import torch

from .transformer import Transformer, TransformerConfig


def current_commit() -> str:
    """The git commit of the working tree, or 'unknown' outside a repository."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def save_checkpoint(model: Transformer, path, **provenance) -> Path:
    """Write `model` with its config and `provenance` (plus commit and UTC time, unless given) to `path`."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model must be a repro.nn.Transformer, got {type(model).__name__}")
    provenance = {"commit": current_commit(),
                  "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  **{k: v if isinstance(v, (int, float, str, bool)) else str(v) for k, v in provenance.items()}}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    torch.save({"config": model.cfg.to_dict(), "state_dict": state, "provenance": provenance}, path)
    return path


def load_checkpoint(path, map_location: str = "cpu") -> tuple[Transformer, dict]:
    """Read a checkpoint written by `save_checkpoint`; returns (model in eval mode, provenance)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} not found; rebuild it with the chapter at scale='full' "
                                f"or restore it from git")
    blob = torch.load(path, map_location=map_location, weights_only=True)
    config = dict(blob["config"])
    if config.get("moe_layers") is not None:
        config["moe_layers"] = tuple(config["moe_layers"])
    model = Transformer(TransformerConfig(**config))
    model.load_state_dict(blob["state_dict"])
    return model.eval(), dict(blob["provenance"])
