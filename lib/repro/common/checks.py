"""Argument checks: each raises a ``ValueError`` that names the bad argument and shows its value (DESIGN.md §6).

Explained in chapters/appendix/reproducibility.md. Every public function of the library validates its inputs with
these, so that a wrong call stops at once with a message such as ``steps must be a positive integer, got 0``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check_int", "check_positive", "check_non_negative", "check_between", "check_choice", "check_seeds", "check_2d",
           "check_same_width", "check_same_shape"]


def _is_int(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


def _is_number(value) -> bool:
    return not isinstance(value, bool) and np.isscalar(value) and isinstance(value, (int, float, np.number))


def _int_phrase(low: int) -> str:
    return {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer >= {low}")


def check_int(name: str, value, low: int = 1) -> int:
    """``value`` as an int if it is an integer (not a bool) >= ``low``; else ValueError naming ``name``.

    Explained in chapters/appendix/reproducibility.md. ``low=1`` reads "a positive integer", ``low=0`` "a
    non-negative integer".
    """
    if not _is_int(value) or value < low:
        raise ValueError(f"{name} must be {_int_phrase(low)}, got {value!r}")
    return int(value)


def check_positive(name: str, value) -> float:
    """``value`` as a float if it is a finite number > 0; else ValueError naming ``name``.

    Explained in chapters/appendix/reproducibility.md.
    """
    if not _is_number(value) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def check_non_negative(name: str, value) -> float:
    """``value`` as a float if it is a finite number >= 0; else ValueError naming ``name``.

    Explained in chapters/appendix/reproducibility.md.
    """
    if not _is_number(value) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    return float(value)


def check_between(name: str, value, low: float, high: float, closed: str = "neither") -> float:
    """``value`` as a float if it lies in the interval from ``low`` to ``high``; else ValueError naming ``name``.

    Explained in chapters/appendix/reproducibility.md. ``closed`` is "neither" (low, high), "both" [low, high],
    "left" [low, high) or "right" (low, high].
    """
    if closed not in ("neither", "both", "left", "right"):
        raise ValueError(f"closed must be one of neither, both, left, right; got {closed!r}")
    left, right = closed in ("both", "left"), closed in ("both", "right")
    ok = _is_number(value) and (value >= low if left else value > low) and (value <= high if right else value < high)
    if not ok:
        interval = f"{'[' if left else '('}{low:g}, {high:g}{']' if right else ')'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return float(value)


def check_choice(name: str, value, choices):
    """``value`` if it is one of ``choices``; else ValueError naming ``name`` and listing the choices.

    Explained in chapters/appendix/reproducibility.md.
    """
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return value


def check_seeds(seeds, name: str = "seeds") -> list[int]:
    """``seeds`` (one integer or a list) as a non-empty list of non-negative ints; else ValueError naming ``name``.

    Explained in chapters/appendix/reproducibility.md.
    """
    values = list(np.atleast_1d(seeds))
    if not values or any(not _is_int(s) or s < 0 for s in values):
        raise ValueError(f"{name} must be a non-empty list of non-negative integers, got {seeds!r}")
    return [int(s) for s in values]


def check_2d(name: str, x) -> None:
    """ValueError naming ``name`` unless ``x`` (an array or tensor) is 2-d, rows of states (n, d).

    Explained in chapters/causal-divergence/01_theory.md.
    """
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array of states (n, d); got shape {tuple(x.shape)}")


def check_same_width(name_a: str, a, name_b: str, b) -> None:
    """ValueError naming both arguments unless ``a`` and ``b`` have the same last dimension.

    Explained in chapters/causal-divergence/01_theory.md.
    """
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"{name_a} and {name_b} must have the same last dimension; got {a.shape[-1]} and "
                         f"{b.shape[-1]}")


def check_same_shape(name_a: str, a, name_b: str, b) -> None:
    """ValueError naming both arguments unless ``a`` and ``b`` have the same shape.

    Explained in chapters/causal-divergence/01_theory.md.
    """
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{name_a} and {name_b} must have the same shape; got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
