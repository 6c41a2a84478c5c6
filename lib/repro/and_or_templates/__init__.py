"""AND-OR templates for composition: a synthetic world with known grammars, max-entropy terminals, block pursuit,
SUM-MAX parsing with term evidence and prescriptions, and semi-supervised structural expansion.

Explained in chapters/and-or-templates/ (index.md, 01_theory.md, 02_experiments.md), a small reconstruction "in the
spirit of" *Learning AND-OR Templates for Compositional Representation in Art and Design* (ICLR 2026, OpenReview
cJ4h1FhChe), whose full text we could not read. Modules, one idea each:

- :mod:`.canvas`     objects from primitives, five themes with their true AND-OR, bad images, synthetic ratings;
- :mod:`.maxent`     the one-feature log-linear model against a reference: beta, log z, gain = KL;
- :mod:`.features`   filter responses, object terminals, detection maps, scene terminals;
- :mod:`.pursuit`    block pursuit, AND-OR templates, parsing, evidence, prescriptions, structural expansion;
- :mod:`.baselines`  logistic regression on pixels, a small CNN, scikit-learn's spectral biclustering;
- :mod:`.experiment` the chapter's experiment for one seed;
- :mod:`.plots`      AND-OR graphs.
"""
from .canvas import (CELL, GRID, KINDS, LINES, OBJECTS, SIZE, TERMINALS, THEME_NAMES, THEMES, Item, Scene,
                     cell_centre, draw_item, object_scenes, perturb, random_layout, render, render_all, sample_good,
                     terminal_label, true_terminals)
from .maxent import BETA_MAX, fit_beta, gain, kl_tilted, log_z, tilted_mean
from .features import (FILTERS, OBJECT_TERMINALS, FilterBank, cell_max, detection_map, object_features, raw_filters,
                       scene_features)
from .pursuit import (Block, Parse, Template, block_pursuit, evidence, expand, expansion_candidates, group_or_slots,
                      grow_block, parse, prescription, scene_conflict)
from .baselines import SmallCNN, cnn_scores, cnn_validation_curve, n_parameters, pixel_logreg, spectral_peers, train_cnn
from .experiment import (SETTINGS, SIZES, ExpansionResult, Study, ThemeResult, World, branch_map, learn_template,
                         learn_world, move_item, recovery, run_study, slot_of, spearman_gap_ci,
                         summary_metrics, template_study, expansion_runs, poisson_rate_ci,
                         pooled_precision)
from .plots import draw_and_or, template_labels, true_labels

__all__ = ["CELL", "GRID", "KINDS", "LINES", "OBJECTS", "SIZE", "TERMINALS", "THEME_NAMES", "THEMES", "Item", "Scene",
           "cell_centre", "draw_item", "object_scenes", "perturb", "random_layout", "render", "render_all",
           "sample_good", "terminal_label", "true_terminals", "BETA_MAX", "fit_beta", "gain", "kl_tilted", "log_z",
           "tilted_mean", "FILTERS", "OBJECT_TERMINALS", "FilterBank", "cell_max", "detection_map", "object_features",
           "raw_filters", "scene_features", "Block", "Parse", "Template", "block_pursuit", "evidence", "expand",
           "expansion_candidates", "group_or_slots", "grow_block", "parse", "prescription", "scene_conflict",
           "SmallCNN", "cnn_scores", "cnn_validation_curve", "n_parameters", "pixel_logreg", "spectral_peers",
           "train_cnn", "SETTINGS",
           "SIZES", "ExpansionResult", "Study", "ThemeResult", "World", "branch_map", "learn_template",
           "learn_world", "move_item", "recovery", "run_study", "slot_of", "spearman_gap_ci", "summary_metrics", "template_study", "expansion_runs",
           "poisson_rate_ci", "pooled_precision", "draw_and_or",
           "template_labels", "true_labels"]
