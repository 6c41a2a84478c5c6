"""Drawings of AND-OR graphs, parse evidence and scenes.

Explained in chapters/and-or-templates/02_experiments.md (the learned graph beside the true one, parse trees).
"""
from __future__ import annotations

import numpy as np

from .canvas import THEMES, terminal_label


def true_labels(theme: str) -> list:
    """The true AND-OR of a theme as nested labels: slots -> branches -> terminal names
    (chapters/and-or-templates/02_experiments.md)."""
    return [[[terminal_label(j) for j in sorted(b)] for b in slot] for slot in THEMES[theme]]


def template_labels(template) -> list:
    """A learned template as nested labels, like `true_labels` (chapters/and-or-templates/02_experiments.md)."""
    return [[[terminal_label(j) for j in b.cols] for b in slot] for slot in template.slots]


def draw_and_or(ax, slots: list, title: str, fontsize: float = 7.0) -> None:
    """Draw an AND root, one node per slot (an OR node when it has alternatives), and the terminals of each branch
    below it (chapters/and-or-templates/02_experiments.md)."""
    leaves = [(s, b, t) for s, slot in enumerate(slots) for b, branch in enumerate(slot) for t in branch]
    n = max(len(leaves), 1)
    xs = {leaf: (i + 0.5) / n for i, leaf in enumerate(leaves)}
    box = dict(boxstyle="round,pad=0.25", fc="white", ec="0.3", lw=0.8)
    ax.text(0.5, 0.92, "AND", ha="center", va="center", fontsize=fontsize + 1, bbox={**box, "fc": "#dde8f5"})
    for s, slot in enumerate(slots):
        sx = np.mean([xs[l] for l in leaves if l[0] == s])
        is_or = len(slot) > 1
        ax.plot([0.5, sx], [0.88, 0.66], color="0.5", lw=0.7)
        ax.text(sx, 0.62, "OR" if is_or else "part", ha="center", va="center", fontsize=fontsize,
                bbox={**box, "fc": "#fde7c8" if is_or else "#eeeeee"})
        for b, branch in enumerate(slot):
            bx = np.mean([xs[(s, b, t)] for t in branch])
            ax.plot([sx, bx], [0.58, 0.40], color="0.5", lw=0.7, ls="--" if is_or else "-")
            for t in branch:
                ax.plot([bx, xs[(s, b, t)]], [0.40, 0.30], color="0.5", lw=0.7)
                ax.text(xs[(s, b, t)], 0.22, t.replace("@", "\n"), ha="center", va="top", fontsize=fontsize - 0.5,
                        rotation=0, bbox={**box, "fc": "#e2f2e2"})
    ax.set(xlim=(0, 1), ylim=(0, 1), title=title)
    ax.axis("off")
