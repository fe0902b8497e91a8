"""A user's own env that returns what polyak cannot train on (a fourth newcomer audit: "a task of their own"): the
fault is named in one line at the step that returned it, not as a shape error inside the vector env or as a
learner that diverged later; a run that stopped before its first checkpoint says it cannot be resumed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.smoke.cli_helpers import polyak

FAULTY_ENVS = '''
import gymnasium as gym
import numpy as np


class Faulty(gym.Env):
    """A point to steer to 0; ``fault`` ("reset_shape", "nan_reward", "inf_obs", "list_reward") at step ``at``."""

    observation_space = gym.spaces.Box(-10.0, 10.0, (3,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    made = 0  # instances so far: the training env is the first, the evaluation env the second

    def __init__(self, fault="none", at=150):
        self.fault, self.at, self.steps, self.seeded_resets = fault, at, 0, 0
        Faulty.made += 1
        if fault == "eval_nan_reward" and Faulty.made != 2:
            self.fault = "none"
        self.fault = {"eval_nan_reward": "nan_reward"}.get(self.fault, self.fault)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.seeded_resets += seed is not None
        self.x = self.np_random.uniform(-1, 1, 3).astype(np.float32)
        if self.fault == "second_seeded_reset_nan" and self.seeded_resets == 2:
            self.x[0] = np.nan
        return (np.zeros(7, np.float32) if self.fault == "reset_shape" else self.x), {}

    def step(self, action):
        self.steps += 1
        self.x = np.clip(self.x + 0.1 * np.append(action, 0.0), -10, 10).astype(np.float32)
        reward, obs = -float(np.sum(self.x ** 2)), self.x.copy()
        if self.steps == self.at:
            reward = {"nan_reward": float("nan"), "list_reward": [reward]}.get(self.fault, reward)
            obs[1] = np.inf if self.fault == "inf_obs" else obs[1]
        return obs, reward, False, False, {}


gym.register("Faulty-v0", entry_point=Faulty, max_episode_steps=50)
gym.register("FaultyNoLimit-v0", entry_point=Faulty)
'''

TINY = ("--gin-param", "TrainerConfig.max_env_steps=400", "--gin-param", "TrainerConfig.start_steps=100",
        "--gin-param", "ReplayConfig.min_size=100", "--gin-param", "TrainerConfig.eval_interval=200",
        "--gin-param", "TrainerConfig.eval_episodes=1", "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)",
        "--gin-param", "AgentConfig.batch_size=16", "--gin-param", "TrainerConfig.progress_bar=False",
        "--algo", "td3", "--seed", "0")


@pytest.fixture
def envs_dir(tmp_path: Path) -> Path:
    (tmp_path / "faulty_envs.py").write_text(FAULTY_ENVS)
    return tmp_path


def train(envs_dir: Path, run: str, fault: str, at: int = 150, *extra: str):
    return polyak("train", "--env", "faulty_envs:Faulty-v0", "--run-dir", run, *TINY,
                  "--gin-param", f"TrainerConfig.env_kwargs={{'fault': '{fault}', 'at': {at}}}", *extra, cwd=envs_dir)


def one_line(result) -> str:
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("polyak: error:")]
    assert len(lines) == 1, result.stderr[-3000:]
    return lines[0]


@pytest.mark.parametrize(("fault", "at", "said"), [
    ("nan_reward", 150, "failed after 149 env steps: step() returned a reward of nan"),  # learning from 100
    ("nan_reward", 50, "failed after 49 env steps: step() returned a reward of nan"),  # random actions yet
    ("inf_obs", 150, "failed after 149 env steps: step() returned an observation holding NaN or Inf"),
    ("list_reward", 150, "failed after 149 env steps: step() returned a reward of shape (1,) (list); a reward "
     "is one number"),
])
def test_a_bad_value_from_the_env_is_named_at_its_step_not_as_a_diverged_learner(envs_dir, fault, at, said):
    line = one_line(train(envs_dir, "run", fault, at))
    assert f"environment faulty_envs:Faulty-v0 {said}; " in line and "diverged" not in line, line
    if at > 100:  # it had trained: a checkpoint at the step before the fault, to resume once the env is fixed
        assert "a checkpoint was saved there (once the env is fixed: polyak train --resume run)" in line
        assert (envs_dir / "run" / "checkpoints" / "step_000000000149").is_dir()
    else:
        assert "nothing was trained, so there is no checkpoint" not in line  # 49 steps of random actions: kept
        assert (envs_dir / "run" / "checkpoints" / "step_000000000049").is_dir()


def test_a_reset_of_the_wrong_shape_is_one_line_and_its_run_directory_says_it_cannot_be_resumed(envs_dir):
    line = one_line(train(envs_dir, "run", "reset_shape"))
    assert line == ("polyak: error: environment faulty_envs:Faulty-v0 failed after 0 env steps: reset() returned an "
                    "observation of shape (7,); its observation space has shape (3,); nothing was trained, so "
                    "there is no checkpoint: fix the env and train again into another run directory (or delete "
                    "run)"), line
    again = one_line(train(envs_dir, "run", "none"))
    assert "holds a run that stopped before its first checkpoint, so nothing there can be resumed" in again
    assert "rm -r run" in again
    resumed = one_line(polyak("train", "--resume", "run", cwd=envs_dir))
    assert "has no complete checkpoint to resume from (the run stopped before its first)" in resumed


def test_a_run_whose_env_was_fixed_resumes_from_the_checkpoint_saved_at_the_fault(envs_dir):
    one_line(train(envs_dir, "run", "nan_reward", 150))
    (envs_dir / "faulty_envs.py").write_text(FAULTY_ENVS.replace('"nan_reward": float("nan"), ', ""))
    result = polyak("train", "--resume", "run", cwd=envs_dir)
    assert result.returncode == 0, result.stderr[-3000:]
    assert '"env_steps": 400' in (envs_dir / "run" / "summary.json").read_text()


def test_gymnasiums_entry_point_form_names_the_class_and_the_two_ways_to_give_it(envs_dir):
    line = one_line(polyak("train", "--env", "faulty_envs:Faulty", "--run-dir", "run", cwd=envs_dir))
    assert line == ("polyak: error: environment id 'faulty_envs:Faulty' names the class Faulty of faulty_envs, not "
                    "an env id it registers: register it in faulty_envs.py (gymnasium.register('Faulty-v0', "
                    "entry_point=Faulty, max_episode_steps=...)) and give --env faulty_envs:Faulty-v0, or in Python "
                    "pass polyak.train(env=faulty_envs.Faulty)"), line
    assert not (envs_dir / "run").exists()
    unknown = one_line(polyak("train", "--env", "Faulty-v0", "--run-dir", "run", cwd=envs_dir))
    assert unknown.endswith("an env that a module of yours registers is given as module:EnvId (polyak imports the "
                            "module first)"), unknown
    in_module = one_line(polyak("train", "--env", "faulty_envs:Nope-v0", "--run-dir", "run", cwd=envs_dir))
    assert "unknown environment id 'Nope-v0'" in in_module and "module:EnvId" not in in_module, in_module


def test_training_on_an_env_without_a_time_limit_says_its_episodes_may_never_end(envs_dir):
    run = polyak("train", "--env", "faulty_envs:FaultyNoLimit-v0", "--run-dir", "run", *TINY, cwd=envs_dir)
    assert run.returncode == 0, run.stderr[-3000:]
    assert ("polyak: warning: environment faulty_envs:FaultyNoLimit-v0 has no time limit (no max_episode_steps), so "
            "a training episode ends only when the env itself ends it") in run.stdout, run.stdout
    limited = polyak("train", "--env", "faulty_envs:Faulty-v0", "--run-dir", "limited", *TINY, cwd=envs_dir)
    assert limited.returncode == 0 and "no time limit" not in limited.stdout, limited.stdout
    assert "polyak: training faulty_envs:Faulty-v0 into limited (seed 0)" in limited.stdout


def test_a_bad_value_from_the_evaluation_env_is_named_and_the_run_keeps_its_training(envs_dir):
    line = one_line(train(envs_dir, "run", "eval_nan_reward", 30))  # its 30th step: in the first evaluation
    assert ("environment faulty_envs:Faulty-v0 (evaluation) failed after 200 env steps: step() returned a reward "
            "of nan; a checkpoint was saved there") in line, line
    assert (envs_dir / "run" / "checkpoints" / "step_000000000200").is_dir()


def test_a_failed_reset_between_episodes_says_what_was_lost(envs_dir):
    line = one_line(train(envs_dir, "run", "second_seeded_reset_nan"))  # polyak's reset after episode 1 (50 steps)
    assert ("failed after 50 env steps: reset() returned an observation holding NaN or Inf; this failure left no "
            "state to save, so there is no checkpoint") in line, line
