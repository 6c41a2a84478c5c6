"""Divergent representations from causal interventions (Grant, Han, Tartaglini & Potts, ICLR 2026): the intervention
tools and the chapter's experiments with them.

Explained in chapters/causal-divergence/ (01_theory.md for patching, divergence and the hidden-pathway circuit;
02_experiments.md for distributed alignment search, the toy causal task and the counterfactual-latent loss). Modules,
one idea each:

- :mod:`.patching`    coordinate (activation) patching and mean-difference patching, on arrays and on torch modules
  through forward hooks;
- :mod:`.das`         distributed alignment search: a learned orthogonal or invertible-linear rotation with a fixed or
  learned (boundless) causal subspace;
- :mod:`.metrics`     interchange-intervention accuracy (IIA);
- :mod:`.divergence`  the optimal-transport divergence between intervened and natural states, always beside its
  natural-vs-natural baseline (POT does the transport);
- :mod:`.experiments` the hidden-pathway circuit and its null space, the toy causal task and its classifier, DAS
  training with the action and CL losses, and the pyvene peer.
"""
from .das import DAS, ROTATION_KINDS, Rotation
from .divergence import DivergenceResult, divergence_with_baseline, ot_divergence
from .metrics import iia
from .patching import (activation_patch, coordinate_patch, get_activation, mean_difference, mean_difference_patch,
                       patch_output)
from .experiments import (ALL_SPLITS, CIRCUIT_B, CIRCUIT_W, CL_SPACES, CLASSES, DISTRIBUTIONS, HEADROOM_SPLITS, LOSSES,
                          NATURAL_A, NATURAL_B, SPLITS, DASRun, ToyTask, causal_divergence, circuit,
                          circuit_null_direction, cl_loss, cl_loss_subspace, interchange_pairs, intervene,
                          make_classifier, make_toy_task, random_coordinate_patches, sample_distribution,
                          train_classifier, train_das, train_pyvene_das)

__all__ = ["DAS", "ROTATION_KINDS", "Rotation", "DivergenceResult", "divergence_with_baseline",
           "ot_divergence", "iia", "activation_patch", "coordinate_patch", "get_activation", "mean_difference",
           "mean_difference_patch", "patch_output",
           "ALL_SPLITS", "CIRCUIT_B", "CIRCUIT_W", "CL_SPACES", "CLASSES", "DISTRIBUTIONS", "HEADROOM_SPLITS", "LOSSES",
           "NATURAL_A", "NATURAL_B", "SPLITS", "DASRun", "ToyTask", "causal_divergence", "circuit",
           "circuit_null_direction", "cl_loss", "cl_loss_subspace", "interchange_pairs", "intervene",
           "make_classifier", "make_toy_task", "random_coordinate_patches", "sample_distribution",
           "train_classifier", "train_das", "train_pyvene_das"]
