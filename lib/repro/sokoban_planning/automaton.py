"""The hand-built path cellular automaton: four direction channels that extend plans and backtrack at walls.

Explained in chapters/sokoban-planning/01_theory.md. Channel d holds, per square, a value in {-1, 0, +1}: +1 "a box
will pass this square being pushed in direction d", -1 "it will not" and 0 "not decided". Walls hold -1 in every
channel, fixed: that is the "negative value at walls". Two 3x3 shift kernels act on channel d: the forward kernel
reads the square behind (s - delta_d), the backward kernel reads the square ahead (s + delta_d). One tick updates
every square at once from the old values:

- forward extension: an undecided square becomes +1 when the square behind it is +1 and is not a target (a box
  that reached its target stops);
- backtracking: a +1 square that is not a target becomes -1 when the square ahead is -1 (a wall, or a square
  already pruned), so a dead end is erased from its head back to the box, one square a tick.

A second set of channels grows *backward* from the targets: the squares from which a box pushed in d reaches a
target (+1 spreads to s - delta_d from every +1 square s that is not a wall). The derived times (a box whose ray
has n free squares before a wall is pruned at tick 2n - 1; square j of a ray is reached at tick j) are what
`derived_forward` computes in closed form and the unit tests and the chapter's `check` claim compare.
"""
from __future__ import annotations

import numpy as np

from .game import DELTAS, Level

__all__ = ["shift_kernel", "shift", "forward_tick", "backward_tick", "run_automaton", "derived_forward"]


def shift_kernel(direction: int, sign: int = 1) -> np.ndarray:
    """The 3x3 kernel whose cross-correlation with a plane reads the square at s - sign * delta_d: `sign=+1` is the
    forward (extension) kernel of direction d, `sign=-1` the backward one. Explained in
    chapters/sokoban-planning/01_theory.md."""
    if direction not in (0, 1, 2, 3) or sign not in (1, -1):
        raise ValueError("direction must be 0..3 and sign +1 or -1")
    k = np.zeros((3, 3))
    dr, dc = DELTAS[direction]
    k[1 - sign * dr, 1 - sign * dc] = 1.0
    return k


def shift(plane: np.ndarray, kernel: np.ndarray, fill: float = -1.0) -> np.ndarray:
    """Cross-correlate a (H, W) plane with a 3x3 kernel, padding with `fill` (outside the grid counts as wall).

    Explained in chapters/sokoban-planning/01_theory.md.
    """
    plane = np.asarray(plane, float)
    if plane.ndim != 2 or np.shape(kernel) != (3, 3):
        raise ValueError("plane must be 2-d and kernel 3x3")
    p = np.pad(plane, 1, constant_values=fill)
    h, w = plane.shape
    return sum(kernel[i, j] * p[i:i + h, j:j + w] for i in range(3) for j in range(3))


def forward_tick(x: np.ndarray, walls: np.ndarray, targets: np.ndarray, direction: int) -> np.ndarray:
    """One synchronous tick of forward channel `direction`: extension, then backtracking, from the old values.

    Explained in chapters/sokoban-planning/01_theory.md.
    """
    behind = shift(x, shift_kernel(direction, +1))
    behind_is_target = shift(targets.astype(float), shift_kernel(direction, +1), fill=0.0) > 0
    ahead = shift(x, shift_kernel(direction, -1))
    new = x.copy()
    new[(x == 0) & (behind == 1) & ~behind_is_target] = 1.0
    new[(x == 1) & ~targets & (ahead == -1)] = -1.0
    new[walls] = -1.0
    return new


def backward_tick(y: np.ndarray, walls: np.ndarray, direction: int) -> np.ndarray:
    """One tick of backward channel `direction`: +1 spreads from s to s - delta_d (the square a box must come
    from to be pushed onto s). Explained in chapters/sokoban-planning/01_theory.md."""
    ahead = shift(y, shift_kernel(direction, -1))
    new = y.copy()
    new[(y == 0) & (ahead == 1)] = 1.0
    new[walls] = -1.0
    return new


def run_automaton(level: Level, ticks: int) -> tuple[np.ndarray, np.ndarray]:
    """Run the automaton for `ticks` ticks from its seeds (boxes in every forward channel, targets in every
    backward one). Returns forward and backward values, each (ticks + 1, 4, H, W), tick 0 being the seeds.

    Explained in chapters/sokoban-planning/01_theory.md.
    """
    if not isinstance(level, Level):
        raise ValueError("level must be a repro.sokoban_planning.game.Level")
    if isinstance(ticks, bool) or not isinstance(ticks, (int, np.integer)) or ticks < 0:
        raise ValueError(f"ticks must be a non-negative integer, got {ticks!r}")
    walls, targets = level.walls, level.targets
    x0 = np.where(walls, -1.0, np.where(level.boxes, 1.0, 0.0))
    y0 = np.where(walls, -1.0, np.where(targets, 1.0, 0.0))
    xs, ys = [np.stack([x0] * 4)], [np.stack([y0] * 4)]
    for _ in range(ticks):
        xs.append(np.stack([forward_tick(xs[-1][d], walls, targets, d) for d in range(4)]))
        ys.append(np.stack([backward_tick(ys[-1][d], walls, d) for d in range(4)]))
    return np.stack(xs), np.stack(ys)


def derived_forward(level: Level, ticks: int) -> np.ndarray:
    """The forward channels in closed form for a level with one box, (ticks + 1, 4, H, W): along the box's ray in
    direction d, square j (j = 0 at the box) is 0 before tick j; if the ray meets a target at square k before any
    wall, squares 0..k are +1 from tick j on; if it meets a wall after n free squares, square j is +1 from tick j
    and -1 from tick 2n - 1 - j. Explained in chapters/sokoban-planning/01_theory.md."""
    if int(level.boxes.sum()) != 1:
        raise ValueError("derived_forward needs a level with exactly one box")
    (br, bc), = np.argwhere(level.boxes)
    out = np.zeros((ticks + 1, 4) + level.shape)
    out[:, :, level.walls] = -1.0
    for d, (dr, dc) in enumerate(DELTAS):
        ray, r, c = [], br, bc
        while not level.walls[r, c]:
            ray.append((r, c))
            if level.targets[r, c]:
                break
            r, c = r + dr, c + dc
        n = len(ray)
        reaches_target = level.targets[ray[-1]]
        for j, (r, c) in enumerate(ray):
            for t in range(ticks + 1):
                if t < j:
                    continue
                out[t, d, r, c] = 1.0 if reaches_target or t < 2 * n - 1 - j else -1.0
    return out
