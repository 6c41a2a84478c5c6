"""The peer: the same platform scheduled by mesa, the agent-based modelling framework
(chapters/fraud-agents/02_experiments.md, section "A peer: the platform in mesa").

Each platform agent is a `mesa.Agent`; the model's step draws the step's active agents and their order from the
platform (so that the run is the same random experiment) and lets mesa's `AgentSet` activate them, each observing,
asking the policy and having the platform apply its action. The rules stay in :class:`~.platform.Platform`: what
mesa contributes is the model/agent structure and the scheduler, which is what the speed comparison measures.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

import mesa
from mesa.agent import AgentSet

from .platform import Config, Platform
from .policies import CalibratedPolicy, Hazard


class User(mesa.Agent):
    """One platform agent (scammer or user) as a mesa agent. (chapters/fraud-agents/02_experiments.md)"""

    def __init__(self, model: "PlatformModel", index: int):
        super().__init__(model)
        self.index = index

    def step(self):
        """Its turn: observe, choose through the model's policy, act. (chapters/fraud-agents/02_experiments.md)"""
        self.model.platform.act(self.index, self.model.policy)


class PlatformModel(mesa.Model):
    """The platform as a mesa model, driven by the calibrated policy. (chapters/fraud-agents/02_experiments.md)"""

    def __init__(self, config: Config, hazard: Hazard, seed: int):
        super().__init__(rng=seed)
        self.platform = Platform(config, seed)
        self.policy = CalibratedPolicy(hazard, collusion=config.collusion)
        self.users = [User(self, i) for i in range(self.platform.n)]

    def step(self):
        """One platform step: the platform's rules first, then mesa activates the step's agents in order.
        (chapters/fraud-agents/02_experiments.md)"""
        order = self.platform.agents_to_act()
        AgentSet([self.users[i] for i in order], random=self.random).do("step")
        self.platform.t += 1


def simulate_mesa(config: Config, hazard: Hazard, seed: int) -> Platform:
    """One run scheduled by mesa; returns the platform, as :func:`~.experiment.simulate` does.
    (chapters/fraud-agents/02_experiments.md)"""
    model = PlatformModel(config, hazard, seed)
    for _ in range(config.steps):
        model.step()
    return model.platform


def code_lines(*objects) -> int:
    """Lines of code of functions or classes, docstrings, comments and blank lines left out (the code-size column
    of the peer table in chapters/fraud-agents/02_experiments.md)."""
    total = 0
    for obj in objects:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
                body.pop(0)   # the docstring
                if not body:
                    body.append(ast.Pass())
        total += sum(1 for line in ast.unparse(tree).splitlines() if line.strip())
    return total
