"""How not to benchmark a transferability (SITE) metric: a shapes-and-textures world, two model zoos trained at run
time, seven metrics, weighted Kendall tau, static rankers and fidelity.

Explained in chapters/transferability-benchmarks/ (index.md, 01_theory.md, 02_experiments.md), a small
reproduction of the mechanism of Singh, Hess and Vanschoren, *How NOT to benchmark your SITE metric* (ICLR 2026).
Modules, one idea each:

- :mod:`.images`      16x16 shapes and textures, four source tasks and eight target tasks;
- :mod:`.metrics`     LogME, H-score, LEEP, NLEEP, NCE, TransRate, GBC, and two cheap peers (k-NN, a probe on 20%);
- :mod:`.ranking`     weighted Kendall tau, the static rankers, fidelity;
- :mod:`.zoo`         the model families and the two zoos, pre-trained at run time;
- :mod:`.experiment`  ground truth (linear probe at ci, fine-tuning at full) and the tables of the chapter.
"""
from .images import FREQS, ANGLES, SHAPES, SIZE, SOURCES, TARGETS, draw, make_task
from .metrics import (METRICS, gbc, hscore, knn_accuracy, leep, logme, logme_evidence, nce, nleep,
                      probe_subset_accuracy, transrate)
from .ranking import fidelity, pairwise_gaps, rank_matrix, static_history, static_size, tau_w, tau_w_direct
from .zoo import (CNN, FAMILIES, MLP, N_CLASSES, Mixer, PooledCNN, ResNetLite, ZooModel, build, n_params, pretrain,
                  zoo_a_specs, zoo_b_specs)
from .experiment import (PEERS, SIZES, ZooResult, ablation_taus, fidelity_table, finetune_accuracy, probe_accuracy,
                         run_zoo, tau_table)

__all__ = ["FREQS", "ANGLES", "SHAPES", "SIZE", "SOURCES", "TARGETS", "draw", "make_task", "METRICS", "gbc",
           "hscore", "knn_accuracy", "leep", "logme", "logme_evidence", "nce", "nleep", "probe_subset_accuracy",
           "transrate", "fidelity", "pairwise_gaps", "rank_matrix", "static_history", "static_size", "tau_w",
           "tau_w_direct", "CNN", "FAMILIES", "MLP", "N_CLASSES", "Mixer", "PooledCNN", "ResNetLite", "ZooModel",
           "build", "n_params", "pretrain", "zoo_a_specs", "zoo_b_specs", "PEERS", "SIZES", "ZooResult",
           "ablation_taus", "fidelity_table", "finetune_accuracy", "probe_accuracy", "run_zoo", "tau_table"]
