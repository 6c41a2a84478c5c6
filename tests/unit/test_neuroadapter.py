"""Unit tests of repro.neuroadapter: the simulated cortex, the attention views, the DDIM step, input checks, and a
few training steps of the shipping code."""
import numpy as np
import pytest
import torch

from repro.neuroadapter.adapter import NeuroAdapter, ParcelMapper, token_dropout, train_adapter, train_unet
from repro.neuroadapter.baselines import shuffled
from repro.neuroadapter.cortex import PARCELS, VOXELS, Cortex, digit_stimuli, upsample
from repro.neuroadapter.diffusion import Schedule, ddim_step, ddim_timesteps, guided_eps, min_snr_weight, sample
from repro.neuroadapter.ibbi import brain_view, image_view, peak_distance, roi_share, spatial_entropy
from repro.neuroadapter.metrics import pixcorr, ssim, two_way_identification
from repro.neuroadapter.unet import TinyUNet, UNetConfig


@pytest.fixture(scope="module")
def small():
    tr = digit_stimuli("train", 3, shifts=1)
    te = digit_stimuli("test", 3, n_test_base=20)
    return tr, te, Cortex(3).fit(tr)


def test_stimuli_shapes_and_range(small):
    tr, te, _ = small
    assert tr.x.shape == (1200, 16, 16) and te.x.shape == (20, 16, 16)
    assert tr.x.min() >= -1 and tr.x.max() <= 1 and set(np.unique(tr.y)) == set(range(10))
    assert not set(tr.base) & set(te.base)                     # train and test digits are disjoint


def test_cortex_shapes_and_rf_centres(small):
    tr, te, cx = small
    v = cx.respond(te, 0)
    assert v.shape == (20, sum(PARCELS.values()), VOXELS) and cx.n_parcels == len(cx.roi_of)
    assert [cx.roi_of[i] for i in cx.parcels("V1")] == ["V1"] * 16
    c = cx.rf_centres["V1"]
    assert c.shape == (16, 2) and c.min() == 1.5 and c.max() == 13.5
    # a V1 parcel responds only to its own patch: a pixel far from its RF changes nothing
    img = te.subset([0])
    bumped = type(img)(img.x.copy(), img.y, img.base)
    bumped.x[0, 14, 14] += 1.0
    d = np.abs(cx.signal(bumped) - cx.signal(img))[0]
    assert d[cx.parcels("V1")[0]].max() < 1e-6 and d[cx.parcels("V1")[-1]].max() > 1e-3
    assert np.all(d[cx.parcels("noise")] == 0)


def test_upsample_and_checks():
    u = upsample(np.ones((2, 8, 8)))
    assert u.shape == (2, 16, 16) and np.allclose(u, 1)
    with pytest.raises(ValueError, match="images8"):
        upsample(np.ones((8, 8)))
    with pytest.raises(ValueError, match="split"):
        digit_stimuli("val", 0)
    with pytest.raises(ValueError, match="roi"):
        Cortex(0).parcels("V2")


def _trace(n=3, p=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {"a": torch.softmax(torch.randn(n, 64, p, generator=g), -1),
            "b": torch.softmax(torch.randn(n, 16, p, generator=g), -1)}


def test_brain_view_normalises_and_weights_by_queries():
    step = _trace()
    b = brain_view(step)
    assert b.shape == (3, 5) and torch.allclose(b.sum(1), torch.ones(3))
    expected = (step["a"].sum(1) + step["b"].sum(1)) / 80
    assert torch.allclose(b, expected)
    share = roi_share(b, ["x", "x", "y", "y", "y"])
    assert abs(share["x"] + share["y"] - 1) < 1e-6


def test_image_view_shape_and_entropy():
    step = _trace()
    m = image_view(step, [0, 1])
    assert m.shape == (3, 16, 16) and torch.allclose(m.sum((1, 2)), torch.ones(3))
    assert torch.allclose(spatial_entropy(torch.ones(4, 4)), torch.tensor(1.0))
    point = torch.zeros(4, 4)
    point[1, 2] = 1
    assert float(spatial_entropy(point)) < 1e-6
    assert peak_distance(point[None], [[1, 2]])[0] == 0
    with pytest.raises(ValueError, match="parcels"):
        image_view(step, [7])
    with pytest.raises(ValueError, match="step"):
        brain_view({})


def test_entropy_by_step_per_image_averages_to_the_default():
    from types import SimpleNamespace

    from repro.neuroadapter.experiment import entropy_by_step

    ctx = SimpleNamespace(data={"cortex": SimpleNamespace(parcels=lambda r: {"x": [0, 1], "y": [2, 3, 4]}[r])})
    trace = [_trace(seed=s) for s in range(4)]
    per = entropy_by_step(ctx, trace, ("x", "y"), per_image=True)
    assert per.shape == (4, 2, 3)
    np.testing.assert_allclose(per.mean(-1), entropy_by_step(ctx, trace, ("x", "y")))
    np.testing.assert_allclose(per[2, 1], spatial_entropy(image_view(trace[2], [2, 3, 4])).numpy(), rtol=1e-6)


def test_ddim_step_is_deterministic_and_recovers_x0():
    s = Schedule(200)
    # float64: at the noisiest step 1/sqrt(alpha_bar) is about 4000, which turns float32 rounding into 5e-4
    x0, eps = torch.rand(2, 1, 4, 4, dtype=torch.float64) * 2 - 1, torch.randn(2, 1, 4, 4, dtype=torch.float64)
    ts = ddim_timesteps(s, 10)
    assert ts[0] == 199 and ts[-1] == 0 and len(ts) == 10
    x = s.q_sample(x0, torch.full((2,), ts[0]), eps)
    for i, t in enumerate(ts):
        x, x0_hat = ddim_step(s, x, eps, t, ts[i + 1] if i + 1 < len(ts) else None)
        assert torch.allclose(x0_hat, x0, atol=1e-9)
    assert torch.allclose(x, x0, atol=1e-9)
    assert float(min_snr_weight(s, torch.tensor([199]))) == 1.0
    assert float(guided_eps(torch.tensor(1.0), torch.tensor(0.0), 2.0)) == 2.0
    with pytest.raises(ValueError, match="t must"):
        ddim_step(s, x, eps, 200, None)
    with pytest.raises(ValueError, match="guidance"):
        guided_eps(x, x, -1.0)


def test_mapper_dropout_and_metrics():
    m = ParcelMapper(3, 4, 2)
    assert m(torch.randn(5, 3, 4)).shape == (5, 3, 2)
    with pytest.raises(ValueError, match="voxels"):
        m(torch.randn(5, 4, 4))
    keep = token_dropout(1000, 8, torch.Generator().manual_seed(0))
    assert 0.4 < keep.float().mean() < 0.6                    # E[1 - r] = 1/2
    a = np.random.default_rng(0).normal(size=(6, 16, 16))
    assert np.allclose(pixcorr(a, a), 1) and np.allclose(ssim(np.clip(a, -1, 1), np.clip(a, -1, 1)), 1)
    f = np.random.default_rng(1).normal(size=(10, 8))
    assert two_way_identification(f, f) == 1.0
    v = np.arange(10)
    assert not np.any(shuffled(v, 0) == v) and sorted(shuffled(v, 0)) == list(v)


def test_a_few_training_steps_and_recorded_sampling(small):
    tr, _, cx = small
    torch.manual_seed(0)
    unet = TinyUNet(UNetConfig())
    losses = train_unet(unet, tr.x[:64], steps=2, batch=8)
    assert len(losses) == 2 and all(np.isfinite(losses))
    frozen = {k: v.clone() for k, v in unet.state_dict().items()}
    adapter = NeuroAdapter(unet, cx.n_parcels, VOXELS)
    vox = cx.respond(tr.subset(np.arange(64)), 0)
    losses = train_adapter(unet, adapter, tr.x[:64], vox, steps=2, batch=8)
    assert all(np.isfinite(losses))
    after = unet.state_dict()                               # now also holds the attached brain branches
    assert all(torch.equal(v, after[k]) for k, v in frozen.items())                 # stage 1 leaves the U-Net frozen
    tokens = adapter.tokens(torch.as_tensor(vox[:2]))
    x, trace = sample(unet, Schedule(), tokens, guidance=2.0, steps=3, record=True)
    assert x.shape == (2, 1, 16, 16) and len(trace) == 3
    assert trace[0]["down"].shape == (2, 64, cx.n_parcels) and trace[0]["mid"].shape == (2, 16, cx.n_parcels)
    with pytest.raises(ValueError, match="images and voxels"):
        train_adapter(unet, adapter, tr.x[:10], vox[:9], steps=1)


def test_guided_forward_matches_forward_bitwise():
    """The sampler's ``forward_guided`` (null-token shortcut, brain branch on the conditional half, keys computed
    once) gives exactly the numbers and the recorded attention of ``forward`` on the stacked guidance batch."""
    torch.manual_seed(1)
    unet = TinyUNet(UNetConfig()).eval()
    n, p = 5, 7
    x = torch.randn(n, 1, 16, 16)
    xx, t = torch.cat([x, x]), torch.full((2 * n,), 120, dtype=torch.long)
    tokens = torch.randn(n, p, unet.config["context"])
    both = torch.cat([tokens, torch.zeros_like(tokens)])
    with torch.no_grad():
        empty = unet.brain_keys(both, n)
        assert all(v is None for v in empty.values())                                  # no adapter: no branch
        assert torch.equal(unet.forward_guided(xx, t, empty), unet(xx, t, both))
        NeuroAdapter(unet, p, 3).attach(unet)
        for s in unet.SITES:
            unet.attn[s].record = []
        ref = unet(xx, t, both)
        rec_ref = {s: unet.attn[s].record[0][:n] for s in unet.SITES}
        for s in unet.SITES:
            unet.attn[s].record = []
        out = unet.forward_guided(xx, t, unet.brain_keys(both, n))
        rec = {s: unet.attn[s].record[0] for s in unet.SITES}
    assert torch.equal(out, ref)
    assert all(torch.equal(rec[s], rec_ref[s]) for s in unet.SITES)
