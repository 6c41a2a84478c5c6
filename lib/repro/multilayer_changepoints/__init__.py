"""Change point localisation and inference in dynamic multilayer networks (Wang, Ritscher, Kei, Ma and
Madrid Padilla, ICLR 2026, arXiv 2506.21878).

Explained in chapters/multilayer-changepoints/ (index.md, 01_theory.md, 02_localisation.md, 03_inference.md).
Modules, one idea each:

- :mod:`.model`        the multilayer random dot product graph and the paper's simulation scenarios;
- :mod:`.tensor`       HeteroPCA and TH-PCA, the low-rank tensor estimate;
- :mod:`.cusum`        CUSUM weights and the prefix-sum inner product of two CUSUMs;
- :mod:`.segmentation` seeded intervals and seeded binary segmentation (Stage I);
- :mod:`.refine`       local refinement (Stage II) and the least-squares step, Eq. (5);
- :mod:`.inference`    the limiting distribution and the confidence intervals;
- :mod:`.metrics`      |K^-K|, one-sided Hausdorff distances, covering;
- :mod:`.detect`       `detect_change_points(A)`: all of the above in one call;
- :mod:`.peers`        `ruptures` baselines on the same data.
"""
from .cusum import cusum, cusum_inner, cusum_weights, prefix_sums, scalar_cusum
from .detect import ChangePointResult, detect_change_points
from .inference import Interval, confidence_intervals, jump_statistics, limit_quantiles, simulate_limit
from .metrics import covering, evaluate, one_sided_hausdorff
from .model import (SCENARIOS, Sequence, ddm_probabilities, jump_sizes, msbm_probabilities, piecewise_sequence,
                    sample_network, scenario, weak_jump)
from .peers import layer_frobenius, ruptures_frob, ruptures_nets
from .refine import least_squares_refine, local_refine, local_windows, segment_estimates
from .segmentation import (StageOne, candidate_splits, default_threshold, features, seeded_binary_segmentation, seeded_intervals,
                           split_halves)
from .studies import interval_records
from .tensor import EIGEN_ORDERS, hetero_pca, th_pca, unfold

__all__ = [
    "candidate_splits", "cusum", "cusum_inner", "cusum_weights", "prefix_sums", "scalar_cusum",
    "ChangePointResult", "detect_change_points",
    "Interval", "confidence_intervals", "jump_statistics", "limit_quantiles", "simulate_limit",
    "covering", "evaluate", "one_sided_hausdorff",
    "SCENARIOS", "Sequence", "ddm_probabilities", "jump_sizes", "msbm_probabilities", "piecewise_sequence",
    "sample_network", "scenario", "weak_jump",
    "layer_frobenius", "ruptures_frob", "ruptures_nets",
    "least_squares_refine", "local_refine", "local_windows", "segment_estimates",
    "StageOne", "default_threshold", "features", "seeded_binary_segmentation", "seeded_intervals", "split_halves",
    "interval_records",
    "EIGEN_ORDERS", "hetero_pca", "th_pca", "unfold",
]
