"""Unit tests of repro.behavior_learning (chapters/behavior-learning): equivalence with blnetwork (logits, DSM
loss), positivity of the multipliers, the formula export, validation, and tiny training runs."""
import numpy as np
import pytest
import torch

from repro import behavior_learning as bl


def _peer(hidden, k=None, x=None, y=None, **kw):
    from blnetwork.model import BLDeep
    if k is not None:
        m = BLDeep(list(hidden), task="discrete", num_classes=k, **kw)
        m.build_for_discrete_inference(x[:1], num_classes=k)
    else:
        m = BLDeep(list(hidden), task="continuous", **kw)
        m.build(x, y)
    return m


@pytest.mark.parametrize("acts", [dict(), dict(first_act_func="none", second_act_func="softplus",
                                                third_act_func="square", beta=2.0)])
def test_logits_equal_blnetwork(acts):
    torch.manual_seed(0)
    x = torch.randn(16, 4)
    peer = _peer((6, 3), k=4, x=x, **acts)
    names = dict(phi1=acts.get("first_act_func", "tanh"), phi2=acts.get("second_act_func", "relu"),
                 phi3=acts.get("third_act_func", "abs"), beta=acts.get("beta", 1.0))
    ours = bl.load_blnetwork_state(bl.BLModel(4, 4, (6, 3), **names), peer.state_dict())
    with torch.no_grad():
        assert torch.allclose(ours.logits(x), peer.logits(x), atol=1e-6)
        assert torch.allclose(ours(x, torch.arange(16) % 4), peer(x, torch.arange(16) % 4), atol=1e-6)


def test_dsm_loss_equals_blnetwork():
    from blnetwork.training.losses import DSMLoss
    torch.manual_seed(1)
    x, y = torch.randn(20, 3), torch.randn(20)
    peer = _peer((5,), x=x, y=y)
    ours = bl.load_blnetwork_state(bl.BLModel(3, 1, (5,), task="continuous"), peer.state_dict())
    torch.manual_seed(7); a = DSMLoss(sigma=0.3, n_noise=3, temperature=0.5)(peer, x, y)
    torch.manual_seed(7); b = bl.dsm_loss(ours, x, y, sigma=0.3, tau=0.5, n_noise=3)
    assert abs(float(a - b)) <= 1e-6 * abs(float(a))


def test_multipliers_positive_and_formula_matches_model():
    torch.manual_seed(2)
    m = bl.BLModel(3, 2, (4, 2), phi2="softplus", phi3="square")
    with torch.no_grad():
        m.backbone.blocks[0].unit.lam.fill_(-30.0)
    assert (m.backbone.blocks[0].unit.multipliers() > 0).all()
    x = torch.randn(10, 3)
    zz = np.concatenate([np.repeat(x.numpy(), 2, 0), np.tile(np.eye(2), (10, 1))], 1)
    with torch.no_grad():
        scores = m.logits(x).numpy().ravel()
    assert np.abs(bl.formula_scores(bl.rounded_parameters(m, 8), zz) - scores).max() < 1e-5
    assert np.abs(bl.formula_scores(bl.rounded_parameters(m, 2), zz) - scores).max() < 0.2


def test_validation():
    with pytest.raises(ValueError, match="phi2"):
        bl.BLModel(3, 2, (4,), phi2="gelu")
    with pytest.raises(ValueError, match="hidden"):
        bl.BLModel(3, 2, ())
    with pytest.raises(ValueError, match="tau"):
        bl.ce_loss(torch.zeros(2, 2), torch.zeros(2), tau=0)
    with pytest.raises(ValueError, match="name"):
        bl.load_split("iris", 0)
    with pytest.raises(ValueError, match="epochs"):
        bl.Config(epochs=0)
    with pytest.raises(ValueError, match="task"):
        bl.BLModel(3, 1, (2,), task="continuous").logits(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="state_dict"):
        bl.load_blnetwork_state(bl.BLModel(3, 2, (4,)), {})


def test_tiny_training_runs_learn():
    Xa, Xb, ya, yb = bl.load_split("breast cancer", 0)
    cfg = bl.Config(hidden=(4,), epochs=8)
    m, sec = bl.fit_classifier(Xa, ya, 2, cfg, 0)
    assert bl.accuracy(m, Xb, yb) > 0.8 and sec > 0
    p, _ = bl.fit_blnetwork_classifier(Xa, ya, 2, cfg, 0)
    assert bl.accuracy(p, Xb, yb) > 0.8
    X, y, ystar = bl.synthetic_ump(200, 0)
    assert np.corrcoef(y, ystar)[0, 1] > 0.8
    u, _ = bl.fit_dsm(X, y, bl.Config(hidden=(4,), epochs=2), 0)
    g = bl.fit_amortized(u, X, y, bl.Config(epochs=2), 0, w_bl=1.0)
    assert g(torch.zeros(1, 4)).shape == (1, 1)


def test_speedups_train_bitwise_as_the_plain_loops():
    """Adam's foreach loop, skipping the BL term at w_bl = 0 and the single-repetition DSM loss change no bit."""
    import torch.nn.functional as F
    X, y, _ = bl.synthetic_ump(120, 0)
    cfg = bl.Config(hidden=(4,), epochs=2)
    u, _ = bl.fit_dsm(X, y, cfg, 0)
    g = bl.fit_amortized(u, X, y, cfg, 0, w_bl=0.0)
    # the reference: the BL term kept at weight 0, Adam's default single-tensor loop
    torch.manual_seed(0)
    Xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    ref = bl.MLP(4, [64], 1)
    opt = torch.optim.Adam(ref.parameters(), lr=cfg.lr, foreach=False)
    gen = torch.Generator().manual_seed(0)
    for _ in range(cfg.epochs):
        for i in torch.randperm(len(Xt), generator=gen).split(cfg.batch):
            opt.zero_grad(set_to_none=True)
            yh = ref(Xt[i])[:, 0]
            (-0.0 * u(Xt[i], yh).mean() + 1.0 * F.mse_loss(yh, yt[i])).backward()
            opt.step()
    assert all(torch.equal(a, b) for a, b in zip(g.state_dict().values(), ref.state_dict().values()))
    x, yy = torch.randn(8, 4), torch.randn(8)
    for p in u.parameters():
        p.requires_grad_(True)
    torch.manual_seed(3)
    y_t = (yy + torch.randn_like(yy) * 0.5).detach().requires_grad_(True)   # the loss written out, with 0 + . / 1
    grad = torch.autograd.grad(u(x, y_t).sum(), y_t, create_graph=True)[0]
    ref = (0.0 + 0.5 * (grad / 1.0 + (y_t - yy) / 0.25).pow(2).mean()) / 1
    params = [p for n, p in u.named_parameters() if n != "head.bias"]      # the score does not see the bias
    ref_grads = torch.autograd.grad(ref, params)
    torch.manual_seed(3)
    ours = bl.dsm_loss(u, x, yy, sigma=0.5)
    assert torch.equal(ours, ref)
    assert all(torch.equal(a, b) for a, b in zip(torch.autograd.grad(ours, params), ref_grads))
