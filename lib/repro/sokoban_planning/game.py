"""Small Sokoban in numpy: a Boxoban-style level generator, a BFS solver, a vectorised batch step, an encoding.

Explained in chapters/sokoban-planning/01_theory.md (the rules, the generator, the solver) and used by
chapters/sokoban-planning/02_experiments.md. A level is a grid of codes (:data:`FLOOR` ... :data:`PLAYER_ON_TARGET`)
with walls all around. The four actions are up, down, left, right (:data:`DELTAS`); walking into a wall, or
pushing a box into a wall or another box, leaves the state unchanged. A level is solved when every box is on a target.

The solver works on bit masks: square ``i = row * width + col``, boxes as one integer with bit ``i`` set per box.
:func:`solve_table` explores every state reachable from the start (player square, box mask) and gives each its
distance to the nearest solved state and an optimal action, so that an imitation learner can be relabelled at any
state it visits (DAgger), not only along the solver's own path.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..common import check_int

__all__ = ["FLOOR", "WALL", "TARGET", "BOX", "BOX_ON_TARGET", "PLAYER", "PLAYER_ON_TARGET", "DELTAS", "ACTIONS",
           "Level", "parse_level", "render_level", "generate_level", "generate_levels", "solve", "SolveTable",
           "solve_table", "step_level", "SokobanBatch", "encode"]

FLOOR, WALL, TARGET, BOX, BOX_ON_TARGET, PLAYER, PLAYER_ON_TARGET = range(7)
ACTIONS = ("up", "down", "left", "right")
DELTAS = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]])      # (row, col) step of each action
_CHARS = {FLOOR: " ", WALL: "#", TARGET: ".", BOX: "$", BOX_ON_TARGET: "*", PLAYER: "@", PLAYER_ON_TARGET: "+"}
_CODES = {v: k for k, v in _CHARS.items()}


@dataclass(frozen=True)
class Level:
    """One Sokoban state as boolean planes: `walls`, `targets`, `boxes` (H, W) and the `player` square (row, col).

    Explained in chapters/sokoban-planning/01_theory.md.
    """

    walls: np.ndarray
    targets: np.ndarray
    boxes: np.ndarray
    player: tuple

    @property
    def shape(self) -> tuple:
        """(height, width) of the grid."""
        return self.walls.shape

    @property
    def solved(self) -> bool:
        """True when every box is on a target."""
        return bool(np.all(self.boxes <= self.targets))

    def grid(self) -> np.ndarray:
        """The level as a (H, W) uint8 grid of codes."""
        g = np.where(self.walls, WALL, FLOOR).astype(np.uint8)
        g[self.targets] = TARGET
        g[self.boxes & ~self.targets] = BOX
        g[self.boxes & self.targets] = BOX_ON_TARGET
        r, c = self.player
        g[r, c] = PLAYER_ON_TARGET if self.targets[r, c] else PLAYER
        return g


def parse_level(grid) -> Level:
    """A `Level` from a (H, W) grid of codes or a list of strings in the usual Sokoban characters (``#`` wall,
    ``.`` target, ``$`` box, ``*`` box on target, ``@`` player, ``+`` player on target).

    Explained in chapters/sokoban-planning/01_theory.md.
    """
    if isinstance(grid, (list, tuple)) and grid and isinstance(grid[0], str):
        if len({len(row) for row in grid}) != 1:
            raise ValueError("grid: every row must have the same length")
        try:
            grid = np.array([[_CODES[ch] for ch in row] for row in grid], dtype=np.uint8)
        except KeyError as e:
            raise ValueError(f"grid: unknown character {e.args[0]!r}") from None
    g = np.asarray(grid)
    if g.ndim != 2 or g.min() < 0 or g.max() > PLAYER_ON_TARGET:
        raise ValueError("grid must be a 2-d array of codes 0..6 or a list of equal-length strings")
    players = np.argwhere((g == PLAYER) | (g == PLAYER_ON_TARGET))
    if len(players) != 1:
        raise ValueError(f"grid must hold exactly one player, found {len(players)}")
    walls = g == WALL
    if not (walls[0].all() and walls[-1].all() and walls[:, 0].all() and walls[:, -1].all()):
        raise ValueError("grid must have walls all around its border")
    boxes = (g == BOX) | (g == BOX_ON_TARGET)
    targets = (g == TARGET) | (g == BOX_ON_TARGET) | (g == PLAYER_ON_TARGET)
    if boxes.sum() != targets.sum() or boxes.sum() == 0:
        raise ValueError(f"grid must hold as many boxes as targets (and at least one): {boxes.sum()} boxes, "
                         f"{targets.sum()} targets")
    return Level(walls, targets, boxes, (int(players[0][0]), int(players[0][1])))


def render_level(level: Level) -> str:
    """The level as text in the usual Sokoban characters. Explained in chapters/sokoban-planning/01_theory.md."""
    return "\n".join("".join(_CHARS[int(v)] for v in row) for row in level.grid())


# ----------------------------------------------------------------------------------------------------------------
# The scalar step and the solver (bit masks)

def step_level(level: Level, action: int) -> tuple[Level, int]:
    """One move on one level; returns (new level, square the pushed box left as a flat index, or -1 when no box
    moved). The reference for `SokobanBatch.step`. Explained in chapters/sokoban-planning/01_theory.md."""
    action = check_int("action", action, low=0)
    if action > 3:
        raise ValueError(f"action must be 0..3 (up, down, left, right), got {action}")
    dr, dc = DELTAS[action]
    r, c = level.player
    nr, nc = r + dr, c + dc
    if level.walls[nr, nc]:
        return level, -1
    if level.boxes[nr, nc]:
        br, bc = nr + dr, nc + dc
        if level.walls[br, bc] or level.boxes[br, bc]:
            return level, -1
        boxes = level.boxes.copy()
        boxes[nr, nc], boxes[br, bc] = False, True
        return Level(level.walls, level.targets, boxes, (nr, nc)), nr * level.shape[1] + nc
    return Level(level.walls, level.targets, level.boxes, (nr, nc)), -1


def _masks(level: Level):
    w = level.shape[1]
    bits = lambda plane: sum(1 << int(i) for i in np.flatnonzero(plane))
    return bits(level.walls), bits(level.targets), bits(level.boxes), level.player[0] * w + level.player[1], w


def _successors(state, walls, deltas):
    """Legal moves from `state` = (player, boxes): yields (action, next state)."""
    p, boxes = state
    for a, d in enumerate(deltas):
        n = p + d
        if walls >> n & 1:
            continue
        if boxes >> n & 1:
            b = n + d
            if (walls | boxes) >> b & 1:
                continue
            yield a, (n, boxes ^ (1 << n) | (1 << b))
        else:
            yield a, (n, boxes)


def solve(level: Level, max_states: int = 200_000) -> list[int] | None:
    """A shortest solution of `level` as a list of actions (breadth-first search over (player, boxes) states), or
    None when there is none within `max_states` states. Explained in chapters/sokoban-planning/01_theory.md."""
    max_states = check_int("max_states", max_states)
    walls, targets, boxes, player, w = _masks(level)
    deltas = (-w, w, -1, 1)
    start = (player, boxes)
    if boxes == targets:
        return []
    parent = {start: None}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        for a, t in _successors(s, walls, deltas):
            if t in parent:
                continue
            parent[t] = (s, a)
            if t[1] == targets:
                path = []
                while parent[t] is not None:
                    t, a = parent[t]
                    path.append(a)
                return path[::-1]
            if len(parent) >= max_states:
                return None
            queue.append(t)
    return None


@dataclass
class SolveTable:
    """Every state reachable from a level's start, with its distance to a solved state (-1: dead, no solution)
    and an optimal action (-1 where none). Keys are (player square, box mask). Built by `solve_table`.

    Explained in chapters/sokoban-planning/01_theory.md.
    """

    dist: dict
    best: dict
    width: int

    def lookup(self, player: int, boxes: int) -> tuple[int, int]:
        """(distance, optimal action) of a state; (-1, -1) for a state that is not in the table."""
        key = (int(player), int(boxes))
        return self.dist.get(key, -1), self.best.get(key, -1)


def solve_table(level: Level, max_states: int = 200_000) -> SolveTable:
    """Explore every state reachable from `level` and label each with its distance to the goal and the first
    optimal action in the order up, down, left, right (backward BFS over the explored graph).

    Explained in chapters/sokoban-planning/01_theory.md; the agent's DAgger labels come from it.
    """
    max_states = check_int("max_states", max_states)
    walls, targets, boxes, player, w = _masks(level)
    deltas = (-w, w, -1, 1)
    start = (player, boxes)
    seen = {start}
    order = [start]
    succ = {}
    i = 0
    while i < len(order):
        s = order[i]
        i += 1
        moves = list(_successors(s, walls, deltas))
        succ[s] = moves
        for _, t in moves:
            if t not in seen:
                seen.add(t)
                order.append(t)
                if len(seen) > max_states:
                    raise ValueError(f"level has more than max_states={max_states} reachable states")
    pred = {s: [] for s in order}
    for s, moves in succ.items():
        for _, t in moves:
            pred[t].append(s)
    dist = {s: 0 for s in order if s[1] == targets}
    queue = deque(dist)
    while queue:
        t = queue.popleft()
        for s in pred[t]:
            if s not in dist:
                dist[s] = dist[t] + 1
                queue.append(s)
    best = {}
    for s in order:
        if s in dist and dist[s] > 0:
            best[s] = next(a for a, t in succ[s] if dist.get(t, -1) == dist[s] - 1)
    for s in order:
        dist.setdefault(s, -1)
    return SolveTable(dist=dist, best=best, width=w)


# ----------------------------------------------------------------------------------------------------------------
# The generator (Boxoban style: carve a room, put boxes on targets, scramble by reverse play)

def _carve_room(rng, h, w, n_floor):
    floor = np.zeros((h, w), bool)
    r, c = rng.integers(1, h - 1), rng.integers(1, w - 1)
    floor[r, c] = True
    d = rng.integers(4)
    while floor.sum() < n_floor:
        if rng.random() < 0.35:
            d = rng.integers(4)
        nr, nc = r + DELTAS[d][0], c + DELTAS[d][1]
        if 1 <= nr < h - 1 and 1 <= nc < w - 1:
            r, c = nr, nc
            floor[r, c] = True
    return ~floor


def _reverse_play(rng, walls, boxes, player, n_steps):
    """Random walk in which the player pulls the box behind it, when there is one, with probability 0.8 (reverse
    Sokoban moves: every state it reaches can be pushed back to the start)."""
    boxes = boxes.copy()
    r, c = player
    for _ in range(n_steps):
        dr, dc = DELTAS[rng.integers(4)]
        nr, nc = r + dr, c + dc
        if walls[nr, nc] or boxes[nr, nc]:
            continue
        br, bc = r - dr, c - dc
        if boxes[br, bc] and rng.random() < 0.8:
            boxes[br, bc], boxes[r, c] = False, True
        r, c = nr, nc
    return boxes, (int(r), int(c))


def generate_level(rng: np.random.Generator, size: int = 7, n_boxes: int = 2, min_moves: int = 8,
                   max_tries: int = 200) -> tuple[Level, list[int]]:
    """One solvable level and a shortest solution: a random-walk room of about 70% of the interior, `n_boxes`
    boxes put on targets and scrambled by reverse play; kept only when no box starts on a target and the shortest
    solution has at least `min_moves` moves. Explained in chapters/sokoban-planning/01_theory.md."""
    size = check_int("size", size, low=5)
    n_boxes = check_int("n_boxes", n_boxes)
    min_moves = check_int("min_moves", min_moves, low=0)
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy Generator (np.random.default_rng(seed))")
    inner = (size - 2) ** 2
    for _ in range(check_int("max_tries", max_tries)):
        walls = _carve_room(rng, size, size, int(rng.integers(int(0.6 * inner), int(0.8 * inner) + 1)))
        free = np.argwhere(~walls)
        if len(free) < n_boxes + 2:
            continue
        pick = rng.choice(len(free), n_boxes + 1, replace=False)
        targets = np.zeros_like(walls)
        targets[tuple(free[pick[:n_boxes]].T)] = True
        player = tuple(int(v) for v in free[pick[n_boxes]])
        boxes = targets
        for _ in range(4):                              # play on until no box is left on a target
            boxes, player = _reverse_play(rng, walls, boxes, player, n_steps=int(rng.integers(20, 60)))
            if not (boxes & targets).any():
                break
        if (boxes & targets).any():
            continue
        level = Level(walls, targets, boxes, player)
        solution = solve(level)
        if solution is not None and len(solution) >= min_moves:
            return level, solution
    raise ValueError(f"no level found in max_tries={max_tries} tries; lower min_moves or raise max_tries")


def generate_levels(n: int, seed: int, size: int = 7, n_boxes: int = 2, min_moves: int = 8):
    """`n` levels from `generate_level` with one seeded generator: (grids (n, size, size) uint8, optimal lengths).

    Explained in chapters/sokoban-planning/01_theory.md.
    """
    n = check_int("n", n)
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    grids, lengths = [], []
    for _ in range(n):
        level, solution = generate_level(rng, size, n_boxes, min_moves)
        grids.append(level.grid())
        lengths.append(len(solution))
    return np.stack(grids), np.array(lengths)


# ----------------------------------------------------------------------------------------------------------------
# The vectorised batch

class SokobanBatch:
    """B levels stepped at once in numpy. `step(actions)` moves every unfinished level; finished ones stay.

    Explained in chapters/sokoban-planning/01_theory.md. Rewards follow Boxoban: -0.1 a step, +1 for a box pushed
    onto a target (-1 off one), +10 for finishing. `pushed` after a step holds, per level, the flat square the
    pushed box left, or -1.
    """

    def __init__(self, grids):
        g = np.asarray(grids)
        if g.ndim != 3:
            raise ValueError("grids must be a (B, H, W) array of level codes")
        levels = [parse_level(x) for x in g]
        self.walls = np.stack([lv.walls for lv in levels])
        self.targets = np.stack([lv.targets for lv in levels])
        self.boxes = np.stack([lv.boxes for lv in levels])
        self.player = np.array([lv.player for lv in levels], dtype=np.int64)
        self.done = self.solved()
        self.steps = np.zeros(len(g), dtype=np.int64)
        self.pushed = np.full(len(g), -1, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.walls)

    def solved(self) -> np.ndarray:
        """(B,) True where every box is on a target."""
        return ~np.any(self.boxes & ~self.targets, axis=(1, 2))

    def step(self, actions) -> tuple[np.ndarray, np.ndarray]:
        """Apply (B,) actions in 0..3; returns (rewards, done). Levels already done do not move."""
        a = np.asarray(actions)
        if a.shape != (len(self),) or a.min(initial=0) < 0 or a.max(initial=0) > 3:
            raise ValueError(f"actions must be a ({len(self)},) array of 0..3")
        idx = np.arange(len(self))
        live = ~self.done
        d = DELTAS[a]
        nxt = self.player + d
        beyond = nxt + d
        wall_n = self.walls[idx, nxt[:, 0], nxt[:, 1]]
        box_n = self.boxes[idx, nxt[:, 0], nxt[:, 1]]
        bh, bw = np.clip(beyond[:, 0], 0, self.walls.shape[1] - 1), np.clip(beyond[:, 1], 0, self.walls.shape[2] - 1)
        blocked_b = self.walls[idx, bh, bw] | self.boxes[idx, bh, bw]
        move = live & ~wall_n & (~box_n | ~blocked_b)
        push = move & box_n
        before = np.sum(self.boxes & self.targets, axis=(1, 2))
        p = np.flatnonzero(push)
        self.boxes[p, nxt[p, 0], nxt[p, 1]] = False
        self.boxes[p, bh[p], bw[p]] = True
        self.player[move] = nxt[move]
        self.pushed = np.where(push, nxt[:, 0] * self.walls.shape[2] + nxt[:, 1], -1)
        after = np.sum(self.boxes & self.targets, axis=(1, 2))
        solved = self.solved()
        reward = np.where(live, -0.1 + (after - before) + 10.0 * (solved & ~self.done), 0.0)
        self.steps += live
        self.done = self.done | solved
        return reward, self.done.copy()

    def box_masks(self) -> np.ndarray:
        """(B,) box masks as Python-int-compatible uint64 (bit i = flat square i), for `SolveTable.lookup`."""
        flat = self.boxes.reshape(len(self), -1).astype(np.uint64)
        return (flat << np.arange(flat.shape[1], dtype=np.uint64)).sum(axis=1, dtype=np.uint64)

    def player_index(self) -> np.ndarray:
        """(B,) flat player squares."""
        return self.player[:, 0] * self.walls.shape[2] + self.player[:, 1]

    def observe(self) -> np.ndarray:
        """The encoded observation, (B, 4, H, W) float32: see `encode`."""
        return encode(self.walls, self.targets, self.boxes, self.player)


def encode(walls, targets, boxes, player) -> np.ndarray:
    """Observation planes (B, 4, H, W) float32: wall, target, box, player. Explained in
    chapters/sokoban-planning/01_theory.md."""
    walls, targets, boxes = (np.asarray(x, bool) for x in (walls, targets, boxes))
    player = np.asarray(player)
    if walls.ndim != 3 or walls.shape != targets.shape or walls.shape != boxes.shape:
        raise ValueError("walls, targets and boxes must be (B, H, W) arrays of one shape")
    b, h, w = walls.shape
    obs = np.zeros((b, 4, h, w), np.float32)
    obs[:, 0], obs[:, 1], obs[:, 2] = walls, targets, boxes
    obs[np.arange(b), 3, player[:, 0], player[:, 1]] = 1.0
    return obs
