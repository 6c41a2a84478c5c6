"""Unit tests of repro.nn.contrastive (chapters/temporal-sae, chapters/multimodal-sae)."""
import math

import pytest
import torch

from repro.nn.contrastive import symmetric_info_nce


def test_matched_pairs_on_the_diagonal_give_a_small_loss_and_shuffled_ones_a_large_one():
    n = 8
    aligned = 20 * torch.eye(n)
    assert symmetric_info_nce(aligned).item() < 1e-6
    shuffled = aligned[torch.roll(torch.arange(n), 1)]
    assert symmetric_info_nce(shuffled).item() > 10
    assert symmetric_info_nce(torch.zeros(n, n)).item() == pytest.approx(math.log(n))   # chance: log N


def test_it_is_the_mean_of_the_two_directions():
    logits = torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    target = torch.arange(5)
    rows = torch.nn.functional.cross_entropy(logits, target)
    cols = torch.nn.functional.cross_entropy(logits.t(), target)
    assert torch.equal(symmetric_info_nce(logits), 0.5 * (rows + cols))


def test_a_non_square_matrix_is_a_clear_error():
    with pytest.raises(ValueError, match="square"):
        symmetric_info_nce(torch.zeros(3, 4))
