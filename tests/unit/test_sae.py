"""Unit tests of repro.nn.sae (chapters/temporal-sae): activations, Matryoshka and AuxK losses, metrics, training."""
import pytest
import torch

from repro.nn.sae import (SAE, SAEOutput, batch_topk_activation, dead_fraction, encode_all, evaluate_sae, fvu, l0,
                          reconstruction_cosine, topk_activation, train_sae)


def test_topk_keeps_k_per_row_and_drops_negatives():
    pre = torch.tensor([[3.0, -1.0, 2.0, 0.5], [-1.0, -2.0, 0.1, -3.0]])
    codes = topk_activation(pre, 2)
    assert torch.equal(codes, torch.tensor([[3.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.1, 0.0]]))   # row 2: one positive


def test_batch_topk_keeps_k_times_batch_over_the_whole_batch():
    torch.manual_seed(0)
    pre = torch.randn(16, 32).abs() + 0.01
    codes, smallest = batch_topk_activation(pre, 3)
    assert int((codes != 0).sum()) == 3 * 16
    # rows may hold more or fewer than k; the kept values are the 48 largest of the batch
    assert torch.allclose(codes[codes != 0].sort().values, pre.flatten().topk(48).values.sort().values)
    assert float(smallest) == pytest.approx(float(pre.flatten().topk(48).values.min()))
    # a hand case: the batch's two largest values sit in the same row
    codes, _ = batch_topk_activation(torch.tensor([[5.0, 4.0], [1.0, 0.5]]), 1)
    assert torch.equal(codes, torch.tensor([[5.0, 4.0], [0.0, 0.0]]))


def test_batchtopk_threshold_is_learned_and_used_at_inference():
    sae = SAE(4, 8, 2, seed=0)
    x = torch.randn(64, 4)
    sae.train()
    sae(x)
    assert not torch.isnan(sae.threshold)
    sae.eval()
    pre = sae.pre_activation(x)
    out = sae(x)
    assert torch.equal(out.codes, pre * (pre > sae.threshold))


def _hand_sae():
    """d=2, m=2, identity encoder and decoder, no biases, TopK k=2: codes = relu(x)."""
    sae = SAE(2, 2, 2, activation="topk", prefixes=(1, 2))
    with torch.no_grad():
        sae.W_enc.copy_(torch.eye(2))
        sae.W_dec.copy_(torch.eye(2))
    return sae


def test_matryoshka_loss_sums_the_prefix_reconstructions():
    sae = _hand_sae()
    x = torch.tensor([[1.0, 2.0], [3.0, 0.0]])
    out = sae(x)
    # full prefix reconstructs exactly; prefix 1 drops the second coordinate: errors 2^2 + 0 = 4
    denom = ((x - x.mean(0)) ** 2).sum()                     # (1-2)^2*2 + (2-1)^2*2 = 4
    assert float(sae.reconstruction_loss(x, out).detach()) == pytest.approx(4.0 / float(denom) + 0.0)
    plain = SAE(2, 2, 2, activation="topk")
    with torch.no_grad():
        plain.W_enc.copy_(torch.eye(2))
        plain.W_dec.copy_(torch.eye(2))
    assert float(plain.reconstruction_loss(x, plain(x)).detach()) == pytest.approx(0.0)


def test_aux_loss_uses_only_dead_latents():
    sae = _hand_sae()
    x = torch.tensor([[1.0, 2.0], [3.0, 1.0]])
    out = SAEOutput(pre=x.clone(), codes=torch.zeros(2, 2), recon=torch.zeros(2, 2))   # nothing reconstructed
    none_dead = sae.aux_loss(x, out, torch.tensor([False, False]), k_aux=1)
    assert float(none_dead.detach()) == 0.0
    # latent 0 dead: it reconstructs the first coordinate of the error exactly, the second stays
    dead0 = sae.aux_loss(x, out, torch.tensor([True, False]), k_aux=1)
    err = x
    expected = (err[:, 1] ** 2).sum() / ((err - err.mean(0)) ** 2).sum()
    assert float(dead0.detach()) == pytest.approx(float(expected))


def test_metrics_on_hand_cases():
    x = torch.tensor([[1.0, 0.0], [-1.0, 0.0]])
    assert fvu(x, x) == 0.0
    assert fvu(x, torch.zeros_like(x)) == pytest.approx(1.0)        # predicting the mean explains nothing
    assert reconstruction_cosine(x, 2 * x) == pytest.approx(1.0)
    codes = torch.tensor([[1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 1.0]])
    assert l0(codes) == pytest.approx(1.5)
    assert dead_fraction(codes) == pytest.approx(0.5)


def test_decoder_columns_stay_unit_norm_and_training_lowers_the_loss():
    torch.manual_seed(0)
    basis = torch.randn(16, 8)
    sparse = (torch.rand(2048, 16) < 0.1).float() * torch.rand(2048, 16)
    acts = sparse @ basis
    sae = SAE(8, 32, 2, prefixes=(8, 32), seed=0)
    hist = train_sae(sae, acts, steps=150, batch_size=256, lr=3e-3)
    assert torch.allclose(sae.W_dec.norm(dim=0), torch.ones(32), atol=1e-5)
    assert sum(hist["recon"][-10:]) < sum(hist["recon"][:10])
    stats = evaluate_sae(sae, acts)
    assert set(stats) == {"fvu", "cosine", "l0", "dead"} and 0 <= stats["dead"] <= 1
    assert stats["fvu"] < 0.6
    codes, recon = encode_all(sae, acts[:10])
    assert codes.shape == (10, 32) and recon.shape == (10, 8)


def test_validation_errors_name_the_argument():
    with pytest.raises(ValueError, match="k must"):
        SAE(4, 8, 9)
    with pytest.raises(ValueError, match="activation"):
        SAE(4, 8, 2, activation="relu")
    with pytest.raises(ValueError, match="prefixes"):
        SAE(4, 8, 2, prefixes=(4, 6))
    with pytest.raises(ValueError, match="d_in"):
        SAE(0, 8, 2)
    sae = SAE(4, 8, 2)
    with pytest.raises(ValueError, match="x must"):
        sae(torch.zeros(3, 5))
    with pytest.raises(ValueError, match="acts"):
        train_sae(sae, torch.zeros(10, 3), steps=1)
    with pytest.raises(ValueError, match="steps"):
        train_sae(sae, torch.zeros(10, 4), steps=-1)


def test_shared_decoder_helpers_keep_unit_columns_along_either_axis():
    from repro.nn.sae import normalize_columns_, remove_parallel_gradient_
    for dim in (0, 1):
        W = torch.randn(5, 7, requires_grad=True)
        with torch.no_grad():
            normalize_columns_(W, dim)
        torch.testing.assert_close(W.norm(dim=dim), torch.ones(W.shape[1 - dim]))
        remove_parallel_gradient_(W, dim)                     # no gradient yet: nothing happens
        (W * torch.randn(5, 7)).sum().backward()
        remove_parallel_gradient_(W, dim)
        torch.testing.assert_close((W.grad * W).sum(dim), torch.zeros(W.shape[1 - dim]), atol=1e-6, rtol=0)
