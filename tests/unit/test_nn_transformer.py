"""The book's transformer, its MoE layer, the LM loss and trainer, and checkpoints (lib/repro/nn)."""
import math

import pytest
import torch

from repro.nn import (MoEFeedForward, Transformer, TransformerConfig, balance_loss, load_checkpoint, lm_loss,
                      save_checkpoint, top_k_gates, train_lm)


def tiny(**kw):
    torch.manual_seed(0)
    return Transformer(TransformerConfig(vocab_size=17, max_len=16, d_model=16, n_layers=2, n_heads=2, **kw))


def tokens(batch=3, length=10, vocab=17, seed=1):
    return torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def test_dense_shapes_and_residuals():
    model, t = tiny(), tokens()
    out = model(t)
    assert out.logits.shape == (3, 10, 17)
    assert len(out.residuals) == 3 and all(r.shape == (3, 10, 16) for r in out.residuals)
    assert out.router_logits == [] and float(out.balance_loss) == 0.0


def test_causal_future_tokens_do_not_change_the_past():
    model, t = tiny(n_experts=3, top_k=2), tokens()
    changed = t.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 17
    a, b = model(t), model(changed)
    assert torch.allclose(a.logits[:, :6], b.logits[:, :6], atol=1e-6)
    assert not torch.allclose(a.logits[:, 6:], b.logits[:, 6:])


def test_moe_shapes_and_gate_normalisation():
    model = tiny(n_experts=4, top_k=2)
    out = model(tokens())
    assert len(out.router_logits) == len(out.gates) == len(out.experts) == 2
    for gates, experts in zip(out.gates, out.experts):
        assert gates.shape == (3, 10, 4) and experts.shape == (3, 10, 2)
        assert torch.allclose(gates.sum(-1), torch.ones(3, 10))
        assert ((gates > 0).sum(-1) == 2).all()
        chosen = gates.gather(-1, experts)
        assert (chosen[..., 0] >= chosen[..., 1]).all()  # highest gate first


def test_top_k_gates_hand_case():
    logits = torch.log(torch.tensor([[0.1, 0.2, 0.3, 0.4]]))
    gates, idx = top_k_gates(logits, 2)
    assert idx.tolist() == [[3, 2]]
    assert torch.allclose(gates, torch.tensor([[0.0, 0.0, 3 / 7, 4 / 7]]))
    with pytest.raises(ValueError, match="top_k"):
        top_k_gates(logits, 5)


def test_balance_loss_is_one_when_uniform_and_larger_when_collapsed():
    uniform = torch.zeros(8, 4)
    spread = torch.arange(8).remainder(4).unsqueeze(-1)
    assert math.isclose(float(balance_loss(uniform, spread)), 1.0, rel_tol=1e-6)
    collapsed = torch.tensor([[5.0, 0, 0, 0]]).repeat(8, 1)
    assert float(balance_loss(collapsed, torch.zeros(8, 1, dtype=torch.long))) > 3.0


def test_moe_layers_subset():
    model = tiny(n_experts=2, moe_layers=(1,))
    assert model.moe_blocks == [1]
    assert len(model(tokens()).gates) == 1


def test_steering_hook_changes_routing_only_inside_the_context():
    model, t = tiny(n_experts=4, top_k=1), tokens()
    before = model(t).experts[0]

    def force_expert_2(logits):
        return logits + torch.tensor([0.0, 0.0, 100.0, 0.0])

    with model.steer_router(0, force_expert_2):
        steered = model(t)
    assert (steered.experts[0] == 2).all()
    assert torch.equal(model(t).experts[0], before)
    with pytest.raises(ValueError, match="no router"):
        with tiny().steer_router(0, force_expert_2):
            pass


def test_dense_and_single_expert_moe_agree():
    dense, moe = tiny(), tiny(n_experts=1, top_k=1)
    state = dense.state_dict()
    for i in range(2):
        expert = moe.blocks[i].mlp
        with torch.no_grad():
            expert.w_in[0].copy_(state[f"blocks.{i}.mlp.0.weight"].T)
            expert.b_in[0].copy_(state[f"blocks.{i}.mlp.0.bias"])
            expert.w_out[0].copy_(state[f"blocks.{i}.mlp.2.weight"].T)
            expert.b_out[0].copy_(state[f"blocks.{i}.mlp.2.bias"])
    shared = {k: v for k, v in state.items() if ".mlp." not in k}
    moe.load_state_dict(shared, strict=False)
    t = tokens()
    assert torch.allclose(dense(t).logits, moe(t).logits, atol=1e-5)


def test_sparse_dispatch_is_the_dense_model():
    torch.manual_seed(0)
    dense = tiny(n_experts=4, top_k=2)
    sparse = Transformer(TransformerConfig(**{**dense.cfg.__dict__, "moe_dispatch": "sparse"}))
    sparse.load_state_dict(dense.state_dict())
    t = tokens()
    out_d, out_s = dense(t), sparse(t)
    assert torch.allclose(out_d.logits, out_s.logits, atol=1e-6)
    assert all(torch.equal(a, b) for a, b in zip(out_d.experts, out_s.experts))
    out_d.logits.square().sum().backward()
    out_s.logits.square().sum().backward()
    for (name, a), b in zip(dense.named_parameters(), sparse.parameters()):
        assert torch.allclose(a.grad, b.grad, atol=1e-5), name


def test_freeze_routers():
    model = tiny(n_experts=3)
    model.freeze_routers()
    assert not any(b.mlp.router.weight.requires_grad for b in model.blocks)
    with pytest.raises(ValueError, match="no routers"):
        tiny().freeze_routers()


def test_lm_loss_hand_case_and_mask():
    logits = torch.zeros(1, 3, 4)
    logits[0, 0, 2] = 10.0  # position 0 predicts token 2 confidently (right); position 1 is uniform
    t = torch.tensor([[0, 2, 1]])
    uniform = math.log(4)
    assert math.isclose(float(lm_loss(logits, t)), (0 + uniform) / 2, abs_tol=1e-3)
    mask = torch.tensor([[False, False, True]])
    assert math.isclose(float(lm_loss(logits, t, mask)), uniform, rel_tol=1e-5)
    with pytest.raises(ValueError, match="mask"):
        lm_loss(logits, t, torch.zeros(1, 3, dtype=torch.bool))


def test_train_lm_learns_a_repeating_sequence():
    model = tiny(n_experts=2)
    seq = torch.arange(16).remainder(5).repeat(4, 1)
    history = train_lm(model, lambda step: seq, steps=60, lr=1e-2)
    assert history["loss"][-1] < 0.3 * history["loss"][0]


def test_frozen_router_does_not_move_when_training():
    model = tiny(n_experts=2)
    model.freeze_routers()
    before = model.blocks[0].mlp.router.weight.clone()
    train_lm(model, lambda step: tokens(), steps=3, weight_decay=0.1)
    assert torch.equal(before, model.blocks[0].mlp.router.weight)


def test_checkpoint_round_trip(tmp_path):
    model = tiny(n_experts=2, moe_layers=(0,))
    path = save_checkpoint(model, tmp_path / "m.pt", command="test", seed=3)
    loaded, prov = load_checkpoint(path)
    assert prov["seed"] == 3 and prov["command"] == "test" and "time" in prov
    t = tokens()
    assert torch.equal(model(t).logits, loaded(t).logits)
    with pytest.raises(FileNotFoundError, match="not found"):
        load_checkpoint(tmp_path / "missing.pt")


@pytest.mark.parametrize("kwargs, match", [
    (dict(d_model=10, n_heads=3), "divisible"),
    (dict(n_experts=2, top_k=3), "top_k"),
    (dict(n_layers=2, n_experts=2, moe_layers=(5,)), "moe_layers"),
    (dict(vocab_size=0), "vocab_size"),
    (dict(n_experts=2, moe_dispatch="lazy"), "moe_dispatch"),
])
def test_config_validation(kwargs, match):
    base = dict(vocab_size=5)
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        TransformerConfig(**base)


def test_forward_validates_tokens():
    model = tiny()
    with pytest.raises(ValueError, match="max_len"):
        model(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 17\)"):
        model(torch.full((1, 3), 17))
    with pytest.raises(ValueError, match="integers"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="batch, length"):
        model(torch.zeros(3, dtype=torch.long))


def test_moe_layer_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_experts"):
        MoEFeedForward(4, 8, 0, 1)
    with pytest.raises(ValueError, match="dispatch"):
        MoEFeedForward(4, 8, 2, 1, dispatch="lazy")


def test_moe_sizes_give_the_moe_and_its_dense_twin():
    from dataclasses import FrozenInstanceError, asdict, fields

    from repro.moe_grokking import GrokkingConfig
    from repro.moe_multilingual import MultilingualConfig
    from repro.nn import MoESizes

    sizes = MoESizes(d_model=16, n_layers=2, n_heads=2, n_experts=4, top_k=2, d_expert=8)
    moe = sizes.transformer_config(vocab_size=11, max_len=6)
    assert (moe.n_experts, moe.top_k, moe.d_expert, moe.max_len, moe.d_mlp) == (4, 2, 8, 6, None)
    dense = sizes.transformer_config(vocab_size=11, max_len=6, dense=True)
    assert (dense.n_experts, dense.d_mlp) == (0, 2 * 8)                   # the top_k experts' active width
    with pytest.raises(FrozenInstanceError):
        sizes.d_model = 32
    names = [f.name for f in fields(MoESizes)]
    for cfg in (GrokkingConfig(), MultilingualConfig()):                # the chapters' configs lead with the sizes
        assert list(asdict(cfg))[:len(names)] == names
    assert GrokkingConfig().model_config(12) == MoESizes().transformer_config(12, max_len=4)
    assert MultilingualConfig().model_config(40, 32) == MoESizes(n_layers=6).transformer_config(40, 32)
