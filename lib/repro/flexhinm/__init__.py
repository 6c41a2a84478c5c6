"""FlexHiNM-GP: hierarchical N:M sparsity with three regions, gyro-permutation and Hard Concrete gates.

Explained in chapters/flexhinm/ (index.md, 01_theory.md, 02_experiments.md), a small reconstruction of
"FlexHiNM-GP: Flexible Hierarchical Pruning via Region Allocation and Channel Permutation" (ICLR 2026, OpenReview
YaZraqRsbB). Modules, one idea each:

- :mod:`.patterns` masks of one matrix: unstructured, N:M, vector, HiNM and the three regions; pattern checks;
- :mod:`.permute`  balanced k-means and the two steps of the gyro-permutation; compensation in the next layer;
- :mod:`.gates`    Hard Concrete gates and their expected L0;
- :mod:`.mlp`      the digits MLP, many models trained at once; gradual pruning with gates;
- :mod:`.prune`    one-shot pruning of a model by each method, the synthetic layer, and the torch peers;
- :mod:`.experiment` the whole digits comparison, fine-tuning every pruned model in one batch.
"""
from .gates import BETA, GAMMA, ZETA, deterministic_gate, expected_l0, hard_concrete_sample
from .mlp import (SIZES, DigitsSplits, accuracy, correct, digits_splits, finetune_hard_concrete, forward, init_mlp,
                  input_power, train_mlp)
from .patterns import (NM_M, NM_N, Layout, best_dense_count, check_saliency, dense_counts, hier_layout,
                       layout_cost, layout_mask, nm_mask, pattern_violations, retained, tile_costs,
                       unstructured_mask, vector_mask)
from .permute import GyroResult, balanced_kmeans, gyro_input, gyro_output, permute_hidden
from .experiment import DigitsExperiment, digits_experiment, semi_structured_times
from .prune import (LABELS, METHODS, PrunedModel, ao_24_mask, hc_group_ids, hc_init_log_alpha, hc_project,
                    prune_layer, prune_model, synthetic_layer, torch_l1_unstructured_mask)

__all__ = ["BETA", "GAMMA", "ZETA", "deterministic_gate", "expected_l0", "hard_concrete_sample", "SIZES",
           "DigitsSplits", "accuracy", "correct", "digits_splits", "finetune_hard_concrete", "forward", "init_mlp",
           "input_power", "train_mlp", "NM_M", "NM_N", "Layout", "best_dense_count", "check_saliency",
           "dense_counts", "hier_layout", "layout_cost", "layout_mask", "nm_mask", "pattern_violations", "retained",
           "tile_costs", "unstructured_mask", "vector_mask", "GyroResult", "balanced_kmeans", "gyro_input",
           "gyro_output", "permute_hidden", "LABELS", "METHODS", "PrunedModel", "ao_24_mask", "hc_group_ids",
           "hc_init_log_alpha", "hc_project", "prune_layer", "prune_model", "synthetic_layer",
           "torch_l1_unstructured_mask", "DigitsExperiment", "digits_experiment", "semi_structured_times"]
