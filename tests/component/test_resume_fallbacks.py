"""Resume when the env cannot be rebuilt exactly: collector, n-step assembler and explorer together.

When the action history is too long to keep, or replaying it does not reproduce the checkpoint's
observation (a non-deterministic env), the collector abandons the episodes in progress. Then nothing
of them may leak into the new ones: no pending n-step window, no OU state, no running score, no
stale observation.
"""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from polyak import collector as collector_module
from polyak.agent import Agent
from polyak.collector import Collector
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
from polyak.replay.nstep import NStepAssembler, Transitions
from polyak.scores import ScoreBoard

NUM_ENVS, N_STEP, LENGTH, GAMMA = 2, 3, 10, 0.9
_draws = itertools.count(1)


class TaggedEnv(gym.Env):
    """Observation (episode tag, step in episode); reward 1; every episode lasts ``LENGTH`` steps.

    The tag comes from the reset seed, or, with ``deterministic=False``, from a global counter that
    ignores the seed, so replaying the same actions after the same reset lands somewhere else.
    """

    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, deterministic: bool = True) -> None:
        self.deterministic, self.tag, self.t = deterministic, 0.0, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if self.deterministic and seed is not None:
            self.tag = float(seed % 1_000_003)
        else:
            self.tag = float(1_000_003 + next(_draws))
        self.t = 0
        return np.array([self.tag, 0.0]), {}

    def step(self, action):
        self.t += 1
        return np.array([self.tag, float(self.t)]), 1.0, False, self.t >= LENGTH, {}


class Parts:
    """A collector built the way the trainer builds one, with an n-step assembler as its sink."""

    def __init__(self, deterministic: bool, noise: str) -> None:
        env = SyncVectorEnv([lambda: TaggedEnv(deterministic)] * NUM_ENVS, autoreset_mode=AutoresetMode.SAME_STEP)
        net = NetworkConfig(hidden_sizes=(8,))
        self.agent = Agent(2, 1, NUM_ENVS, AgentConfig(device="cpu"), net, net, NoiseConfig(kind=noise, sigma=0.3),
                           np.random.SeedSequence(0))
        self.assembler = NStepAssembler(N_STEP, GAMMA, NUM_ENVS, 2, 1)
        self.stored: list[Transitions] = []
        self.collector = Collector(env, self.agent.explorer, self._sink, ScoreBoard(NUM_ENVS, 5, True), env_seed=7,
                                   random_steps=0, random_rng=np.random.default_rng(1),
                                   on_restart=self.assembler.clear)

    def _sink(self, obs, action, reward, next_obs, terminated, done) -> None:
        self.stored.append(self.assembler.push(obs, action, reward, next_obs, terminated, done))

    def state(self) -> dict:
        return {"collector": self.collector.state_dict(), "nstep": self.assembler.state_dict(),
                "agent": self.agent.state_dict()}

    def load(self, state: dict) -> list[str]:
        """The trainer's order: agent, replay (with its n-step windows), then the collector."""
        self.agent.load_state_dict(state["agent"])
        self.assembler.load_state_dict(state["nstep"])
        return self.collector.load_state_dict(state["collector"])


def interrupted(deterministic: bool, noise: str, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[Parts, dict]:
    """Five steps into the first episodes (n-step windows pending, OU state and scores running), then a new process."""
    if monkeypatch is not None:
        monkeypatch.setattr(collector_module, "HISTORY_LIMIT", 2)
    before = Parts(deterministic, noise)
    before.collector.collect(5)
    state = before.state()
    assert (state["nstep"]["length"] > 0).all() and (state["collector"]["scores"]["running"] == 5).all()
    return Parts(deterministic, noise), state


def assert_fresh_start(parts: Parts, old_tags: np.ndarray) -> None:
    collector = parts.collector
    assert collector.obs is not None
    assert (collector.obs[:, 1] == 0).all(), "the observation must come from a fresh reset"
    assert not np.isin(collector.obs[:, 0], old_tags).any(), "new episodes, not the interrupted ones again"
    assert (parts.assembler.length == 0).all(), "pending n-step windows of the old episodes dropped"
    assert (collector.scores.running == 0).all()
    if parts.agent.explorer.noise.process is not None:
        np.testing.assert_array_equal(parts.agent.explorer.noise.process.state, 0.0)  # OU back at mu


def assert_no_window_crosses_episodes(parts: Parts) -> None:
    parts.collector.collect(2 * LENGTH)
    stored = [t for t in parts.stored if len(t)]
    obs = np.concatenate([t.obs for t in stored])
    next_obs = np.concatenate([t.next_obs for t in stored])
    reward, discount = np.concatenate([t.reward for t in stored]), np.concatenate([t.discount for t in stored])
    np.testing.assert_array_equal(obs[:, 0], next_obs[:, 0])  # same episode tag at both ends of every window
    steps = next_obs[:, 1] - obs[:, 1]
    np.testing.assert_allclose(discount, GAMMA ** steps)
    np.testing.assert_allclose(reward, (1 - GAMMA ** steps) / (1 - GAMMA))  # k rewards of 1, discounted


@pytest.mark.parametrize("noise", ["ou", "parameter"])
def test_history_too_long_starts_clean_episodes(monkeypatch, noise):
    parts, state = interrupted(True, noise, monkeypatch)
    assert state["collector"]["history"] is None
    parts.agent.load_state_dict(state["agent"])
    explorer = parts.agent.explorer
    checkpointed = [p.clone() for p in explorer.perturbed_actor.parameters()] if noise == "parameter" else []
    warnings = parts.load(state)
    assert warnings and "starting fresh episodes" in warnings[0]
    assert_fresh_start(parts, np.asarray(state["collector"]["obs"])[:, 0])
    if noise == "parameter":  # re-perturbed for the new episodes, not the checkpoint's perturbation
        assert any(not torch.equal(a, b) for a, b in zip(checkpointed, explorer.perturbed_actor.parameters(),
                                                          strict=True))
    assert_no_window_crosses_episodes(parts)


def test_non_deterministic_env_starts_clean_episodes():
    parts, state = interrupted(False, "ou")
    warnings = parts.load(state)
    assert warnings and "not deterministic" in warnings[0]
    assert_fresh_start(parts, np.asarray(state["collector"]["obs"])[:, 0])
    assert_no_window_crosses_episodes(parts)


def test_deterministic_env_resumes_exactly():
    """The exact path stays exact: same observation, windows and OU state as the checkpoint."""
    parts, state = interrupted(True, "ou")
    assert parts.load(state) == []
    np.testing.assert_array_equal(parts.collector.obs, state["collector"]["obs"])
    np.testing.assert_array_equal(parts.assembler.length, state["nstep"]["length"])
    assert (parts.collector.scores.running == 5).all()
    assert_no_window_crosses_episodes(parts)
