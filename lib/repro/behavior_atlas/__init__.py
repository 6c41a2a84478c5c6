"""Human Behavior Atlas in miniature: one sample schema, one global label space, a shared multi-task trunk with
per-dataset heads, and a residual descriptor adapter, tested on synthetic datasets with known latents.

Explained in chapters/behavior-atlas/ (index.md, 01_unification.md, 02_experiments.md), after *Human Behavior Atlas:
Benchmarking Unified Psychological and Social Behavior Understanding* (Ong et al., ICLR 2026). Modules:

- :mod:`.labels`     domains, global classes, synonyms, the label map and its checks;
- :mod:`.schema`     the unified JSONL sample (problem, answer, modality paths, task, class label);
- :mod:`.metrics`    weighted and macro F1 per dataset, aggregation per task;
- :mod:`.generator`  nine synthetic datasets from valence, arousal, a depressive trait and an incongruity flag;
- :mod:`.model`      stacked encoders, masked fusion, trunk, heads and the descriptor adapter; their training;
- :mod:`.experiment` the chapter's experiment for one seed.
"""
from .labels import DOMAINS, GLOBAL_CLASSES, SYNONYMS, build_label_map, canonical, global_index, label_map_violations
from .metrics import f1, per_class_f1, task_scores
from .generator import (DESCRIPTOR, FEATURES, LABEL_MAP, MODALITIES, N_GLOBAL, SPEC, SPECS, TRAIN_SETS, VOCABULARIES,
                        Atlas, DatasetSpec, Split, global_labels, make_atlas, make_sensors, modality_latents,
                        n_classes, render_split, sample_latents)
from .schema import FIELDS, read_atlas, read_jsonl, records, validate_record, write_atlas, write_jsonl
from .model import (FLAT, K, OFFSETS, SLOTS, Pool, adapt, encode, features, init_params, logits, make_pool, n_parameters, predict, train,
                    train_probes)
from .experiment import SETTINGS, SIZES, Study, run_study, subset, summary_metrics

__all__ = ["DOMAINS", "GLOBAL_CLASSES", "SYNONYMS", "build_label_map", "canonical", "global_index",
           "label_map_violations", "f1", "per_class_f1", "task_scores", "DESCRIPTOR", "FEATURES", "LABEL_MAP",
           "MODALITIES", "N_GLOBAL", "SPEC", "SPECS", "TRAIN_SETS", "VOCABULARIES", "Atlas", "DatasetSpec", "Split",
           "global_labels", "make_atlas", "make_sensors", "modality_latents", "n_classes", "render_split",
           "sample_latents", "FIELDS", "read_atlas", "read_jsonl", "records", "validate_record", "write_atlas",
           "write_jsonl", "FLAT", "K", "OFFSETS", "SLOTS", "Pool", "adapt", "encode", "features", "init_params", "logits", "make_pool",
           "n_parameters", "predict", "train", "train_probes", "SETTINGS", "SIZES", "Study", "run_study", "subset",
           "summary_metrics"]
