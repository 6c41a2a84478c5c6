"""The book's one plot style (DESIGN.md §3): every chapter's figures look alike."""
from __future__ import annotations

import matplotlib as mpl

#: Colour-blind-safe cycle (Okabe & Ito), in the order chapters draw their methods.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

BOOK_RC = {
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.8,
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "image.cmap": "viridis",
}


def use_book_style() -> None:
    """Apply the book's matplotlib style to every figure drawn after this call."""
    mpl.rcParams.update(BOOK_RC)
