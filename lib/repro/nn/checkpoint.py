"""Saving and loading the book's small trained models with their provenance (DESIGN.md §5).

A checkpoint is one `torch.save` file holding the model's config, its state dict and a provenance dict (command,
seed, commit, time...). It loads with `torch.load(weights_only=True)`, so nothing but tensors and plain data is read.
The provenance is the book's one record for shipped files, `repro.common.provenance_record`.
Used by chapters that ship a trained model under data/ (chapters/temporal-sae/).
"""
from __future__ import annotations

from pathlib import Path

import torch

from ..common import provenance_record
from .transformer import Transformer, TransformerConfig


def save_checkpoint(model: Transformer, path, **provenance) -> Path:
    """Write `model` with its config and its provenance record (`provenance` plus commit and UTC time, unless given)
    to `path`. Explained in chapters/temporal-sae/02_experiments.md."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model must be a repro.nn.Transformer, got {type(model).__name__}")
    provenance = provenance_record(**provenance)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    torch.save({"config": model.cfg.to_dict(), "state_dict": state, "provenance": provenance}, path)
    return path


def load_checkpoint(path, map_location: str = "cpu") -> tuple[Transformer, dict]:
    """Read a checkpoint written by `save_checkpoint`; returns (model in eval mode, provenance).

    Explained in chapters/temporal-sae/02_experiments.md.
    """
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
