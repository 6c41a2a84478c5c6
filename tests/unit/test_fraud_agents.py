"""Unit tests of repro.fraud_agents (chapters/fraud-agents/): metrics on a hand-built log, the platform's invariants,
determinism, the replay policy and the endpoint adapter against a stub server on localhost."""
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from repro.fraud_agents import (Action, Config, EndpointPolicy, Hazard, Platform, ReplayPolicy, log_digest,
                                monitor_scores, parse_action, rates, simulate)

TRANSCRIPT = Path(__file__).resolve().parents[2] / "data" / "fraud-agents" / "transcript.jsonl"
SMALL = Config(n_benign=30, n_malicious=4, steps=60)


def test_rates_on_hand_built_log():
    mal = {0, 1}
    log = [(0, "dm", 0, 2, 0), (1, "dm", 2, 0, 0), (2, "dm", 0, 2, 0), (3, "transfer", 2, 0, 10.0),
           (1, "dm", 1, 3, 0), (2, "dm", 3, 1, 0), (3, "leave", 3, 1, 0),
           (1, "dm", 1, 4, 0),                                   # victim never wrote: not a private conversation
           (4, "transfer", 5, 0, 30.0),                         # public fraud
           (4, "transfer", 3, 5, 9.0), (5, "transfer", 0, 3, 9.0), (6, "transfer", 4, 1, 0.0)]
    r = rates(log, mal, n_benign=10)
    assert r["n_private"] == 2 and r["r_conv"] == 0.5
    assert r["n_victims"] == 2 and r["r_pop"] == 0.2 and r["n_public"] == 1 and r["depth"] == 3
    assert monitor_scores([(0, "ban", -1, 0, 0), (0, "ban", -1, 7, 0)], mal) == {
        "precision": 0.5, "recall": 0.5, "f1": 0.5, "banned": 2}


def test_invariants_and_determinism():
    plat = simulate(SMALL.but(monitor_recall=0.5, monitor_fpr=0.05, dm_cap=6), Hazard(alpha=-7, engage=0.3), 3)
    assert max(ch.messages for ch in plat.channels.values()) <= 6
    for t, kind, actor, target, _ in plat.log:
        assert not (actor in plat.banned and t > plat.banned[actor]) or kind == "ban"
    again = simulate(SMALL.but(monitor_recall=0.5, monitor_fpr=0.05, dm_cap=6), Hazard(alpha=-7, engage=0.3), 3)
    assert log_digest(plat.log) == log_digest(again.log)
    assert log_digest(simulate(SMALL, Hazard(), 4).log) != log_digest(simulate(SMALL, Hazard(), 5).log)


def test_replay_policy_counts_only_benign_to_malicious():
    plat = Platform(Config(n_benign=6, n_malicious=2, steps=8), 0)
    plat.activity[:] = 1.0
    plat.run(ReplayPolicy.from_file(TRANSCRIPT))
    r = rates(plat.log, plat.malicious, 6)
    assert r["n_private"] == 2 and r["r_conv"] == 0.5 and r["n_victims"] == 3 and r["n_public"] == 2


def test_validation():
    with pytest.raises(ValueError, match="graph"):
        Config(graph="ring")
    with pytest.raises(ValueError, match="debunk"):
        Config(debunk=1.5)
    with pytest.raises(ValueError, match="kind"):
        ReplayPolicy(['{"step": 0, "agent": 0, "kind": "hack"}'])
    with pytest.raises(ValueError, match="base_url"):
        EndpointPolicy("m", base_url="nowhere")


def test_endpoint_adapter_against_stub():
    class Stub(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert body["messages"][0]["role"] == "user"
            out = json.dumps({"choices": [{"message": {"content": 'Sure: {"kind": "like", "target": 0}'}}]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(out.encode())

        def log_message(self, *a):
            pass

    server = HTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        plat = Platform(Config(n_benign=5, n_malicious=1, steps=3), 0)
        plat.apply(1, Action("post"))
        pol = EndpointPolicy("stub", base_url=f"http://127.0.0.1:{server.server_port}/v1")
        assert pol.act(plat.observe(2)) == Action("like", 0)
    finally:
        server.shutdown()
    assert parse_action("no json here") == Action("noop")


def test_mesa_schedules_the_same_experiment_log_for_log():
    from repro.fraud_agents.mesa_peer import PlatformModel, code_lines, simulate_mesa

    cfg = Config(n_benign=30, n_malicious=3, steps=40, monitor_recall=0.5, monitor_fpr=0.05)
    ours = simulate(cfg, Hazard(), 4)
    peer = simulate_mesa(cfg, Hazard(), 4)
    assert log_digest(ours.log) == log_digest(peer.log) and len(ours.log) > 0
    model = PlatformModel(cfg, Hazard(), 4)
    assert len(model.agents) == 33 and model.users[5].index == 5
    assert code_lines(Platform.step) == 4   # def, for, act, t += 1: the docstring is not counted


def test_response_surface_recovers_a_known_quadratic_and_solves_for_targets():
    import numpy as np

    from repro.fraud_agents.experiment import fit_surface, solve_targets, surface

    alphas, engages = [-6.5, -6.0, -5.5, -5.0], [0.004, 0.007, 0.012, 0.02]
    a, e = np.meshgrid(alphas, engages, indexing="ij")
    grid = {"alphas": alphas, "engages": engages, "seeds": [0],
            "r_pop": 0.1 + 0.05 * (a + 5.75) + 0.06 * np.log(e / 0.008),
            "r_conv": 0.45 + 0.15 * (a + 5.75) + 0.02 * np.log(e / 0.008) + 0.01 * (a + 5.75) ** 2}
    coef = fit_surface(grid, "r_conv")
    assert np.allclose(surface(coef, a, e), grid["r_conv"], atol=1e-10)
    alpha, engage = solve_targets(grid, {"r_pop": 0.1, "r_conv": 0.45})
    assert abs(alpha + 5.75) < 1e-4 and abs(engage - 0.008) < 1e-5
    with pytest.raises(ValueError, match="key"):
        fit_surface(grid, "r_other")


def test_calibration_runs_its_grid_and_fit_check_reads_intervals():
    from repro.fraud_agents.experiment import calibrate, fit_check, response_grid

    with pytest.raises(ValueError, match="at least 3"):
        response_grid(SMALL, [0], alphas=(-6.0, -5.0))
    h, grid = calibrate(SMALL, [0], alphas=(-6.0, -5.5, -5.0), engages=(0.01, 0.03, 0.09))
    assert grid["r_pop"].shape == (3, 3) and -6.0 <= h.alpha <= -5.0 and 0.01 <= h.engage <= 0.09
    runs = [{"r_pop": 0.10, "r_conv": 0.40}, {"r_pop": 0.12, "r_conv": 0.50}, {"r_pop": float("nan"), "r_conv": 0.45}]
    out = fit_check(runs, {"r_pop": 0.11, "r_conv": 0.45})
    assert abs(out["r_pop"]["gap"]) < 1e-9 and out["worst"] < 0
    assert fit_check(runs, {"r_pop": 0.5, "r_conv": 0.45})["worst"] > 0
    with pytest.raises(ValueError, match="at least 2 runs"):
        fit_check(runs[:1], {"r_pop": 0.11})


def test_difference_intervals():
    import numpy as np

    from repro.fraud_agents import paired_difference_ci, rate_difference_ci

    on = [{"r_pop": 0.12 + 0.01 * k, "r_conv": 0.5} for k in range(6)]
    off = [{"r_pop": 0.10 + 0.01 * k, "r_conv": float("nan") if k == 0 else 0.4} for k in range(6)]
    mean, lo, hi = paired_difference_ci(on, off)
    assert abs(mean - 2.0) < 1e-9 and abs(lo - 2.0) < 1e-9 and abs(hi - 2.0) < 1e-9   # every pair differs by 2
    assert abs(paired_difference_ci(on, off, key="r_conv")[0] - 10.0) < 1e-9          # the NaN pair is left out
    with pytest.raises(ValueError, match="equal length"):
        paired_difference_ci(on, off[:3])
    # one pair: the bootstrap over users; 10 of 100 against 36 of 500 is 2.8 points, with a binomial spread
    mean, lo, hi = rate_difference_ci([{"n_victims": 10}], [{"n_victims": 36}], 100, 500)
    assert abs(mean - 2.8) < 1e-9 and lo < 0 < mean < hi
    se = 100 * np.sqrt(0.1 * 0.9 / 100 + 0.072 * 0.928 / 500)
    assert abs((hi - lo) / (2 * 1.96) - se) < 0.5
    # more users, same rates: a narrower interval
    mean2, lo2, hi2 = rate_difference_ci([{"n_victims": 100}], [{"n_victims": 360}], 1000, 5000)
    assert abs(mean2 - 2.8) < 1e-9 and hi2 - lo2 < hi - lo and lo2 > 0
    with pytest.raises(ValueError, match="equal"):
        rate_difference_ci([{"n_victims": 1}], [], 100, 500)
