"""Scale, seed and device validation, seeding and the progress helper (repro.book.params, seeding, progress)."""
import random

import numpy as np
import pytest
import torch

from repro.book import BookParameterError, progress, seed_everything, setup
from repro.book.params import check_parameters


def test_setup_returns_the_run_and_picks_by_scale():
    run = setup(scale="ci", seed=3, device="cpu")
    assert (run.scale, run.seed, run.device) == ("ci", 3, "cpu")
    assert run.pick(ci=1, full=2) == 1 and not run.full


@pytest.mark.parametrize("scale, seed, device, message", [
    ("big", 0, "cpu", r"scale='big' is not a scale of this book; use one of 'ci', 'full'"),
    ("ci", -1, "cpu", "seed=-1 must be a non-negative integer"),
    ("ci", 1.5, "cpu", "seed=1.5"),
    ("ci", 0, "tpu", r"device='tpu' is not supported; use one of 'cpu', 'cuda'"),
])
def test_unknown_values_stop_with_a_message_listing_the_valid_ones(scale, seed, device, message):
    with pytest.raises(BookParameterError, match=message):
        check_parameters(scale, seed, device)


def test_parameter_errors_render_without_a_traceback():
    err = BookParameterError("scale='big' is not a scale of this book")
    assert len(err._render_traceback_()) == 1 and isinstance(err, ValueError)


def test_pick_needs_every_scale():
    with pytest.raises(BookParameterError, match="missing"):
        setup().pick(ci=1)


def test_cuda_without_a_gpu_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(BookParameterError, match="no CUDA GPU"):
        check_parameters("ci", 0, "cuda")


def test_seeding_makes_python_numpy_and_torch_repeat():
    def draw():
        return random.random(), np.random.rand(), torch.rand(1).item()

    seed_everything(7)
    first = draw()
    seed_everything(7)
    assert draw() == first
    with pytest.raises(ValueError, match="non-negative integer"):
        seed_everything(-2)


def test_progress_is_silent_in_the_build(monkeypatch):
    items = [1, 2, 3]
    monkeypatch.setenv("REPRO_BUILD", "1")
    assert progress(items) is items
    monkeypatch.delenv("REPRO_BUILD")
    bar = progress(items, desc="x", disable=True)
    assert list(bar) == items and bar is not items


def test_a_notebook_kernel_that_glues_skips_jsonschemas_iri_grammar_and_still_validates():
    """`import repro.book` keeps rfc3987_syntax (about 1.4 s of import in every kernel) out; nbformat still validates."""
    import subprocess
    import sys

    script = ("import sys, repro.book, nbformat\n"
              "from myst_nb import glue\n"
              "glue('x', 1, display=False)\n"
              "nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')]))\n"
              "print('grammar loaded' if sys.modules.get('rfc3987_syntax') else 'grammar skipped')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("grammar skipped")
