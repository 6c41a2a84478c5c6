"""The unified sample: one JSON line per clip, whatever its source dataset, as in the paper's JSONL index.

Explained in chapters/behavior-atlas/01_unification.md. Fields (after the research brief's reading of the authors'
repository): `problem` (the prompt), `answer` (the ground truth word), `texts`, `audios`, `videos` (media paths; here
references `<file>.npz#<array>/<row>` into one feature file per dataset and split), `modality_signature` (e.g.
`text_audio`), `ext_audio_feats` (the descriptor, when the clip has audio), `dataset`, `task` and `class_label` (the
global index). `write_atlas` writes an atlas as index files plus feature files; `read_atlas` reads it back.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .generator import MODALITIES, SPEC, Split
from .labels import GLOBAL_CLASSES

FIELDS = ("problem", "answer", "texts", "audios", "videos", "modality_signature", "ext_audio_feats", "dataset",
          "task", "class_label")
_MEDIA = {"text": "texts", "audio": "audios", "visual": "videos"}


def validate_record(rec: dict, label_map: dict) -> dict:
    """`rec` if it is a valid unified sample under `label_map`; else ValueError naming the bad field
    (chapters/behavior-atlas/01_unification.md)."""
    if not isinstance(rec, dict):
        raise ValueError(f"rec must be a dict, got {type(rec).__name__}")
    missing = [f for f in FIELDS if f not in rec]
    if missing:
        raise ValueError(f"rec lacks fields {missing}")
    if rec["dataset"] not in label_map:
        raise ValueError(f"rec['dataset'] {rec['dataset']!r} is not in the label map")
    if label_map[rec["dataset"]].get(rec["answer"]) != rec["class_label"]:
        raise ValueError(f"rec['class_label'] {rec['class_label']!r} is not the global index of answer "
                         f"{rec['answer']!r} in {rec['dataset']}")
    present = [m for m in MODALITIES if rec[_MEDIA[m]]]
    if not present or rec["modality_signature"] != "_".join(present):
        raise ValueError(f"rec['modality_signature'] {rec['modality_signature']!r} does not list its media {present}")
    if rec["task"] != SPEC[rec["dataset"]].task:
        raise ValueError(f"rec['task'] {rec['task']!r} is not the task of {rec['dataset']}")
    return rec


def records(name: str, split: str, s: Split, label_map: dict) -> list:
    """The unified samples of one split of dataset `name` (chapters/behavior-atlas/01_unification.md)."""
    if name not in SPEC:
        raise ValueError(f"name must be one of {list(SPEC)}, got {name!r}")
    spec, file = SPEC[name], f"{name}/{split}.npz"
    out = []
    for i in range(len(s)):
        present = [m for k, m in enumerate(MODALITIES) if s.mask[i, k] > 0]
        word = spec.words[int(s.y[i])]
        rec = {"problem": f"<{'><'.join(present)}> What is the {spec.domain} of the person in this clip? "
                          f"Options: {', '.join(spec.words)}.",
               "answer": word, **{_MEDIA[m]: ([f"{file}#{m}/{i}"] if m in present else []) for m in MODALITIES},
               "modality_signature": "_".join(present),
               "ext_audio_feats": f"{file}#desc/{i}" if s.desc_mask[i] > 0 else None,
               "dataset": name, "task": spec.task, "class_label": label_map[name][word]}
        out.append(validate_record(rec, label_map))
    return out


def write_jsonl(recs: list, path, label_map: dict) -> Path:
    """Write validated records, one JSON object a line (chapters/behavior-atlas/01_unification.md)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for rec in recs:
            f.write(json.dumps(validate_record(rec, label_map)) + "\n")
    return path


def read_jsonl(path, label_map: dict) -> list:
    """Read and validate the records of a JSONL index (chapters/behavior-atlas/01_unification.md)."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"path {str(path)!r} does not exist")
    return [validate_record(json.loads(line), label_map) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def write_atlas(atlas, root) -> dict:
    """Write every split as `<root>/<dataset>/<split>.npz` (features) and `<root>/<split>.jsonl` (the index of all
    datasets together); returns {split: index path} (chapters/behavior-atlas/01_unification.md)."""
    root = Path(root)
    index = {"train": [], "test": []}
    for name, splits in atlas.splits.items():
        for split, s in splits.items():
            (root / name).mkdir(parents=True, exist_ok=True)
            np.savez(root / name / f"{split}.npz", **{m: s.x[:, k] for k, m in enumerate(MODALITIES)}, desc=s.desc)
            index[split] += records(name, split, s, atlas.label_map)
    return {split: write_jsonl(recs, root / f"{split}.jsonl", atlas.label_map) for split, recs in index.items()}


def read_atlas(root, split: str, label_map: dict) -> dict:
    """Read an index back into arrays {dataset: (x, mask, desc, y_global)} by following each record's paths
    (chapters/behavior-atlas/01_unification.md)."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root, files, out = Path(root), {}, {}
    for rec in read_jsonl(root / f"{split}.jsonl", label_map):
        x = np.zeros((len(MODALITIES), 0), np.float32)
        rows, mask = [], []
        for m in MODALITIES:
            ref = rec[_MEDIA[m]]
            if ref:
                file, key = ref[0].split("#")
                arr, i = key.split("/")
                data = files.setdefault(file, np.load(root / file))
                rows.append(data[arr][int(i)])
                mask.append(1.0)
            else:
                rows.append(None)
                mask.append(0.0)
        width = next(r.shape[0] for r in rows if r is not None)
        x = np.stack([r if r is not None else np.zeros(width, np.float32) for r in rows])
        if rec["ext_audio_feats"]:
            file, key = rec["ext_audio_feats"].split("#")
            desc = files.setdefault(file, np.load(root / file))["desc"][int(key.split("/")[1])]
        else:
            desc = np.zeros(2, np.float32)
        out.setdefault(rec["dataset"], []).append((x, np.array(mask, np.float32), desc, rec["class_label"]))
    return {d: tuple(np.stack(c) for c in zip(*v)) for d, v in out.items()}
