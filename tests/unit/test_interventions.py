"""Unit tests of repro.causal_divergence's intervention tools (chapters/causal-divergence): patching, DAS, IIA
and the OT divergence."""
import numpy as np
import pytest
import torch
from torch import nn

from repro import causal_divergence as iv


# ------------------------------------------------------------------ patching

def test_coordinate_patch_by_hand():
    trg, src = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(iv.coordinate_patch(trg, src, [0, 1, 0]), [1.0, 20.0, 3.0])
    t = iv.coordinate_patch(torch.tensor(trg), torch.tensor(src), torch.tensor([1, 0, 1]))
    assert t.tolist() == [10.0, 2.0, 30.0]


def test_coordinate_patch_validates():
    with pytest.raises(ValueError, match="mask"):
        iv.coordinate_patch(np.zeros(3), np.zeros(3), [1, 0])
    with pytest.raises(ValueError, match="h_trg and h_src"):
        iv.coordinate_patch(np.zeros(3), np.zeros(4), [1, 0, 0])


def test_mean_difference_patch():
    a, b = np.array([[1.0, 0.0], [3.0, 2.0]]), np.array([[0.0, 0.0], [0.0, 2.0]])
    delta = iv.mean_difference(a, b)
    np.testing.assert_array_equal(delta, [2.0, 0.0])
    np.testing.assert_array_equal(iv.mean_difference_patch(b, delta), [[2.0, 0.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="h_a and h_b"):
        iv.mean_difference(a, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="delta"):
        iv.mean_difference_patch(b, np.zeros(3))


def test_activation_patch_through_hooks():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x_trg, x_src = torch.randn(5, 3), torch.randn(5, 3)
    mask = torch.tensor([1.0, 0.0, 1.0, 0.0])
    out = iv.activation_patch(model, model[0], x_trg, x_src, mask)
    h = iv.coordinate_patch(model[0](x_trg), model[0](x_src), mask)
    torch.testing.assert_close(out, model[2](model[1](h)))
    torch.testing.assert_close(iv.get_activation(model, model[1], x_trg), model[1](model[0](x_trg)))
    assert not model[0]._forward_hooks                       # hooks are removed afterwards
    with pytest.raises(ValueError, match="module"):
        iv.get_activation(model, nn.Linear(3, 3), x_trg)


# ------------------------------------------------------------------ DAS

@pytest.mark.parametrize("kind", iv.ROTATION_KINDS)
def test_das_is_identity_for_equal_inputs_and_swaps_the_subspace(kind):
    das = iv.DAS(6, k=2, kind=kind, seed=0)
    h, g = torch.randn(5, 6), torch.randn(5, 6)
    with torch.no_grad():
        torch.testing.assert_close(das(h, h), h, atol=1e-5, rtol=1e-5)
        out = das(h, g)
        z, zg, zh = das.rotation(out), das.rotation(g), das.rotation(h)
    torch.testing.assert_close(z[:, :2], zg[:, :2], atol=1e-5, rtol=1e-5)    # causal coordinates from the source
    torch.testing.assert_close(z[:, 2:], zh[:, 2:], atol=1e-5, rtol=1e-5)    # the rest from the target


def test_orthogonal_rotation_stays_orthogonal_under_training():
    das = iv.DAS(5, k=1, kind="orthogonal", seed=1)
    opt = torch.optim.Adam(das.parameters(), lr=0.1)
    for _ in range(5):
        opt.zero_grad()
        das(torch.randn(8, 5), torch.randn(8, 5)).pow(2).sum().backward()
        opt.step()
    R = das.rotation.matrix.detach()
    torch.testing.assert_close(R @ R.T, torch.eye(5), atol=1e-5, rtol=1e-5)


def test_learned_subspace_mask_is_soft_and_trainable():
    das = iv.DAS(6, k=2, learned_subspace=True, temperature=0.1, seed=0)
    m = das.mask().detach()
    assert m[0] > 0.99 and m[1] > 0.99 and m[2] < 0.01
    das(torch.randn(4, 6), torch.randn(4, 6)).sum().backward()
    assert das.boundary.grad is not None


def test_das_validates():
    with pytest.raises(ValueError, match="k=7"):
        iv.DAS(6, k=7)
    with pytest.raises(ValueError, match="orthogonal, linear"):
        iv.DAS(6, k=1, kind="householder")
    with pytest.raises(ValueError, match="dim=6"):
        iv.DAS(6, k=1)(torch.zeros(2, 5), torch.zeros(2, 5))


# ------------------------------------------------------------------ IIA and divergence

def test_iia():
    assert iv.iia(torch.tensor([[0.1, 0.9], [0.8, 0.2]]), torch.tensor([1, 1])) == 0.5
    assert iv.iia(np.array([2, 1, 0]), np.array([2, 1, 0])) == 1.0
    with pytest.raises(ValueError, match="outputs and y_cf"):
        iv.iia(np.array([1, 2]), np.array([1]))


def test_ot_divergence_known_values():
    X = np.random.default_rng(0).standard_normal((50, 3))
    assert iv.ot_divergence(X, X) == pytest.approx(0.0, abs=1e-9)
    shift = np.array([3.0, 4.0, 0.0])                         # a translation moves every point by 5
    assert iv.ot_divergence(X, X + shift) == pytest.approx(5.0, rel=1e-6)
    assert iv.ot_divergence(X, X + shift, p=1) == pytest.approx(5.0, rel=1e-6)
    assert iv.ot_divergence(X, X + shift, method="sinkhorn", reg=0.01) == pytest.approx(5.0, rel=0.05)


def test_ot_divergence_validates():
    with pytest.raises(ValueError, match="method"):
        iv.ot_divergence(np.zeros((3, 2)), np.zeros((3, 2)), method="mmd")
    with pytest.raises(ValueError, match="X and Y"):
        iv.ot_divergence(np.zeros((3, 2)), np.zeros((3, 4)))


def test_divergence_with_baseline():
    rng = np.random.default_rng(0)
    nat = rng.standard_normal((400, 2))
    same = iv.divergence_with_baseline(rng.standard_normal((200, 2)), nat, seed=0)
    far = iv.divergence_with_baseline(rng.standard_normal((200, 2)) + 3, nat, seed=0)
    assert same.n == 200 and 0.5 < same.ratio < 2.0
    assert far.ratio > 5
    with pytest.raises(ValueError, match="n=300"):
        iv.divergence_with_baseline(nat[:300], nat, n=300)
