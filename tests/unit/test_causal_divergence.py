"""Unit tests of repro.causal_divergence (chapters/causal-divergence): circuit, task, CL loss, DAS training."""
import numpy as np
import pytest
import torch

from repro import causal_divergence as cd
from repro.causal_divergence import mean_difference, mean_difference_patch


def test_hidden_pathway_circuit_exactly():
    delta = mean_difference(cd.NATURAL_A, cd.NATURAL_B)
    np.testing.assert_allclose(delta, [0.5, 0.5, 0.0, -0.5])
    pre, s, label = cd.circuit(np.vstack([cd.NATURAL_A, cd.NATURAL_B]))
    np.testing.assert_allclose(pre[:, 2], [0, 0, -1, -2])
    assert list(label) == ["A", "A", "B", "B"]
    pre, s, label = cd.circuit(mean_difference_patch(cd.NATURAL_B[0], delta))
    np.testing.assert_allclose(pre, [-0.25, 0.0, 0.5], atol=1e-12)
    assert s == pytest.approx(0.5) and label == "A"
    with pytest.raises(ValueError, match="4 coordinates"):
        cd.circuit(np.zeros(3))


def test_null_direction_changes_nothing():
    n = cd.circuit_null_direction()
    np.testing.assert_allclose(cd.CIRCUIT_W @ n, 0, atol=1e-12)
    h = np.vstack([cd.NATURAL_A, cd.NATURAL_B])
    np.testing.assert_allclose(cd.circuit(h + 10 * n)[1], cd.circuit(h)[1], atol=1e-9)


def test_distributions_and_patching():
    box = cd.sample_distribution("axis_box", 500, seed=0)
    assert np.all(np.abs(box[:, 0]) <= 1) and np.all(np.abs(box[:, 1]) <= 0.2)
    P, masks = cd.random_coordinate_patches(box, seed=0)
    assert np.all(np.abs(P[:, 1]) <= 0.2) and np.all(masks.sum(1) == 1)
    with pytest.raises(ValueError, match="axis_box, rotated_box, correlated_gaussian"):
        cd.sample_distribution("ring", 10)


def test_toy_task_and_pairs():
    task = cd.make_toy_task(n_per_class=20, seed=0)
    assert task.h.shape == (200, 18) and len(np.unique(task.cls)) == 10
    t1, _ = cd.SPLITS["inner_square"]
    trg, src, cf = cd.interchange_pairs(task, t1, 50, seed=0)
    for a, b, c in zip(trg, src, cf):
        assert cd.CLASSES[c] == (int(task.xy[b, 0]), int(task.xy[a, 1])) and cd.CLASSES[c] in t1
    with pytest.raises(ValueError, match="classes"):
        cd.interchange_pairs(task, {(0, 0)}, 5)


def test_headroom_split_widens_the_y_gap():
    """far_y: task-1 pairs differ in y by at most 1, task-2 pairs by 0 or 4, and the two tasks share no class."""
    task1, task2 = cd.HEADROOM_SPLITS["far_y"]
    assert not task1 & task2 and set(cd.ALL_SPLITS) == set(cd.SPLITS) | {"far_y"}
    task = cd.make_toy_task(n_per_class=10, seed=0)
    for classes, gaps in [(task1, {0, 1}), (task2, {0, 4})]:
        trg, src, _ = cd.interchange_pairs(task, classes, 200, seed=0)
        assert set(np.abs(task.xy[trg, 1] - task.xy[src, 1]).astype(int)) == gaps


def test_cl_loss():
    h = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
    assert float(cd.cl_loss(h, h)) == pytest.approx(0.0, abs=1e-6)
    assert float(cd.cl_loss(h, -h)) == pytest.approx(((2 * h) ** 2).mean(-1).mean().item() + 2.0, rel=1e-5)
    with pytest.raises(ValueError, match="h_hat and h_bar"):
        cd.cl_loss(h, h[:, :1])


def test_train_das_small_and_zero_weight_control():
    task = cd.make_toy_task(n_per_class=30, seed=0)
    clf = cd.train_classifier(task, hidden=32, steps=150, seed=0)
    a = cd.train_das(task, clf, "og_holdouts", "action", steps=40, n_pairs=200, seed=0)
    b = cd.train_das(task, clf, "og_holdouts", "both", cl_weight=0.0, cl_space="subspace", steps=40, n_pairs=200,
                     seed=0)
    assert torch.equal(a.das.rotation.matrix, b.das.rotation.matrix)
    assert 0 <= a.iia <= 1 and a.baseline > 0
    with pytest.raises(ValueError, match="split"):
        cd.train_das(task, clf, "diagonal")
    with pytest.raises(ValueError, match="action, cl, both"):
        cd.train_das(task, clf, loss="kl")
