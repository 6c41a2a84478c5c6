"""Input validation shared by the intervention modules (ValueErrors that name the argument)."""
from __future__ import annotations


def check_2d(name, x):
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array of states (n, d); got shape {tuple(x.shape)}")


def check_same_width(name_a, a, name_b, b):
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"{name_a} and {name_b} must have the same last dimension; got {a.shape[-1]} and {b.shape[-1]}")


def check_same_shape(name_a, a, name_b, b):
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{name_a} and {name_b} must have the same shape; got {tuple(a.shape)} and {tuple(b.shape)}")
