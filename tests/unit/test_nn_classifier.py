"""`repro.nn.classifier`: the minibatch cross-entropy fit that five chapters share, and its accuracy."""
import numpy as np
import pytest
import torch
from torch import nn

from repro.nn import classifier_accuracy, fit_classifier, fit_minibatches


def blobs(n=120, seed=0):
    """Two separable Gaussian blobs in 2-d, labels 0 and 1."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2)) * 0.3 + np.where(y[:, None] == 1, 2.0, -2.0)
    return torch.tensor(X, dtype=torch.float32), torch.tensor(y)


def small_net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))


def reference_epochs(X, y, epochs, batch, lr, seed):
    """The loop the chapters used to write by hand: Adam, one randperm per epoch from a seeded generator."""
    net = small_net()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(epochs):
        total = 0.0
        for idx in torch.randperm(len(y), generator=g).split(batch):
            loss = nn.functional.cross_entropy(net(X[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(y))
    return net, losses


def reference_steps(X, y, steps, batch, lr, seed, weight_decay=0.0, label_smoothing=0.0):
    """The steps variant: rows drawn with replacement (randint), or every row when batch is None."""
    net = small_net()
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        idx = slice(None) if batch is None else torch.randint(0, len(y), (batch,), generator=g)
        loss = nn.functional.cross_entropy(net(X[idx]), y[idx], label_smoothing=label_smoothing)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net


def same_weights(a, b):
    return all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


def test_learns_separable_blobs_and_leaves_eval_mode():
    X, y = blobs()
    net = small_net()
    losses = fit_classifier(net, X, y, epochs=20, batch_size=16, lr=1e-2, seed=1)
    assert len(losses) == 20 and losses[-1] < losses[0]
    assert not net.training
    assert classifier_accuracy(net, X, y) == 1.0


def test_epochs_match_the_hand_written_loop_bitwise():
    X, y = blobs()
    ref, ref_losses = reference_epochs(X, y, epochs=3, batch=16, lr=1e-2, seed=7)
    net = small_net()
    losses = fit_classifier(net, X, y, epochs=3, batch_size=16, lr=1e-2, seed=7)
    assert same_weights(net, ref) and losses == ref_losses


@pytest.mark.parametrize("batch", [16, None])
def test_steps_match_the_hand_written_loop_bitwise(batch):
    X, y = blobs()
    ref = reference_steps(X, y, steps=25, batch=batch, lr=1e-2, seed=3, weight_decay=1e-4, label_smoothing=0.1)
    net = small_net()
    losses = fit_classifier(net, X, y, steps=25, batch_size=batch, lr=1e-2, weight_decay=1e-4, label_smoothing=0.1,
                            seed=3)
    assert same_weights(net, ref) and len(losses) == 25


def test_rows_come_from_a_private_generator_only():
    X, y = blobs()
    net = small_net()
    torch.manual_seed(11)
    before = torch.get_rng_state()
    fit_classifier(net, X, y, epochs=2, batch_size=32, seed=0)
    assert torch.equal(torch.get_rng_state(), before)


def test_given_optimizer_forward_and_after_epoch():
    X, y = blobs()
    net = small_net()
    seen = []
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    fit_classifier(net, X, y, epochs=4, batch_size=32, optimizer=opt, forward=lambda x: net(x) / 2.0,
                   after_epoch=seen.append)
    assert seen == [0, 1, 2, 3]
    assert classifier_accuracy(net, X.numpy(), y.numpy(), forward=lambda x: net(x) / 2.0) == 1.0


def test_fit_minibatches_takes_any_loss():
    X, y = blobs()
    w = torch.zeros(2, requires_grad=True)
    opt = torch.optim.Adam([w], lr=0.1)
    losses = fit_minibatches(lambda rows: ((X[rows] @ w - (2.0 * y[rows] - 1)) ** 2).mean(), len(y), opt,
                             steps=50, batch_size=20)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(epochs=2, steps=2), "exactly one of epochs and steps"),
    (dict(), "exactly one of epochs and steps"),
    (dict(epochs=2, batch_size=None), "needs steps"),
    (dict(epochs=0), "epochs"),
    (dict(steps=3, batch_size=0), "batch_size"),
    (dict(epochs=1, label_smoothing=-0.1), "label_smoothing"),
    (dict(epochs=1, lr=0.0), "lr"),
    (dict(epochs=1, seed=-1), "seed"),
])
def test_bad_arguments_are_named(kwargs, message):
    X, y = blobs(20)
    with pytest.raises(ValueError, match=message):
        fit_classifier(small_net(), X, y, **kwargs)


def test_bad_data_and_optimizer_are_refused():
    X, y = blobs(20)
    net = small_net()
    with pytest.raises(ValueError, match="one row per label"):
        fit_classifier(net, X[:19], y, epochs=1)
    with pytest.raises(ValueError, match="one row per label"):
        fit_classifier(net, X, y[:, None], epochs=1)
    with pytest.raises(ValueError, match="empty"):
        fit_classifier(net, X[:0], y[:0], epochs=1)
    with pytest.raises(ValueError, match="either optimizer or lr"):
        fit_classifier(net, X, y, epochs=1, optimizer=torch.optim.Adam(net.parameters()), lr=1e-2)
    with pytest.raises(ValueError, match="optimizer must be"):
        fit_minibatches(lambda rows: X[rows].sum(), 20, "adam", epochs=1)
    with pytest.raises(ValueError, match="batch_loss must be"):
        fit_minibatches(None, 20, torch.optim.Adam(net.parameters()), epochs=1)
    with pytest.raises(ValueError, match="one row per label"):
        classifier_accuracy(net, X[:5], y)
