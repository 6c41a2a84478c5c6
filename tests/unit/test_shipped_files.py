"""The shipped models and run logs under data/ (issue 44, part 4), and the one path that writes and reads them.

Every ``*.pt`` and ``*.npz`` under data/ (found by glob, so a new file is covered without editing this test) opens
through `repro.nn.checkpoint` with ``weights_only=True`` / ``allow_pickle=False`` and carries its provenance: a
command, a commit that exists in this repository's history, and the ``dirty`` flag (whether the code differed from
that commit). Files made before the flag existed are listed in `LEGACY_WITHOUT_DIRTY`, which may only shrink.
`python -m repro.book ship SLUG` remakes a chapter's files; its registry covers every chapter that ships one.
"""
from __future__ import annotations

import ast
import inspect
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import repro
from repro.book import cli
from repro.book import ship as book_ship
from repro.nn.checkpoint import (PROVENANCE, load_arrays, load_checkpoint, load_shipped, module_from, module_state,
                                 save_arrays, save_checkpoint, save_shipped, ship_command)

ROOT = Path(repro.__file__).resolve().parents[2]
DATA = ROOT / "data"
SHIPPED = sorted([*DATA.rglob("*.pt"), *DATA.rglob("*.npz")])
#: Files shipped before provenance records had ``dirty`` (paths under data/). Remade files leave the list; nothing
#: joins it: the test fails when a listed file gains the flag or disappears.
LEGACY_WITHOUT_DIRTY = {
    "latent-trajectories/reasoner.pt",
    *(f"moe-grokking/pilots/{name}.npz" for name in (
        "a_batch128_5k", "b_batch512_4k", "c_brief_fractions_4k", "d_brief_fractions_4k_seed1",
        "e_brief_fractions_12k", "f_fraction07_12k", "g_fraction07_wd2_8k", "h_fraction08_8k")),
    "moe-grokking/redesign-pilots/i_4x8_p47_mixed_12k.npz",
    "moe-grokking/redesign-pilots/j_4x8_p31_spread_lr2e-3_12k.npz",
    *(f"moe-grokking/runs/seed{s}-{v}.npz" for s in (0, 1, 2) for v in ("main", "frozen", "no-balance", "dense")),
    *(f"moe-multilingual/model-seed{s}.pt" for s in (0, 1, 2)),
    *(f"neuroadapter/adapter-seed{s}.pt" for s in (0, 1, 2, 100)),
    "neuroadapter/unet.pt",
    "sokoban-planning/agent.pt",
    "sokoban-planning/levels.npz",
    "temporal-sae/lm.pt",
    *(f"timeseg/models-seed{s}.pt" for s in (0, 1, 2)),
}


def read_provenance(path: Path) -> dict:
    """The provenance record of a shipped file, read the one way the book reads it."""
    return (load_arrays(path) if path.suffix == ".npz" else load_shipped(path))[1]


def provenance_problems(path: Path, legacy: bool) -> list[str]:
    """What is wrong with the provenance of the shipped file `path` ([] when nothing is); `legacy`: the file is
    listed as made before the dirty flag."""
    try:
        record = read_provenance(path)
    except (FileNotFoundError, ValueError) as err:
        return [str(err)]
    problems = []
    if not isinstance(record.get("command"), str) or not record["command"].strip():
        problems.append("no command")
    if not isinstance(record.get("commit"), str) or record["commit"] in ("", "unknown"):
        problems.append("no commit")
    if legacy and "dirty" in record:
        problems.append("has the dirty flag now: remove it from LEGACY_WITHOUT_DIRTY")
    if not legacy and not isinstance(record.get("dirty"), bool):
        problems.append("no dirty flag (true or false)")
    return problems


def name(path: Path) -> str:
    return path.relative_to(DATA).as_posix()


@pytest.mark.parametrize("path", SHIPPED, ids=name)
def test_every_shipped_file_opens_with_its_provenance(path):
    problems = provenance_problems(path, name(path) in LEGACY_WITHOUT_DIRTY)
    assert not problems, f"data/{name(path)}: {'; '.join(problems)}"


def test_the_legacy_list_only_names_shipped_files():
    gone = sorted(LEGACY_WITHOUT_DIRTY - {name(p) for p in SHIPPED})
    assert not gone, f"listed in LEGACY_WITHOUT_DIRTY but not shipped any more (remove them): {gone}"


def test_every_shipped_commit_is_in_this_history():
    if not (ROOT / ".git").exists():
        pytest.skip("no .git here (an unpacked copy of the book): the commits cannot be looked up")
    commits = {read_provenance(p)["commit"] for p in SHIPPED}
    missing = sorted(c for c in commits if subprocess.run(["git", "cat-file", "-e", f"{c}^{{commit}}"], cwd=ROOT,
                                                          capture_output=True).returncode != 0)
    assert not missing, f"shipped files name commits that this repository does not have: {missing}"


def test_the_check_fails_planted_files(tmp_path):
    (bare := tmp_path / "bare.pt").write_bytes(b"")
    torch.save({"state_dict": {"w": torch.zeros(2)}}, no_record := tmp_path / "no-record.pt")
    np.savez(no_record_npz := tmp_path / "no-record.npz", x=np.zeros(2))
    save_shipped(no_command := tmp_path / "no-command.pt", {"w": torch.zeros(2)})
    save_shipped(good := tmp_path / "good.pt", {"w": torch.zeros(2)}, command="test", seed=0)
    save_arrays(good_npz := tmp_path / "good.npz", {"x": np.zeros(2)}, command="test")
    for planted in (bare, no_record, no_record_npz, no_command):
        assert provenance_problems(planted, legacy=False), planted.name
    assert provenance_problems(good, legacy=False) == provenance_problems(good_npz, legacy=False) == []
    assert provenance_problems(good, legacy=True) == ["has the dirty flag now: remove it from LEGACY_WITHOUT_DIRTY"]
    torch.save({"w": torch.zeros(2), PROVENANCE: {"command": "old", "commit": "abc1234"}}, old := tmp_path / "old.pt")
    assert provenance_problems(old, legacy=True) == [] and provenance_problems(old, legacy=False)


# ---------------------------------------------------------------------------------------------- repro.nn.checkpoint
def test_a_checkpoint_of_any_module_round_trips_with_config_extra_and_provenance(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    path = save_checkpoint(model, tmp_path / "m.pt", config={"in_features": 3, "out_features": 2},
                           extra={"log": [1.0, 0.5]}, command="test", seed=4)
    back, record = load_checkpoint(path, build=lambda c: torch.nn.Linear(**c))
    assert torch.equal(back.weight, model.weight) and not back.training
    assert record["seed"] == 4 and isinstance(record["dirty"], bool) and record["commit"]
    contents, _ = load_shipped(path)
    assert contents["log"] == [1.0, 0.5] and module_from(contents, lambda c: torch.nn.Linear(**c)).out_features == 2
    with pytest.raises(ValueError, match="config="):
        save_checkpoint(model, tmp_path / "x.pt")
    with pytest.raises(ValueError, match="state_dict"):
        save_checkpoint(model, tmp_path / "x.pt", config={}, extra={"state_dict": {}})
    assert module_state(model, torch.float16)["weight"].dtype == torch.float16


def test_missing_and_malformed_files_name_the_file_and_the_command(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing\.pt.*`remake me`"):
        load_shipped(tmp_path / "missing.pt", remake="remake me")
    (junk := tmp_path / "data" / "timeseg" / "junk.pt").parent.mkdir(parents=True)
    junk.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match=r"junk\.pt is malformed.*`python -m repro\.book ship timeseg`"):
        load_shipped(junk)
    torch.save([1, 2], listed := tmp_path / "list.pt")
    with pytest.raises(ValueError, match="no 'provenance' record"):
        load_shipped(listed)
    (bad := tmp_path / "bad.npz").write_bytes(b"PK junk")
    with pytest.raises(ValueError, match=r"bad\.npz is malformed"):
        load_arrays(bad)
    with pytest.raises(ValueError, match="not a checkpoint"):
        load_checkpoint(save_shipped(tmp_path / "plain.pt", {"x": 1}, command="t"))


def test_pickled_objects_are_refused(tmp_path):
    from fractions import Fraction

    torch.save({"thing": Fraction(1, 2), PROVENANCE: {}}, path := tmp_path / "pickled.pt")    # any pickled class
    with pytest.raises(ValueError, match="weights_only"):
        load_shipped(path)
    with pytest.raises(ValueError, match="object array"):
        save_arrays(tmp_path / "o.npz", {"x": np.array([{}, 1], dtype=object)})
    with pytest.raises(ValueError, match="provenance"):
        save_shipped(tmp_path / "p.pt", {"provenance": 1})


def test_ship_command():
    assert ship_command("timeseg") == "python -m repro.book ship timeseg"
    assert ship_command("timeseg", 2) == "python -m repro.book ship timeseg --seed 2"
    with pytest.raises(ValueError, match="slug"):
        ship_command("")


# ---------------------------------------------------------------------------------------- python -m repro.book ship
def test_every_chapter_that_ships_a_file_has_a_shipper_and_each_shipper_exists():
    slugs = {p.relative_to(DATA).parts[0] for p in SHIPPED}
    unshipped = sorted(slugs - set(book_ship.SHIPPERS))
    assert not unshipped, f"chapters that ship files but have no shipper in repro.book.ship.SHIPPERS: {unshipped}"
    for slug in book_ship.SHIPPERS:
        make = book_ship.shipper(slug)
        assert list(inspect.signature(make).parameters) == ["seed"], slug
        assert "repro.book ship" in inspect.getdoc(make) or slug == "temporal-sae", slug
    assert set(book_ship.SEEDLESS) <= set(book_ship.SHIPPERS)


def test_ship_refuses_unknown_chapters_seeds_that_do_not_apply_and_dirty_code(monkeypatch, capsys):
    assert cli.main(["ship", "no-such-chapter"]) == 2
    assert "the chapters that ship" in capsys.readouterr().err
    assert cli.main(["--root", str(ROOT), "ship", "scorer"]) == 2
    assert "ships no trained models" in capsys.readouterr().err
    assert cli.main(["ship", "sokoban-planning", "--seed", "1"]) == 2
    assert "without --seed" in capsys.readouterr().err
    calls = []
    monkeypatch.setattr(book_ship, "shipper", lambda slug, root=None: lambda seed: calls.append(seed) or ["x.pt"])
    monkeypatch.setattr(book_ship, "code_is_dirty", lambda: True)
    assert cli.main(["ship", "timeseg", "--seed", "1"]) == 2
    assert "--allow-dirty" in capsys.readouterr().err and calls == []
    assert cli.main(["ship", "timeseg", "--seed", "1", "--allow-dirty"]) == 0
    assert calls == [1] and "wrote x.pt" in capsys.readouterr().out
    monkeypatch.setattr(book_ship, "code_is_dirty", lambda: False)
    assert book_ship.ship("timeseg") == [Path("x.pt")] and calls == [1, None]


def test_only_the_book_reads_the_command_line():
    lib = Path(repro.__file__).resolve().parent
    def reads_argv(path: Path) -> bool:
        return any(isinstance(n, ast.Attribute) and n.attr == "argv" for n in ast.walk(ast.parse(path.read_text())))

    readers = sorted(p.relative_to(lib).as_posix() for p in lib.rglob("*.py") if "book" not in p.parts and reads_argv(p))
    assert not readers, f"modules outside repro.book that read sys.argv (give the chapter a `ship` instead): {readers}"


def test_the_neuroadapter_files_round_trip_in_half_precision(tmp_path):
    from repro.neuroadapter.adapter import NeuroAdapter
    from repro.neuroadapter.shipped import FEATURES, load_adapters, load_unet, save_adapters, save_unet
    from repro.neuroadapter.unet import TinyUNet, UNetConfig

    torch.manual_seed(0)
    unet = TinyUNet(UNetConfig())
    back, info = load_unet(save_unet(unet, [1.0, 0.5], 2.0, tmp_path / "unet.pt"))
    assert info["losses"] == [1.0, 0.5] and info["provenance"]["command"] == ship_command("neuroadapter")
    assert all(torch.equal(v, unet.state_dict()[k].half().float()) for k, v in back.state_dict().items())
    models = {"adapter": NeuroAdapter(unet, 3, 5), "feature_adapter": NeuroAdapter(unet, 4, FEATURES // 4),
              "feature_scale": torch.ones(2, FEATURES), "losses": [0.3], "feature_losses": [0.2],
              "seconds": {"adapter": 1.0}}
    got = load_adapters(7, back, save_adapters(models, 7, tmp_path / "a.pt"))
    assert got["provenance"]["command"] == ship_command("neuroadapter", 7) and got["seconds"] == {"adapter": 1.0}
    w = models["adapter"].mapper.weight
    assert torch.equal(got["adapter"].mapper.weight, w.detach().half().float())


def test_the_sokoban_level_pools_round_trip(tmp_path):
    from repro.sokoban_planning.experiment import load_levels, make_levels

    levels = load_levels(make_levels(n_train=4, n_test=2, seed=3, path=tmp_path / "levels.npz"))
    assert levels["train"].shape[0] == 4 and levels["test"].shape[0] == 2
    assert levels["provenance"]["seed"] == 3 and levels["provenance"]["command"] == ship_command("sokoban-planning")
    with pytest.raises(FileNotFoundError, match="ship sokoban-planning"):
        load_levels(tmp_path / "missing.npz")
