"""Behavior Learning (Ma, Liang & Li, ICLR 2026) in miniature: the BL block, the deep model, the Gibbs model's
cross-entropy and denoising-score-matching losses, the amortized predictor, and the experiments beside the authors'
package ``blnetwork``.

Explained in chapters/behavior-learning/ (index.md, 01_theory.md, 02_experiments.md). Modules, one idea each:

- :mod:`.model`       the block B(z), the deep utility U(x, y), logits by enumerating labels, CE and DSM losses;
- :mod:`.train`       our training loops (CE, DSM, amortized predictor), the MLP baseline, the blnetwork runs;
- :mod:`.formula`     the exported utility evaluated as a formula from rounded coefficients;
- :mod:`.experiment`  the data sets, splits and the chapter's tables.
"""
from .model import BLModel, ce_loss, dsm_loss, load_blnetwork_state
from .formula import formula_scores, rounded_parameters
from .train import (Config, MLP, fit_amortized, fit_blnetwork_classifier, fit_classifier, fit_dsm, fit_mlp,
                    accuracy)
from .experiment import (DATASETS, SIZES, bl_term_study, classification_study, load_split, regression_study,
                         synthetic_ump)

__all__ = ["BLModel", "ce_loss", "dsm_loss", "load_blnetwork_state", "formula_scores", "rounded_parameters",
           "Config", "MLP", "fit_amortized", "fit_blnetwork_classifier", "fit_classifier", "fit_dsm", "fit_mlp",
           "accuracy", "DATASETS", "SIZES", "load_split", "synthetic_ump", "classification_study",
           "regression_study", "bl_term_study"]
