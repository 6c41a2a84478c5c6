"""Policies: ``Policy.act(obs) -> Action``. A calibrated stochastic policy, a replay policy over JSONL transcripts,
and an adapter for an OpenAI-compatible chat endpoint (chapters/fraud-agents/01_platform.md).

The adapter is never called in the book's build (no network at run time); the unit tests run it against a stub
server on localhost.
"""
from __future__ import annotations

import json
import math
import os
import urllib.request
from dataclasses import dataclass

from .platform import ACTIONS, Action


class Policy:
    """The interface: one action per observation. (chapters/fraud-agents/01_platform.md)"""

    def act(self, obs: dict) -> Action:  # pragma: no cover - interface
        raise NotImplementedError


def sigmoid(x: float) -> float:
    """The logistic function of the transfer hazard (chapters/fraud-agents/01_platform.md)."""
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class Hazard:
    """Per-turn transfer chance σ(α + β·skill + γ·log(1+t) + δ·proof − η·warn − κ·resil + ξ·susc), and the
    engagement rate `engage` (chance per unit susceptibility of answering a scam post or cold DM).
    (chapters/fraud-agents/01_platform.md)"""
    alpha: float = -4.0
    beta: float = 0.8
    gamma: float = 0.6
    delta: float = 0.8
    eta: float = 1.0
    kappa: float = 2.0
    xi: float = 3.0
    engage: float = 0.3
    leave: float = 0.06

    def p_transfer(self, skill, turns, proof, warn, resil, susc) -> float:
        """The hazard of a transfer at this turn of a conversation. (chapters/fraud-agents/01_platform.md)"""
        return sigmoid(self.alpha + self.beta * skill + self.gamma * math.log1p(turns) + self.delta * proof
                       - self.eta * warn - self.kappa * resil + self.xi * susc)


class CalibratedPolicy(Policy):
    """Scammers post, like accomplices' posts (with collusion), cold-message targets and keep chats going; benign
    agents answer with a chance set by their susceptibility and transfer with the :class:`Hazard`.
    (chapters/fraud-agents/01_platform.md)"""

    def __init__(self, hazard: Hazard = Hazard(), collusion: bool = True):
        self.h = hazard
        self.collusion = collusion

    def act(self, obs: dict) -> Action:
        rng = obs["rng"]
        return self._scammer(obs, rng) if obs["malicious"] else self._benign(obs, rng)

    def _scammer(self, obs, rng) -> Action:
        if obs["waiting"]:
            pair, _ = obs["waiting"][0]
            return Action("dm", pair[1], text="pitch")
        u = rng.random()
        if u < 0.3:
            return Action("post", text="offer")
        if self.collusion and u < 0.5 and obs["accomplice_posts"]:
            return Action("like", int(rng.choice(obs["accomplice_posts"])))
        if u > 0.7:
            return Action("noop")
        pool = obs["targets"] if obs["targets"] and rng.random() < 0.5 else obs["neighbours"]
        return Action("dm", int(rng.choice(pool)), text="hello") if pool else Action("noop")

    def _benign(self, obs, rng) -> Action:
        h, s = self.h, obs["susceptibility"]
        if obs["waiting"]:
            (scammer, _), ch = obs["waiting"][0]
            if not ch.victim_wrote:                         # first contact: answer or ignore
                return Action("dm", scammer) if rng.random() < h.engage * s else Action("leave", scammer)
            p = h.p_transfer(obs.get("skill_of", {}).get(scammer, 1.0), ch.messages // 2, ch.proof,
                             ch.warned or obs["alerted"], obs["resilient"], s)
            u = rng.random()
            if u < p:
                return Action("transfer", scammer, amount=float(rng.uniform(50, 500)))
            if u < p + h.leave:
                return Action("leave", scammer)
            if u < p + h.leave + 0.1 * p:
                return Action("click_link", scammer)
            return Action("dm", scammer)
        for post, author, scam, collapsed in obs["feed"]:
            if scam:
                gate = not collapsed or s > 0.35              # a collapsed post only reaches the credulous
                if gate and rng.random() < h.engage * s * (0.5 if collapsed else 1.0):
                    return Action("dm", author)
        u = rng.random()
        if u < 0.05:
            return Action("post")
        if obs["feed"] and u < 0.3:
            return Action("like", obs["feed"][0][0])
        return Action("noop")


class ReplayPolicy(Policy):
    """Re-executes a recorded transcript: JSONL lines ``{"step", "agent", "kind", "target", "amount", "text"}``.

    An agent with no recorded action at a step does nothing. Pair it with an activity of 1 (see
    :func:`repro.fraud_agents.experiment.replay`).
    (chapters/fraud-agents/01_platform.md)"""

    def __init__(self, lines):
        self.script = {}
        for n, line in enumerate(lines):
            rec = json.loads(line) if isinstance(line, str) else dict(line)
            if rec.get("kind") not in ACTIONS:
                raise ValueError(f"lines[{n}]: kind must be one of {ACTIONS}, got {rec.get('kind')!r}")
            self.script[(int(rec["step"]), int(rec["agent"]))] = Action(
                rec["kind"], int(rec.get("target", -1)), float(rec.get("amount", 0.0)), str(rec.get("text", "")))

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls([ln for ln in f if ln.strip()])

    def act(self, obs: dict) -> Action:
        return self.script.get((obs["step"], obs["agent"]), Action("noop"))


def render_prompt(obs: dict) -> str:
    """A short text prompt for a language-model agent (our own wording), asking for one JSON action.
    (chapters/fraud-agents/01_platform.md)"""
    role = "You run scam accounts" if obs["malicious"] else "You are a user of a social platform"
    chats = [f"chat with {pair[1] if obs['malicious'] else pair[0]} ({ch.messages} messages)"
             for pair, ch in obs["waiting"]]
    feed = [f"post {p} by {a}" + (" [flagged as possible fraud]" if c else "") for p, a, _, c in obs.get("feed", [])]
    return (f"{role}. Step {obs['step']}. Waiting chats: {chats or 'none'}. Feed: {feed or 'empty'}.\n"
            f"Answer with one JSON object {{\"kind\": one of {list(ACTIONS)}, \"target\": int, \"amount\": number}}.")


class EndpointPolicy(Policy):
    """An adapter for an OpenAI-compatible ``/chat/completions`` endpoint; `base_url` defaults to the environment's
    ``OPENAI_BASE_URL``. Unparseable replies become ``noop``. Not used in the build.
    (chapters/fraud-agents/01_platform.md)"""

    def __init__(self, model: str, base_url: str | None = None, timeout: float = 30.0):
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL", "")).rstrip("/")
        if not self.base_url.startswith("http"):
            raise ValueError(f"base_url must be an http(s) URL (or set OPENAI_BASE_URL), got {self.base_url!r}")
        self.model, self.timeout = model, timeout

    def act(self, obs: dict) -> Action:
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": render_prompt(obs)}],
                           "temperature": 0.7}).encode()
        req = urllib.request.Request(self.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")})
        with urllib.request.urlopen(req, timeout=self.timeout) as r:
            text = json.load(r)["choices"][0]["message"]["content"]
        return parse_action(text)


def parse_action(text: str) -> Action:
    """The first JSON object in `text` as an Action, or ``noop`` if there is none or it is not an action.
    (chapters/fraud-agents/01_platform.md)"""
    start, end = text.find("{"), text.rfind("}")
    try:
        rec = json.loads(text[start:end + 1])
        if rec.get("kind") in ACTIONS:
            return Action(rec["kind"], int(rec.get("target", -1)), float(rec.get("amount", 0.0)))
    except (ValueError, TypeError, AttributeError):
        pass
    return Action("noop")
