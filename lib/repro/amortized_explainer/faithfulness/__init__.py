"""Faithfulness metrics for feature attributions, vectorised in torch over a batch of inputs of any shape.

Explained in chapters/amortized-explainer/01_theory.md, where the ten metrics of *Learning for Highly Faithful
Explainability* (Guo et al., ICLR 2026) are defined and compared. Every metric takes a model (inputs
``(n, *feature_shape)`` to scores ``(n, classes)``), the inputs, an attribution of the same shape (or one value per
group) and a grouping of the features (tabular features, image patches or time segments), and returns one score per
input. Modules:

- :mod:`.perturb`  groups, masks, baselines and batched model evaluation on perturbed copies;
- :mod:`.metrics`  the ten metrics, the classic (squared-error) infidelity, and the table of their directions.
"""
from .perturb import as_groups, group_attributions, perturb, scores_on
from .metrics import (HIGHER_IS_BETTER, METRICS, deletion, evaluate, faithfulness_correlation,
                      faithfulness_estimate, infidelity, infidelity_mse, insertion, irof, mean_ranks,
                      monotonicity_correlation, negative_perturbation, pearson, positive_perturbation,
                      region_perturbation, spearman)

__all__ = ["as_groups", "group_attributions", "perturb", "scores_on", "HIGHER_IS_BETTER", "METRICS", "deletion",
           "evaluate", "faithfulness_correlation", "faithfulness_estimate", "infidelity", "infidelity_mse",
           "insertion", "irof", "mean_ranks", "monotonicity_correlation", "negative_perturbation", "pearson",
           "positive_perturbation", "region_perturbation", "spearman"]
