"""n-step assembly against a plain reference loop, over episodes ending at every position."""

from __future__ import annotations

import numpy as np
import pytest

from polyak.replay import NStepAssembler

GAMMA = 0.9


def _schedules(num_envs: int, n: int, rng: np.random.Generator) -> list[list[tuple[int, str]]]:
    """Per env, episodes (length, how it ends): every length 1..n+2 ending by termination and by
    truncation, in a random order, then one unfinished episode."""
    schedules = []
    for _ in range(num_envs):
        episodes = [(length, end) for length in range(1, n + 3) for end in ("terminated", "truncated")]
        order = rng.permutation(len(episodes))
        schedules.append([episodes[i] for i in order] + [(int(rng.integers(1, 2 * n + 2)), "open")])
    return schedules


def _flatten(schedule: list[tuple[int, str]]) -> list[tuple[bool, bool]]:
    flags = []
    for length, end in schedule:
        for t in range(length):
            last = t == length - 1
            flags.append((last and end == "terminated", last and end == "truncated"))
    return flags


def _reference(schedule: list[tuple[int, str]], rewards: list[float], n: int, env: int, start: int) -> list[tuple]:
    """(obs id, return, next obs id, terminated, discount) for every window of every episode."""
    out = []
    step = start
    for length, end in schedule:
        for t in range(length):
            if end == "open" and t + n > length:
                continue  # the window is still waiting for steps
            k = min(n, length - t)
            ret = sum(GAMMA**i * rewards[step + t + i] for i in range(k))
            final = step + t + k - 1  # next obs of the window's last step
            terminated = end == "terminated" and t + k == length
            out.append((env, step + t, ret, final, terminated, GAMMA**k))
        step += length
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("num_envs", [1, 3])
def test_assembler_matches_reference_loop(n: int, num_envs: int):
    rng = np.random.default_rng(100 * n + num_envs)
    schedules = _schedules(num_envs, n, rng)
    flags = [_flatten(s) for s in schedules]
    steps = min(len(f) for f in flags)
    # Trim each env to the common length: the tail becomes part of an open episode.
    trimmed = []
    for schedule in schedules:
        kept, total = [], 0
        for length, end in schedule:
            if total + length > steps:
                if steps - total > 0:
                    kept.append((steps - total, "open"))
                break
            kept.append((length, end))
            total += length
        trimmed.append(kept)
    flags = [_flatten(s) for s in trimmed]
    rewards = rng.normal(size=(num_envs, steps))

    assembler = NStepAssembler(n, GAMMA, num_envs, obs_dim=2, action_dim=1)
    got = []
    for t in range(steps):
        env_ids = np.arange(num_envs, dtype=float)
        obs = np.stack([env_ids, np.full(num_envs, t)], axis=1)          # obs = (env, step)
        next_obs = np.stack([env_ids, np.full(num_envs, t)], axis=1)     # next obs of step t is tagged t
        terminated = np.array([flags[e][t][0] for e in range(num_envs)])
        truncated = np.array([flags[e][t][1] for e in range(num_envs)])
        out = assembler.push(obs, obs[:, 1:] * 0 + t, rewards[:, t], next_obs, terminated, terminated | truncated)
        for i in range(len(out)):
            assert out.obs[i, 0] == out.next_obs[i, 0]  # never mixes envs
            np.testing.assert_array_equal(out.action[i], [out.obs[i, 1]])
            got.append((int(out.obs[i, 0]), int(out.obs[i, 1]), out.reward[i], int(out.next_obs[i, 1]),
                        bool(out.terminated[i]), out.discount[i]))

    expected = [w for e in range(num_envs) for w in _reference(trimmed[e], list(rewards[e]), n, e, 0)]
    got.sort(key=lambda w: (w[0], w[1]))
    expected.sort(key=lambda w: (w[0], w[1]))
    assert [(w[0], w[1], w[3], w[4]) for w in got] == [(w[0], w[1], w[3], w[4]) for w in expected]
    np.testing.assert_allclose([w[2] for w in got], [w[2] for w in expected], rtol=1e-12)
    np.testing.assert_allclose([w[5] for w in got], [w[5] for w in expected], rtol=1e-12)


def test_one_step_is_the_identity():
    assembler = NStepAssembler(1, 0.99, 2, obs_dim=1, action_dim=1)
    out = assembler.push(np.array([[1.0], [2.0]]), np.zeros((2, 1)), np.array([0.5, -0.5]), np.array([[3.0], [4.0]]),
                         np.array([False, True]), np.array([False, True]))
    np.testing.assert_array_equal(out.reward, [0.5, -0.5])
    np.testing.assert_array_equal(out.terminated, [0.0, 1.0])
    np.testing.assert_array_equal(out.discount, [0.99, 0.99])
    np.testing.assert_array_equal(out.next_obs, [[3.0], [4.0]])


def test_state_round_trip_keeps_pending_windows():
    a = NStepAssembler(3, 0.9, 2, obs_dim=1, action_dim=1)
    a.push(np.ones((2, 1)), np.zeros((2, 1)), np.ones(2), np.ones((2, 1)), np.zeros(2, bool), np.zeros(2, bool))
    b = NStepAssembler(3, 0.9, 2, obs_dim=1, action_dim=1)
    b.load_state_dict(a.state_dict())
    step = (np.ones((2, 1)), np.zeros((2, 1)), np.ones(2), np.ones((2, 1)), np.ones(2, bool), np.ones(2, bool))
    out_a, out_b = a.push(*step), b.push(*step)
    np.testing.assert_array_equal(out_a.reward, out_b.reward)
    np.testing.assert_allclose(out_a.reward, [1.9, 1.0, 1.9, 1.0])
