"""SpecGD: how spectral gradient descent (Muon's core) learns imbalanced classes at equal rates.

Explained in chapters/specgd/ (index.md, 01_theory.md, 02_experiments.md), a small reproduction of
Vasudeva et al., "How Muon's Spectral Design Benefits Generalization: A Study on Imbalanced Data"
(ICLR 2026, arXiv 2510.22980). Modules, one idea each:

- :mod:`.data`    the orthogonal Gaussian mixture with long-tailed priors (seeded train/val/test);
- :mod:`.updates` the update directions: GD, normalised GD, SpecGD (U V^T), Shampoo without
  accumulation, torch.optim.Muon with momentum 0;
- :mod:`.theory`  closed-form component trajectories a_k(t) and the balanced-accuracy integral;
- :mod:`.train`   the linear model with squared loss, trained over an lr grid at once, and
  best-over-grid early stopping;
- :mod:`.deep`    deep linear models W_L ... W_1 trained layer-wise by GD or SpecGD;
- :mod:`.digits`  long-tailed scikit-learn digits with a small MLP (SGD, Adam, Muon).
"""
from .data import GMMData, class_counts, class_means, long_tailed_priors, make_gmm, moments
from .deep import DEEP_METHODS, init_deep_linear, layer_gradients, learning_times, product, train_deep_linear
from .digits import (DIGIT_OPTIMIZERS, DigitsData, digits_benchmark, long_tailed_digits, make_mlp,
                     make_optimizer, train_digits)
from .theory import (balanced_accuracy_closed_form, components, gd_closed_form, gmm_constants,
                     plug_in_constants, population_moments, prior_sweep, spec_closed_form)
from .train import (TrainResult, balanced_accuracy, best_loss_over_grid, best_over_grid, class_balanced_loss,
                    eval_schedule, lr_schedule, train_linear)
from .updates import (METHODS, direction, gd_direction, make_adam, make_muon, muon_direction, ngd_direction,
                      polar_factor, shampoo_direction, sign_direction, spec_direction)

__all__ = [
    "GMMData", "class_counts", "class_means", "long_tailed_priors", "make_gmm", "moments",
    "METHODS", "direction", "gd_direction", "make_adam", "make_muon", "sign_direction", "muon_direction", "ngd_direction",
    "polar_factor", "shampoo_direction", "spec_direction",
    "balanced_accuracy_closed_form", "components", "gd_closed_form", "gmm_constants",
    "plug_in_constants", "population_moments", "prior_sweep", "spec_closed_form",
    "TrainResult", "balanced_accuracy", "best_loss_over_grid", "best_over_grid", "class_balanced_loss", "eval_schedule", "lr_schedule", "train_linear",
    "DEEP_METHODS", "init_deep_linear", "layer_gradients", "learning_times", "product", "train_deep_linear",
    "DIGIT_OPTIMIZERS", "DigitsData", "digits_benchmark", "long_tailed_digits", "make_mlp",
    "make_optimizer", "train_digits",
]
