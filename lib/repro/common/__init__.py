"""Small generic helpers that every chapter uses, each written once (DESIGN.md §1, §6).

Explained in chapters/appendix/reproducibility.md. Modules, one idea each:

- :mod:`.checks`     argument checks that raise a ``ValueError`` naming the bad argument;
- :mod:`.stats`      the spread over seeds (sample sd, ddof=1; its standard error), percentile-bootstrap intervals
  of the mean, and the two-stage cluster bootstrap for grouped items;
- :mod:`.smoothing`  running means: trailing (causal) and centred;
- :mod:`.threads`    a context that limits torch's and the BLAS libraries' threads, then restores them;
- :mod:`.provenance` the provenance record of a file shipped under data/ (command, seed, commit, UTC time);
- :mod:`.tables`     a markdown table from a header and rows, and one table cell, for the tables notebooks and pages
  display;
- :mod:`.progress`   progress bars that show when a person runs a notebook and stay out of the published book;
- :mod:`.timing`     a stopwatch for the seconds a chapter reports.
"""
from .checks import (check_2d, check_between, check_choice, check_int, check_non_negative, check_positive,
                     check_same_shape, check_same_width, check_seeds)
from .provenance import current_commit, provenance_record, timestamp
from .smoothing import centred_mean, trailing_mean
from .progress import progress
from .stats import bootstrap_ci, cluster_bootstrap_ci, mean_and_sd, sample_sd, standard_error
from .tables import markdown_table, table_cell
from .threads import thread_limit
from .timing import Stopwatch, stopwatch

__all__ = ["check_between", "check_choice", "check_int", "check_non_negative", "check_positive", "check_same_shape",
           "check_same_width", "check_2d", "check_seeds", "current_commit", "provenance_record", "timestamp",
           "centred_mean", "trailing_mean", "bootstrap_ci", "cluster_bootstrap_ci", "mean_and_sd", "sample_sd",
           "standard_error", "markdown_table", "table_cell", "thread_limit", "progress",
           "Stopwatch", "stopwatch"]
