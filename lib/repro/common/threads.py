"""One context for thread limits: torch's intra-op threads and the BLAS / OpenMP pools (threadpoolctl) together.

Explained in chapters/appendix/reproducibility.md. Tiny matrices gain nothing from many threads and, on a small or
busy machine, lose a lot to synchronisation; the build also gives each notebook its share of the cores
(``REPRO_THREADS``). ``with thread_limit(1): ...`` runs the block on one thread and restores the previous settings.
"""
from __future__ import annotations

from contextlib import contextmanager

from .checks import check_int

__all__ = ["thread_limit", "set_threads"]


def set_threads(n: int) -> None:
    """Set torch's intra-op threads to ``n`` for the rest of the process (the build's share of the cores).

    Explained in chapters/appendix/reproducibility.md. BLAS pools are left as the environment set them
    (``OMP_NUM_THREADS`` and friends, which the build exports).
    """
    import torch

    torch.set_num_threads(check_int("n", n))


@contextmanager
def thread_limit(n: int = 1, torch_threads: bool = True, blas: bool = True):
    """Inside the block, at most ``n`` torch intra-op threads (``torch_threads``) and ``n`` BLAS / OpenMP threads
    (``blas``, through threadpoolctl); the previous settings come back afterwards.

    Explained in chapters/appendix/reproducibility.md. The limit never raises the count above what was set.
    """
    n = check_int("n", n)
    previous = None
    if torch_threads:
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(min(n, previous))
    try:
        if blas:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(n):
                yield
        else:
            yield
    finally:
        if previous is not None:
            torch.set_num_threads(previous)
