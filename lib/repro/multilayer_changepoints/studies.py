"""Small Monte Carlo studies of the confidence intervals, shared by the inference notebook's sections.

Explained in chapters/multilayer-changepoints/03_inference.md.
"""
from __future__ import annotations

import numpy as np

from ..common import check_int
from .detect import detect_change_points
from .model import scenario

__all__ = ["interval_records"]


def interval_records(name, n, trials, seed=0, eigen_order="signed", progress=None) -> list[dict]:
    """Run the full method with intervals on `trials` sequences of scenario `name`; one record per true change
    point of each sequence whose number of change points was found exactly.

    Explained in chapters/multilayer-changepoints/03_inference.md (two readings of HeteroPCA). Each record holds the
    trial, the true jump size kappa = ||P_{k+1} - P_k||_F, the plug-in kappa^, whether the interval covers the truth,
    and its length; sequence i is drawn from rng [seed, 17, i], so two eigen orders see the same sequences.
    """
    check_int("trials", trials, 1)
    rows = []
    loop = range(trials) if progress is None else progress(range(trials), desc=f"{name}, {eigen_order}")
    for i in loop:
        seq = scenario(name, n=n, rng=[seed, 17, i])
        res = detect_change_points(seq.A, directed=True, seed=i, eigen_order=eigen_order)
        if len(res.change_points) != len(seq.change_points):
            rows.append(dict(trial=i, detected=False))
            continue
        for k, (iv, c) in enumerate(zip(res.intervals, seq.change_points)):
            kappa = float(np.linalg.norm(seq.P[k + 1] - seq.P[k]))
            rows.append(dict(trial=i, detected=True, kappa=kappa, kappa_hat=float(iv.kappa),
                             covered=bool(iv.lower <= c <= iv.upper), length=float(iv.length)))
    return rows
