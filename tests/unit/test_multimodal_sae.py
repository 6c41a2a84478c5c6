"""Unit tests of repro.multimodal_sae (chapters/multimodal-sae): captions, the tiny CLIP, the stacked paired SAE
(null control, the mask, the group loss, decoder norms), the metrics and validation."""
import numpy as np
import pytest
import torch

from repro import multimodal_sae as ms
from repro.nn.sae import topk_activation


def pairs(n=400, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(n, d, generator=g)
    x = torch.nn.functional.normalize(s + 0.3 * torch.randn(n, d, generator=g), dim=-1)
    y = torch.nn.functional.normalize(s + 0.3 * torch.randn(n, d, generator=g), dim=-1)
    return x, y


# ------------------------------------------------------------------ data and CLIP

def test_captions_and_attributes():
    data = ms.load_captioned_digits(n_captions=3, seed=0)
    assert data.images.shape == (1797, 64) and len(data.captions) == 1797 and len(data.captions[0]) == 3
    assert data.attribute_vectors.shape == (1797, 17)
    np.testing.assert_allclose(data.attribute_vectors.sum(1), 4)
    for c in range(10):                                     # ink is split at the class median
        assert 0.3 < data.attributes[data.labels == c, 0].mean() < 0.7
    words = data.caption_text(0, 0).split()
    assert words and all(w in data.vocab for w in words)
    prompts = ms.prompt_tokens(data.vocab)
    assert len(prompts) == 10 and len(prompts[0]) == len(ms.captions.PROMPTS)


def test_clip_trains_and_gap_metrics():
    data = ms.load_captioned_digits(n_captions=2, seed=1)
    model, hist = ms.train_clip(data, np.arange(300), steps=30, batch_size=64, seed=0)
    assert hist["loss"][-1] < hist["loss"][0]
    x, y, rows = ms.embed_pairs(model, data, np.arange(300, 340))
    assert x.shape == (80, 32) and rows.shape == (80,)
    torch.testing.assert_close(x.norm(dim=-1), torch.ones(80))
    g = ms.modality_gap(x, y)
    assert 0 <= g["gap"] <= 2 and -1 <= g["paired_cosine"] <= 1
    pe = ms.embed_prompts(model, ms.prompt_tokens(data.vocab))
    assert pe.shape == (10, 3, 32)
    assert 0 <= ms.dense_zero_shot(x, pe, data.labels[rows]) <= 1
    hits = ms.dense_zero_shot_hits(x, pe, data.labels[rows])
    assert hits.shape == (80,) and hits.mean() == pytest.approx(ms.dense_zero_shot(x, pe, data.labels[rows]))


# ------------------------------------------------------------------ the paired SAE

def test_null_control_lambda_zero_no_mask_is_the_sae():
    x, y = pairs()
    a = ms.PairedSAE(8, 32, 3, lambdas=[0.0], p_masks=[0.0], seed=3)
    b = ms.PairedSAE(8, 32, 3, lambdas=[0.0, 0.5], p_masks=[0.0, 0.4], seed=3)   # mask on: other rows differ
    ms.train_paired(a, x, y, steps=40, batch_size=32, seed=5)
    ms.train_paired(b, x, y, steps=40, batch_size=32, seed=5)
    za, zb = a.encode(x, 0), b.encode(x, 0)
    torch.testing.assert_close(za[0], zb[0], rtol=0, atol=1e-6)
    assert (za[0] - zb[1]).abs().max() > 1e-3


def test_encode_uses_book_topk_and_modality_bias():
    sae = ms.PairedSAE(8, 16, 2, lambdas=[0.1, 0.0], p_masks=[0.0, 0.2], seed=0)
    with torch.no_grad():
        sae.b_pre[:, 1] += 0.5
    x, _ = pairs(10)
    pre = (x - sae.b_pre[0, 0]) @ sae.W_enc[0].t() + sae.b_enc[0]
    torch.testing.assert_close(sae.encode(x, 0)[0], topk_activation(pre, 2))
    assert not torch.allclose(sae.encode(x, 0), sae.encode(x, 1))
    assert ((sae.encode(x, 1) != 0).sum(-1) <= 2).all()


def test_mask_is_shared_and_has_the_right_rate():
    sae = ms.PairedSAE(8, 200, 2, lambdas=[0.0, 0.0], p_masks=[0.0, 0.3], seed=0)
    m = sae.draw_mask(50, torch.Generator().manual_seed(0))
    assert m.shape == (2, 50, 200) and m[0].min() == 1
    assert abs(float(1 - m[1].mean()) - 0.3) < 0.02


def test_group_loss_and_decoder_norms():
    x, y = pairs()
    sae = ms.PairedSAE(8, 32, 3, lambdas=[0.0, 1.0], p_masks=[0.0, 0.0], seed=0)
    loss, rec, group = sae.loss(x[:16], y[:16])
    torch.testing.assert_close(loss, rec + torch.tensor([0.0, 1.0]) * group)
    zx, zy = sae.encode(x[:16], 0), sae.encode(y[:16], 1)
    torch.testing.assert_close(group, torch.sqrt(zx ** 2 + zy ** 2 + 1e-12).sum(-1).mean(1))
    hist = ms.train_paired(sae, x, y, steps=20, batch_size=32)
    assert hist["loss"].shape == (20, 2)
    torch.testing.assert_close(sae.W_dec.norm(dim=1), torch.ones(2, 32))


# ------------------------------------------------------------------ metrics

def test_neuron_counts_and_cosines():
    zx = torch.zeros(4, 5); zy = torch.zeros(4, 5)
    zx[:, 0] = 1; zy[:, 1] = 1; zx[:2, 2] = 1; zy[:2, 2] = 1
    c = ms.neuron_counts(zx, zy)
    assert (c["image-only"][0], c["text-only"][0], c["both"][0], c["dead"][0]) == (1, 1, 1, 2)
    pc = ms.paired_cosine(zx, zy)[0]
    assert pc == pytest.approx(0.25)                        # half the pairs share latent 2: cosine 1/2
    np.testing.assert_allclose(ms.paired_cosines(zx, zy)[0], [0.5, 0.5, 0.0, 0.0], atol=1e-6)
    x = torch.randn(6, 3); y = torch.randn(6, 3)
    assert ms.pair_fvu(x, y, x, y)[0] == pytest.approx(0.0)
    assert ms.pair_fvu(x, y, x.mean(0).expand(6, 3), y.mean(0).expand(6, 3))[0] == pytest.approx(1.0)


def test_zero_shot_from_codes_and_mms():
    z_img = torch.eye(3)[[0, 1, 2, 0]]
    z_prompts = torch.eye(3).repeat_interleave(2, 0)         # 3 classes, 2 prompts each
    assert ms.code_zero_shot(z_img, z_prompts, [0, 1, 2, 0])[0] == 1.0
    assert ms.code_zero_shot(z_img, z_prompts, [1, 1, 2, 0])[0] == 0.75
    a = torch.tensor([[1.0, 0.0], [0.0, 0.0]]); b = torch.tensor([[1.0, 1.0], [0.0, 0.0]])
    s = ms.mms(a, b, torch.tensor([[0.8, 0.1], [0.1, 1.0]]))[0]
    assert s[0] == pytest.approx(0.8) and np.isnan(s[1])


# ------------------------------------------------------------------ validation and the study

@pytest.mark.parametrize("call, name", [
    (lambda: ms.PairedSAE(8, 4, 5, [0.0], [0.0]), "k"),
    (lambda: ms.PairedSAE(8, 16, 2, [0.0, 0.1], [0.0]), "lambdas"),
    (lambda: ms.PairedSAE(8, 16, 2, [-1.0], [0.0]), "lambdas"),
    (lambda: ms.PairedSAE(8, 16, 2, [0.0], [1.0]), "p_masks"),
    (lambda: ms.PairedSAE(8, 16, 2, [0.0], [0.0]).encode(torch.zeros(2, 8), 2), "modality"),
    (lambda: ms.train_paired(ms.PairedSAE(8, 16, 2, [0.0], [0.0]), torch.zeros(4, 7), torch.zeros(4, 7), 1), "x"),
    (lambda: ms.neuron_counts(torch.zeros(2, 3), torch.zeros(2, 3), share=0.4), "share"),
    (lambda: ms.load_captioned_digits(n_captions=0), "n_captions"),
    (lambda: ms.run_study(0, "huge"), "scale"),
    (lambda: ms.digit_attributes(np.zeros((3, 63)), np.zeros(3)), "images"),
])
def test_validation_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_study_row_and_variants():
    assert set(ms.VARIANTS) == {"SAE", "GSAE", "MGSAE"}
    assert all(v in [(lam, pm) for lam in ms.LAMBDAS for pm in ms.P_MASKS] for v in ms.VARIANTS.values())
    assert ms.VARIANTS["SAE"] == (0.0, 0.0)


def test_zero_shot_hits_average_to_the_accuracy_and_the_gain_has_an_interval():
    import numpy as np

    from repro.multimodal_sae.experiment import VARIANTS, Study, zero_shot_gain

    grid = list(VARIANTS.values())
    hits = np.zeros((len(grid), 200), dtype=bool)
    hits[grid.index(VARIANTS["MGSAE"]), :120] = True      # MGSAE right on 60% of the images
    hits[grid.index(VARIANTS["SAE"]), :100] = True        # the SAE on 50%: a gain of 10 points
    study = Study(seed=0, grid=grid, table={}, clip_history={}, gap={}, dense_zero_shot=0.0, null_max_diff=0.0,
                  sae_seconds=0.0, sae_steps=0, zero_shot_hits=hits)
    gain, lo, hi = zero_shot_gain([study])
    assert gain == pytest.approx(10.0) and 5.0 < lo < 10.0 < hi < 15.0
    with pytest.raises(ValueError, match="kept no per-image hits"):
        zero_shot_gain([Study(seed=1, grid=grid, table={}, clip_history={}, gap={}, dense_zero_shot=0.0,
                              null_max_diff=0.0, sae_seconds=0.0, sae_steps=0)])


def test_below_dense_and_paired_cosine_gain_have_paired_intervals():
    from repro.multimodal_sae.experiment import VARIANTS, Study, below_dense, paired_cosine_gain

    grid = list(VARIANTS.values())
    hits = np.zeros((len(grid), 200), dtype=bool)
    hits[grid.index(VARIANTS["MGSAE"]), :120] = True      # MGSAE right on 60% of the images
    dense = np.zeros(200, dtype=bool)
    dense[:160] = True                                    # the dense embedding on 80%: 20 points above
    cos = np.zeros((len(grid), 200))
    cos[grid.index(VARIANTS["GSAE"])] = np.linspace(0.0, 0.2, 200)   # GSAE's pairs 0.1 more aligned on average
    kept = dict(grid=grid, table={}, clip_history={}, gap={}, dense_zero_shot=0.8, null_max_diff=0.0, sae_seconds=0.0,
                sae_steps=0)
    study = Study(seed=0, zero_shot_hits=hits, dense_hits=dense, pair_cosines=cos, **kept)
    gap, lo, hi = below_dense([study])
    assert gap == pytest.approx(20.0) and 10.0 < lo < 20.0 < hi < 30.0
    gain, lo, hi = paired_cosine_gain([study])
    assert gain == pytest.approx(0.1) and 0.08 < lo < 0.1 < hi < 0.12
    with pytest.raises(ValueError, match="dense embedding"):
        below_dense([Study(seed=1, zero_shot_hits=hits, **kept)])
    with pytest.raises(ValueError, match="per-pair cosines"):
        paired_cosine_gain([Study(seed=1, **kept)])
