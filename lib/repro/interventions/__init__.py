"""Causal interventions on neural representations: the pieces interpretability chapters share.

Used by chapters/causal-divergence/ (today its only user) and meant for the later interpretability chapters.

First explained in chapters/causal-divergence/ (01_theory.md for patching and divergence, 02_experiments.md for
distributed alignment search), a reproduction of Grant, Han, Tartaglini & Potts, "Addressing divergent
representations from causal interventions on neural networks" (ICLR 2026). Modules, one idea each:

- :mod:`.patching`   coordinate (activation) patching and mean-difference patching, on arrays and on torch modules
  through forward hooks;
- :mod:`.das`        distributed alignment search: a learned orthogonal or invertible-linear rotation with a fixed or
  learned (boundless) causal subspace;
- :mod:`.metrics`    interchange-intervention accuracy (IIA);
- :mod:`.divergence` the optimal-transport divergence between intervened and natural states, always beside its
  natural-vs-natural baseline (POT does the transport).
"""
from .das import DAS, ROTATION_KINDS, Rotation
from .divergence import DivergenceResult, divergence_with_baseline, ot_divergence
from .metrics import iia
from .patching import (activation_patch, coordinate_patch, get_activation, mean_difference, mean_difference_patch,
                       patch_output)

__all__ = ["DAS", "ROTATION_KINDS", "Rotation", "DivergenceResult", "divergence_with_baseline", "ot_divergence",
           "iia", "activation_patch", "coordinate_patch", "get_activation", "mean_difference",
           "mean_difference_patch", "patch_output"]
