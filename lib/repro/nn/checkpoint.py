"""The book's one way to ship a trained model or a log of runs under data/, with its provenance (DESIGN.md §5).

Explained in chapters/appendix/reproducibility.md. A shipped file holds plain data and tensors (or arrays) and the
provenance record of `repro.common.provenance_record` (command, seed, commit, whether the code differed from that
commit, time...):

- `save_shipped` / `load_shipped`: one `torch.save` file, a dict of tensors and plain data plus ``"provenance"``; it
  loads with `torch.load(weights_only=True)`, so nothing but tensors and plain data is read;
- `save_checkpoint` / `load_checkpoint`: one torch module with its config (``"config"``, ``"state_dict"``), on top
  of the above; `module_from` rebuilds a module from what `load_shipped` read;
- `save_arrays` / `load_arrays`: a dict of numpy arrays as one ``.npz``, the provenance stored as JSON
  (read with ``allow_pickle=False``).

A missing or malformed file raises an error that names the file and the command that remakes it, by default
`ship_command` of the chapter whose ``data/<slug>/`` holds it (``python -m repro.book ship SLUG``).
"""
from __future__ import annotations

import json
import pickle
import re
import zipfile
from pathlib import Path

import numpy as np
import torch

from ..common import provenance_record
from .transformer import Transformer, TransformerConfig

__all__ = ["ship_command", "save_shipped", "load_shipped", "save_arrays", "load_arrays", "module_state",
           "module_from", "save_checkpoint", "load_checkpoint", "PROVENANCE"]

#: The key under which every shipped file keeps its provenance record.
PROVENANCE = "provenance"


def ship_command(slug: str, seed: int | None = None) -> str:
    """The command that remakes chapter `slug`'s shipped files (those of `seed` only, when given).

    Explained in chapters/appendix/reproducibility.md.
    """
    if not isinstance(slug, str) or not slug:
        raise ValueError(f"slug must be a chapter's folder name, got {slug!r}")
    return f"python -m repro.book ship {slug}" + ("" if seed is None else f" --seed {int(seed)}")


def _remake(path: Path, remake: str | None) -> str:
    """How to remake `path`: with `remake`, or the ship command of the chapter whose data/<slug>/ holds it."""
    parts = Path(path).resolve().parts
    if not remake and "data" in parts[:-1]:
        at = len(parts) - 1 - parts[::-1].index("data")
        remake = ship_command(parts[at + 1]) if at + 2 < len(parts) else None
    return f"remake it with `{remake}`" if remake else "remake it with the code that made it"


def _check_contents(contents) -> dict:
    if not isinstance(contents, dict) or not all(isinstance(k, str) for k in contents):
        raise ValueError(f"contents must be a dict with string keys, got {type(contents).__name__}")
    if PROVENANCE in contents:
        raise ValueError(f"contents must not hold {PROVENANCE!r}: the provenance is made from the keyword arguments")
    return contents


def save_shipped(path, contents: dict, **provenance) -> Path:
    """Write `contents` (tensors and plain data) and the provenance record made from `provenance` (``command``,
    ``seed``…; ``commit``, ``dirty`` and ``time`` are added) to `path` as one torch file; returns the path.

    Explained in chapters/appendix/reproducibility.md.
    """
    blob = {**_check_contents(contents), PROVENANCE: provenance_record(**provenance)}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(blob, path)
    return path


def _missing(path: Path, remake: str | None) -> FileNotFoundError:
    return FileNotFoundError(f"shipped file {path} not found; {_remake(path, remake)} or restore it from git")


def _malformed(path: Path, remake: str | None, why: str) -> ValueError:
    return ValueError(f"shipped file {path} is malformed ({why}); {_remake(path, remake)} or restore it from git")


def _reason(err: Exception) -> str:
    """The gist of a torch.load error in one line (torch's own message runs to a paragraph)."""
    text = str(err)
    if "WeightsUnpickler error:" in text:
        text = text.split("WeightsUnpickler error:", 1)[1]
    line = " ".join(re.split(r"Please use|Re-running|Check the documentation", text)[0].split())
    return line[:200] or type(err).__name__


def load_shipped(path, remake: str | None = None, map_location: str = "cpu") -> tuple[dict, dict]:
    """Read a file written by `save_shipped` with ``torch.load(weights_only=True)``: (contents, provenance).

    Explained in chapters/appendix/reproducibility.md. A missing file raises FileNotFoundError, one that is not such
    a file ValueError; both name the file and the command that remakes it (`remake`, by default the ship command of
    the chapter whose data/<slug>/ holds it).
    """
    path = Path(path)
    if not path.is_file():
        raise _missing(path, remake)
    try:
        blob = torch.load(path, map_location=map_location, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError, ValueError) as err:
        raise _malformed(path, remake, f"torch.load(weights_only=True) cannot read it: {_reason(err)}") from err
    if not isinstance(blob, dict) or not isinstance(blob.get(PROVENANCE), dict):
        raise _malformed(path, remake, f"no {PROVENANCE!r} record")
    contents = {k: v for k, v in blob.items() if k != PROVENANCE}
    return contents, dict(blob[PROVENANCE])


def save_arrays(path, arrays: dict, **provenance) -> Path:
    """Write `arrays` ({name: numpy array}) to `path` as one compressed ``.npz`` with the provenance record made from
    `provenance` stored as JSON; returns the path.

    Explained in chapters/appendix/reproducibility.md.
    """
    arrays = {k: np.asarray(v) for k, v in _check_contents(arrays).items()}
    if any(v.dtype == object for v in arrays.values()):
        raise ValueError("arrays must be numeric or text: an object array would need pickle to load")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **{PROVENANCE: np.array(json.dumps(provenance_record(**provenance)))}, **arrays)
    return path


def load_arrays(path, remake: str | None = None) -> tuple[dict, dict]:
    """Read a file written by `save_arrays` (``allow_pickle=False``): ({name: array}, provenance).

    Explained in chapters/appendix/reproducibility.md. Errors as in `load_shipped`.
    """
    path = Path(path)
    if not path.is_file():
        raise _missing(path, remake)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        raise _malformed(path, remake, f"not a readable .npz: {err}") from err
    try:
        record = json.loads(str(arrays.pop(PROVENANCE)))
    except (KeyError, json.JSONDecodeError) as err:
        raise _malformed(path, remake, f"no JSON {PROVENANCE!r} record") from err
    if not isinstance(record, dict):
        raise _malformed(path, remake, f"the {PROVENANCE!r} record is not a JSON object")
    return arrays, record


def module_state(module: torch.nn.Module, dtype: torch.dtype | None = None) -> dict:
    """The state dict of `module` as detached CPU copies (cast to `dtype` when given, e.g. ``torch.float16`` to
    halve a file). Explained in chapters/appendix/reproducibility.md."""
    if not isinstance(module, torch.nn.Module):
        raise ValueError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    return {k: v.detach().cpu().to(dtype or v.dtype).clone() for k, v in module.state_dict().items()}


def _config_of(model: torch.nn.Module) -> dict:
    """The config a module was built from: ``model.cfg.to_dict()`` or ``dict(model.config)``."""
    if hasattr(getattr(model, "cfg", None), "to_dict"):
        return model.cfg.to_dict()
    if isinstance(getattr(model, "config", None), dict):
        return dict(model.config)
    raise ValueError(f"{type(model).__name__} has neither .cfg.to_dict() nor a .config dict: pass config=")


def save_checkpoint(model: torch.nn.Module, path, config: dict | None = None, extra: dict | None = None,
                    **provenance) -> Path:
    """Write `model` (its ``"config"``, by default ``model.cfg.to_dict()``, and its ``"state_dict"``), the entries of
    `extra` (a training log…) and its provenance record (`provenance` plus commit, dirty flag and UTC time) to `path`.

    Explained in chapters/temporal-sae/02_experiments.md and chapters/appendix/reproducibility.md.
    """
    extra = dict(extra or {})
    if {"config", "state_dict"} & set(extra):
        raise ValueError("extra must not hold 'config' or 'state_dict': they are the model's own")
    contents = {"config": dict(config) if config is not None else _config_of(model),
                "state_dict": module_state(model), **extra}
    return save_shipped(path, contents, **provenance)


def _transformer(config: dict) -> Transformer:
    config = dict(config)
    if config.get("moe_layers") is not None:
        config["moe_layers"] = tuple(config["moe_layers"])
    return Transformer(TransformerConfig(**config))


def module_from(contents: dict, build=None) -> torch.nn.Module:
    """The module a checkpoint holds, from what `load_shipped` read: ``build(config)`` (a `repro.nn.Transformer` by
    default) with the stored state dict, in eval mode. Explained in chapters/appendix/reproducibility.md."""
    model = (build or _transformer)(dict(contents["config"]))
    model.load_state_dict(contents["state_dict"])
    return model.eval()


def load_checkpoint(path, map_location: str = "cpu", build=None, remake: str | None = None):
    """Read a checkpoint written by `save_checkpoint`: (model in eval mode, provenance). ``build(config)`` makes the
    empty module (a `repro.nn.Transformer` by default); errors as in `load_shipped`.

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    contents, record = load_shipped(path, remake, map_location)
    if "config" not in contents or "state_dict" not in contents:
        raise _malformed(Path(path), remake, "no 'config' and 'state_dict': not a checkpoint of one module")
    return module_from(contents, build), record
