"""Input checks of the change-point modules that only this chapter needs (chapters/multilayer-changepoints/);
the generic ones are in `repro.common.checks`."""
from __future__ import annotations

import numpy as np


def check_tensor(A, directed=False, min_T=8):
    """Return A as a float array of shape (T, n, n, L); raise ValueError naming `A` otherwise."""
    A = np.asarray(A)
    if A.ndim != 4 or A.shape[1] != A.shape[2]:
        raise ValueError(f"A must have shape (T, n, n, L), got shape {A.shape}")
    if not np.issubdtype(A.dtype, np.number) and A.dtype != bool:
        raise ValueError("A must hold numbers (0/1 adjacencies or weights)")
    A = A.astype(float, copy=False)
    if not np.all(np.isfinite(A)):
        raise ValueError("A must be finite (no NaN or inf)")
    if A.shape[0] < min_T:
        raise ValueError(f"A has T={A.shape[0]} time points; at least {min_T} are needed")
    if A.shape[1] < 2:
        raise ValueError("A needs at least n=2 nodes")
    if not directed and not np.allclose(A, A.transpose(0, 2, 1, 3)):
        raise ValueError("A has non-symmetric layers A[t, :, :, l]; pass directed=True for directed networks")
    return A


def check_points(name, points, T):
    """``points`` as an int array if strictly increasing inside (0, T); else ValueError naming ``name``."""
    pts = np.asarray(points, dtype=int).ravel()
    if pts.size and (np.any(np.diff(pts) <= 0) or pts[0] <= 0 or pts[-1] >= T):
        raise ValueError(f"{name} must be strictly increasing integers in (0, {T}), got {list(pts)}")
    return pts
