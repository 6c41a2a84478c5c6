"""Unit tests of repro.sokoban_planning (chapters/sokoban-planning): the generator's levels,
the solver's optimality, the batch step against the scalar step, the automaton against its closed form, the DRC's
shapes, the analyses' building blocks, and a few steps of training that lower the loss."""
import itertools

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from repro.sokoban_planning import game as sk
from repro import sokoban_planning as sp
from repro.sokoban_planning import analysis, automaton, rollout as ro_mod

LEVEL = ["#######",
         "#  .  #",
         "# $$  #",
         "#  .@ #",
         "#     #",
         "#######"]


def _brute_force_length(level, limit):
    """Length of the shortest solution by trying every action sequence up to `limit` (tiny levels only)."""
    for n in range(limit + 1):
        for seq in itertools.product(range(4), repeat=n):
            lv = level
            for a in seq:
                lv, _ = sk.step_level(lv, a)
            if lv.solved:
                return n
    return None


def test_parse_render_round_trip_and_validation():
    lv = sk.parse_level(LEVEL)
    assert sk.render_level(lv).splitlines() == LEVEL
    assert np.array_equal(sk.parse_level(lv.grid()).grid(), lv.grid())
    with pytest.raises(ValueError, match="player"):
        sk.parse_level(["#####", "#$. #", "#####"])
    with pytest.raises(ValueError, match="border"):
        sk.parse_level(["#####", " $.@#", "#####"])
    with pytest.raises(ValueError, match="as many boxes"):
        sk.parse_level(["#####", "#$ @#", "#####"])


def test_solver_is_optimal_on_small_levels():
    rng = np.random.default_rng(3)
    for _ in range(4):
        level, solution = sk.generate_level(rng, size=5, n_boxes=1, min_moves=2)
        assert len(solution) == _brute_force_length(level, len(solution))
        lv = level
        for a in solution:
            lv, _ = sk.step_level(lv, a)
        assert lv.solved


def test_solve_table_agrees_with_solver_and_follows_optimal_actions():
    rng = np.random.default_rng(4)
    level, solution = sk.generate_level(rng)
    table = sk.solve_table(level)
    env = sk.SokobanBatch(level.grid()[None])
    for k in range(len(solution)):
        dist, best = table.lookup(env.player_index()[0], env.box_masks()[0])
        assert dist == len(solution) - k
        env.step(np.array([best]))
    assert env.done[0]


def test_generated_levels_are_valid_and_solvable():
    grids, lengths = sk.generate_levels(20, seed=1)
    assert grids.shape == (20, 7, 7) and lengths.min() >= 8
    for g, n in zip(grids, lengths):
        lv = sk.parse_level(g)
        assert lv.boxes.sum() == 2 and not (lv.boxes & lv.targets).any()
        assert len(sk.solve(lv)) == n
    again, _ = sk.generate_levels(20, seed=1)
    assert np.array_equal(grids, again)


def test_batch_step_matches_scalar_step():
    grids, _ = sk.generate_levels(16, seed=2)
    env = sk.SokobanBatch(grids)
    levels = [sk.parse_level(g) for g in grids]
    rng = np.random.default_rng(0)
    for _ in range(40):
        acts = rng.integers(0, 4, len(grids))
        was_done = env.done.copy()
        env.step(acts)
        for i, a in enumerate(acts):
            if was_done[i]:
                continue
            levels[i], pushed = sk.step_level(levels[i], int(a))
            assert env.pushed[i] == pushed
        assert np.array_equal(env.boxes, np.stack([lv.boxes for lv in levels]))
        assert np.array_equal(env.player, np.array([lv.player for lv in levels]))
    with pytest.raises(ValueError, match="actions"):
        env.step(np.full(len(grids), 4))


def test_encode_planes():
    env = sk.SokobanBatch(sk.parse_level(LEVEL).grid()[None])
    obs = env.observe()
    assert obs.shape == (1, 4, 6, 7) and obs[0, 3].sum() == 1 and obs[0, 2].sum() == 2 and obs[0, 1].sum() == 2


def test_automaton_matches_its_closed_form():
    rng = np.random.default_rng(0)
    for _ in range(40):
        walls = sk._carve_room(rng, 7, 7, int(rng.integers(12, 22)))
        free = np.argwhere(~walls)
        p = rng.choice(len(free), 3, replace=False)
        targets, boxes = np.zeros_like(walls), np.zeros_like(walls)
        targets[tuple(free[p[0]])] = boxes[tuple(free[p[1]])] = True
        lv = sk.Level(walls, targets, boxes, tuple(free[p[2]]))
        x, _ = automaton.run_automaton(lv, 12)
        assert np.array_equal(x, automaton.derived_forward(lv, 12))


def test_automaton_backward_channel_and_kernels():
    lv = sk.parse_level(["#######", "#@$  .#", "#######"])
    _, y = automaton.run_automaton(lv, 4)
    assert list(y[3, 3, 1, 1:6]) == [0, 1, 1, 1, 1]          # from the target back towards the box, one a tick
    k = automaton.shift_kernel(3, +1)
    assert k[1, 0] == 1 and k.sum() == 1                      # "right" reads the square on the left


def test_drc_shapes_and_ablation():
    model = sp.DRC(sp.DRCConfig(enc=4, hidden=4))
    obs = torch.zeros(2, 4, 7, 7)
    rec = []
    logits, (h, c) = model.step(obs, model.initial_state(2), record=rec)
    assert logits.shape == (2, 4) and h.shape == (3, 2, 4, 7, 7) and len(rec) == 3
    mask = torch.ones(3, 4)
    mask[1, 2] = 0
    _, (h, c) = model.step(obs, (h, c), ablate=mask)
    assert h[1, :, 2].abs().max() == 0 and c[1, :, 2].abs().max() == 0
    with pytest.raises(ValueError, match="obs"):
        model.step(torch.zeros(2, 4, 6, 6), model.initial_state(2))


def test_auroc_matrix_matches_sklearn_and_labels():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(200, 3)), rng.random((200, 2)) < 0.3
    x[:, 0] += y[:, 0]
    auc = analysis.auroc_matrix(x, y)
    for f in range(3):
        for d in range(2):
            assert abs(auc[f, d] - roc_auc_score(y[:, d], x[:, f])) < 1e-12
    on_axis, cos = analysis.kernel_stats(np.stack([automaton.shift_kernel(3, 1), automaton.shift_kernel(0, 1)]),
                                         [3, 3])
    assert on_axis.tolist() == [True, False] and abs(cos[0] - 2 ** -0.5) < 1e-9


def test_training_lowers_the_loss_and_checkpoint_round_trip(tmp_path):
    torch.set_num_threads(1)
    grids, _ = sk.generate_levels(4, seed=5)
    tables = sp.solver_tables(grids)
    model = sp.DRC(sp.DRCConfig(enc=4, hidden=4, layers=2, ticks=1, head=16))   # small: the code path, quickly
    cfg = sp.TrainConfig(iterations=20, batch=4, lr=1e-2, beta_fraction=1e9, seed=0)    # pure cloning, 4 levels
    log = sp.train_bc(model, grids, tables, cfg)
    assert np.mean(log["loss"][-5:]) < np.mean(log["loss"][:5]) - 0.1
    path = sp.save_agent(model, tmp_path / "a.pt", sp.TrainConfig(), log, command="test", seed=0)
    again, prov, short = sp.load_agent(path)
    assert prov["command"] == "test" and len(short["loss"]) == 20
    r1 = ro_mod.rollout(model, grids, 10, record=True)
    r2 = ro_mod.rollout(again, grids, 10, policy="replay", actions=r1.actions, record=True)
    assert np.array_equal(r1.solved, r2.solved) and r1.hidden.shape[:2] == (10, 4)
    assert np.allclose(r1.hidden, r2.hidden)
    labels = analysis.push_labels(r1, (7, 7))
    for t, i, sq, d in r1.pushes:
        assert labels[: t + 1, i, d].reshape(t + 1, -1)[:, sq].all()
