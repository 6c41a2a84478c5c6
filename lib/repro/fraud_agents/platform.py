"""The social platform: follow graph, recommender, DM channels with a message cap, transfers, links, forms, and the
three mitigations (debunking, monitor-and-ban, resilience), with a deterministic event log.

Explained in chapters/fraud-agents/01_platform.md. One step is three simulated minutes. Agents ``0 .. n_malicious-1``
are malicious, the rest benign. Policies see an observation dict and return an :class:`Action`; the platform alone
enforces the rules (caps, bans, what counts), so a policy cannot break them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import networkx as nx
import numpy as np

from ..common import check_between, check_choice, check_int

ACTIONS = ("noop", "post", "like", "dm", "leave", "transfer", "click_link", "submit_info")
GRAPHS = ("random", "scale-free", "clustered")


@dataclass(frozen=True)
class Action:
    """What an agent does this step: `kind` in ACTIONS, a `target` agent or post id, an `amount`, free `text`.
    (chapters/fraud-agents/01_platform.md)"""
    kind: str = "noop"
    target: int = -1
    amount: float = 0.0
    text: str = ""


@dataclass(frozen=True)
class Config:
    """One simulation. Rates are per step; `debunk` is θ, the chance a scam post is collapsed and flagged.
    (chapters/fraud-agents/01_platform.md)"""
    n_benign: int = 100
    n_malicious: int = 10
    graph: str = "random"
    steps: int = 240
    dm_cap: int = 40
    collusion: bool = True
    share_every: int = 10
    debunk: float = 0.0
    monitor_recall: float = 0.0
    monitor_fpr: float = 0.0
    monitor_gap: int = 20
    resilience: float = 0.0
    feed_size: int = 5

    def __post_init__(self):
        check_int("n_benign", self.n_benign)
        check_int("n_malicious", self.n_malicious)
        check_choice("graph", self.graph, GRAPHS)
        check_int("steps", self.steps)
        check_int("dm_cap", self.dm_cap, low=2)
        check_int("share_every", self.share_every)
        check_int("monitor_gap", self.monitor_gap)
        check_int("feed_size", self.feed_size)
        for name in ("debunk", "monitor_recall", "monitor_fpr", "resilience"):
            check_between(name, getattr(self, name), 0.0, 1.0, closed="both")

    def but(self, **changes) -> "Config":
        """A copy with some fields changed. (chapters/fraud-agents/01_platform.md)"""
        return replace(self, **changes)


def follow_graph(kind: str, n: int, rng: np.random.Generator) -> nx.Graph:
    """An undirected follow graph on n agents, mean degree about 8: Erdős–Rényi, Barabási–Albert or Holme–Kim.
    (chapters/fraud-agents/01_platform.md)"""
    check_choice("kind", kind, GRAPHS)
    seed = int(rng.integers(2**31))
    if kind == "random":
        return nx.gnm_random_graph(n, 4 * n, seed=seed)
    if kind == "scale-free":
        return nx.barabasi_albert_graph(n, 4, seed=seed)
    return nx.powerlaw_cluster_graph(n, 4, 0.8, seed=seed)


@dataclass
class Channel:
    """A DM channel between a scammer and a benign agent. (chapters/fraud-agents/01_platform.md)"""
    messages: int = 0
    last: int = -1            # who wrote last
    open: bool = True
    victim_wrote: bool = False
    warned: bool = False
    proof: bool = False


@dataclass
class Platform:
    """The platform's state; :meth:`step` runs one step for every active agent through `policy`.
    (chapters/fraud-agents/01_platform.md)"""
    config: Config
    seed: int
    rng: np.random.Generator = field(init=False)
    log: list = field(default_factory=list, init=False)

    def __post_init__(self):
        c = self.config
        self.rng = np.random.default_rng(self.seed)
        self.n = c.n_benign + c.n_malicious
        self.malicious = set(range(c.n_malicious))
        self.graph = follow_graph(c.graph, self.n, self.rng)
        self.neighbours = [set(self.graph[i]) for i in range(self.n)]
        hours = np.arange(24)
        peak = self.rng.integers(0, 24, self.n)
        base = self.rng.uniform(0.15, 0.45, self.n)
        dist = np.minimum(np.abs(hours[None] - peak[:, None]), 24 - np.abs(hours[None] - peak[:, None]))
        self.activity = base[:, None] * (0.4 + 0.6 * np.exp(-(dist / 4.0) ** 2))   # (agent, hour) action chance
        self.activity[: c.n_malicious] = 0.6                                       # scammers work every hour
        self.susceptibility = self.rng.beta(2, 5, self.n)
        self.skill = self.rng.uniform(0.5, 1.5, self.n)
        self.resilient = np.zeros(self.n, bool)
        k = int(round(c.resilience * c.n_benign))
        self.resilient[c.n_malicious + self.rng.permutation(c.n_benign)[:k]] = True
        self.alerted = np.zeros(self.n, bool)     # a resilient neighbour has warned this agent
        self.posts: list[list] = []               # [author, step, likes, scam, collapsed]
        self.channels: dict[tuple[int, int], Channel] = {}
        self.banned: dict[int, int] = {}
        self.defrauded: set[int] = set()
        self.memory: set[int] = set()             # shared by colluders: benign agents who answered a scammer
        self.private_memory: list[set] = [set() for _ in range(c.n_malicious)]
        self.monitor_cursor = 0
        self.t = 0
        self._lo = 0                              # first post inside the recommender's 20-step window
        self.chats: list[list] = [[] for _ in range(self.n)]   # channel keys per agent

    # ---- what agents see ------------------------------------------------------------------------------------
    def feed(self, i: int) -> list[int]:
        """The recommender: the newest posts (at most 60, last 20 steps) ranked by follow tie, log(1 + likes), a penalty if collapsed, and noise.
        (chapters/fraud-agents/01_platform.md)"""
        lo = max(self._lo, len(self.posts) - 60)       # the 60 newest posts of the 20-step window
        cand = [p for p in range(lo, len(self.posts)) if self.posts[p][0] != i and self.posts[p][0] not in self.banned]
        if not cand:
            return []
        score = np.array([2.0 * (self.posts[p][0] in self.neighbours[i]) + np.log1p(self.posts[p][2])
                          - 3.0 * self.posts[p][4] for p in cand]) + self.rng.gumbel(size=len(cand))
        return [cand[j] for j in np.argsort(-score)[: self.config.feed_size]]

    def observe(self, i: int) -> dict:
        """The observation of agent i: role, feed, the channels that wait for its reply, its traits, shared memory.
        (chapters/fraud-agents/01_platform.md)"""
        waiting = [(pair, self.channels[pair]) for pair in self.chats[i]
                   if self.channels[pair].open and self.channels[pair].last not in (i, -1)]
        obs = {"agent": i, "step": self.t, "malicious": i in self.malicious, "waiting": waiting,
               "susceptibility": float(self.susceptibility[i]), "skill": float(self.skill[i]),
               "resilient": bool(self.resilient[i]), "alerted": bool(self.alerted[i]), "rng": self.rng}
        if i in self.malicious:
            obs["accomplices"] = [m for m in self.malicious if m != i and m not in self.banned]
            obs["targets"] = sorted(self.memory if self.config.collusion else self.private_memory[i])
            obs["neighbours"] = sorted(self.neighbours[i] - self.malicious)
            obs["accomplice_posts"] = [p for p in range(max(0, len(self.posts) - 30), len(self.posts))
                                       if self.posts[p][0] in obs["accomplices"]]
        else:
            obs["skill_of"] = {pair[0]: float(self.skill[pair[0]]) for pair, _ in waiting}
            obs["feed"] = [(p, self.posts[p][0], bool(self.posts[p][3]), bool(self.posts[p][4]))
                           for p in self.feed(i)]
        return obs

    # ---- rules ------------------------------------------------------------------------------------------------
    def _event(self, kind, actor, target=-1, value=0.0):
        self.log.append((self.t, kind, int(actor), int(target), float(value)))

    def _dm(self, i: int, j: int, text: str):
        if j == i or not (0 <= j < self.n) or j in self.banned:
            return
        if (i in self.malicious) == (j in self.malicious):
            self._event("dm", i, j)
            return
        pair = (i, j) if i in self.malicious else (j, i)
        if pair not in self.channels:
            self.channels[pair] = Channel()
            self.chats[pair[0]].append(pair)
            self.chats[pair[1]].append(pair)
        ch = self.channels[pair]
        if not ch.open:
            return
        if ch.messages == 0 and self.config.collusion:
            ch.proof = len(self.chats[pair[1]]) > 1 or pair[1] in self.memory
        ch.messages += 1
        ch.last = i
        ch.victim_wrote |= i == pair[1]
        self._event("dm", i, j)
        if i == pair[1]:
            self.private_memory[pair[0]].add(i)
        if ch.messages >= self.config.dm_cap:          # the cap: the channel is banned, a failed fraud
            ch.open = False
            self._event("cap", pair[0], pair[1])

    def apply(self, i: int, a: Action):
        """Carry out agent i's action under the platform's rules. (chapters/fraud-agents/01_platform.md)"""
        if i in self.banned:
            raise RuntimeError(f"agent {i} was banned at step {self.banned[i]} and cannot act")
        kind = check_choice("action.kind", a.kind, ACTIONS)
        if kind == "post":
            scam = i in self.malicious
            collapsed = scam and self.rng.random() < self.config.debunk
            self.posts.append([i, self.t, 0, scam, collapsed])
            self._event("post", i, len(self.posts) - 1, float(collapsed))
            if collapsed:                               # debunking: a warning to everyone in this scammer's chats
                for pair in self.chats[i]:
                    self.channels[pair].warned = True
        elif kind == "like" and 0 <= a.target < len(self.posts):
            self.posts[a.target][2] += 1
            self._event("like", i, a.target)
        elif kind == "dm":
            self._dm(i, a.target, a.text)
        elif kind == "leave":
            pair = (a.target, i) if i not in self.malicious else (i, a.target)
            ch = self.channels.get(pair)
            if ch is not None and ch.open:
                ch.open = False
                self._event("leave", i, a.target)
                if self.resilient[i]:                   # resilience: warn one's followers
                    for j in self.neighbours[i]:
                        self.alerted[j] = True
                    self._event("warn", i, -1)
        elif kind in ("transfer", "click_link", "submit_info"):
            if not (0 <= a.target < self.n) or a.target in self.banned:
                return
            self._event(kind, i, a.target, max(0.0, float(a.amount)) if kind == "transfer" else 0.0)
            if kind == "transfer" and a.amount > 0 and i not in self.malicious and a.target in self.malicious:
                self.defrauded.add(i)
                ch = self.channels.get((a.target, i))
                if ch is not None:
                    ch.open = False

    def _monitor(self):
        """Monitor-and-ban: score a rotating batch of agents; a scammer is caught with chance `monitor_recall`."""
        c = self.config
        batch = [(self.monitor_cursor + k) % self.n for k in range(max(1, self.n // 5))]
        self.monitor_cursor = (self.monitor_cursor + len(batch)) % self.n
        for j in batch:
            if j in self.banned:
                continue
            p = c.monitor_recall if j in self.malicious else c.monitor_fpr
            if p > 0 and self.rng.random() < p:
                self.banned[j] = self.t
                self._event("ban", -1, j)
                for pair in self.chats[j]:
                    self.channels[pair].open = False

    def agents_to_act(self) -> list[int]:
        """Begin a step: monitor, share memory, move the recommender's window; return the agents that act this step,
        active this hour and not banned, in a random order. (chapters/fraud-agents/01_platform.md)"""
        c = self.config
        if c.monitor_recall + c.monitor_fpr > 0 and self.t % c.monitor_gap == c.monitor_gap - 1:
            self._monitor()
        if c.collusion and self.t % c.share_every == 0:
            for s in self.private_memory:
                self.memory |= s
        while self._lo < len(self.posts) and self.posts[self._lo][1] < self.t - 20:
            self._lo += 1
        hour = (self.t * 3 // 60) % 24
        active = self.rng.random(self.n) < self.activity[:, hour]
        return [int(i) for i in self.rng.permutation(self.n) if active[i] and i not in self.banned]

    def act(self, i: int, policy):
        """Agent i's turn: it observes, `policy` chooses, the platform applies. (chapters/fraud-agents/01_platform.md)"""
        self.apply(i, policy.act(self.observe(i)))

    def step(self, policy):
        """One step: monitor, share memory, then every active agent (in random order) observes and acts.
        (chapters/fraud-agents/01_platform.md)"""
        for i in self.agents_to_act():
            self.act(i, policy)
        self.t += 1

    def run(self, policy):
        """All the steps; returns the event log. (chapters/fraud-agents/01_platform.md)"""
        for _ in range(self.config.steps):
            self.step(policy)
        return self.log
