"""Facts about the machine and its packages that the build, its executors and its report share (a leaf module: it
imports nothing of the book's). Explained in chapters/appendix/reproducibility.md (the status page).
"""
from __future__ import annotations

import os
import platform
from importlib import metadata

REPORTED_PACKAGES = ("torch", "numpy", "scipy", "scikit-learn", "matplotlib", "jupyter-book", "myst-nb", "papermill",
                     "jupytext", "nbval")


def available_cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def environment() -> dict:
    """Package versions and machine, for the status page."""
    env = {"python": platform.python_version(), "machine": f"{platform.system()} {platform.machine()}",
           "cores": str(available_cores())}
    for name in REPORTED_PACKAGES:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            env[name] = "not installed"
    return env
