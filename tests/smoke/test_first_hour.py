"""A newcomer's first hour (issue 32, items 2-6), each trap through the CLI or the API where a user meets it:
``--env``/``--algo`` and the recommended config, a config made for another env, budgets below the start steps,
SB3 habits (``predict``'s pair, SB3's own ``evaluate_policy``, keyword settings, ``learning_rate``, ``5e3``), envs
of one's own (instances, functions, wrappers, ``module:EnvId`` in the current directory, envs registered by a
script) and training a finished run further."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import polyak
from polyak.cli import main
from polyak.errors import ConfigError
from polyak.ginconf import configs_from_file, shipped_configs
from polyak.planning import ALGORITHMS, plan_run
from polyak.run_dir import RunDir

ENVS_MODULE = '''
import gymnasium as gym
import numpy as np


class Point(gym.Env):
    """Move a point to the origin: observation its position, action (2-D) its velocity; 20 steps an episode."""

    observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.position = self.np_random.uniform(-5.0, 5.0, 2).astype(np.float32)
        return self.position, {}

    def step(self, action):
        self.t += 1
        self.position = np.clip(self.position + np.asarray(action, np.float32), -10.0, 10.0).astype(np.float32)
        return self.position, -float(np.linalg.norm(self.position)), False, self.t >= 20, {}


class Halved(gym.ActionWrapper):
    """A wrapper of the user's: halves every action."""

    def action(self, action):
        return 0.5 * np.asarray(action)


def make_point():
    return Halved(Point())


gym.register("FirstHourPoint-v0", entry_point=Point)
'''
TINY = ["TrainerConfig.max_env_steps=400", "TrainerConfig.start_steps=100", "ReplayConfig.min_size=100",
        "TrainerConfig.eval_interval=200", "TrainerConfig.eval_episodes=2", "NetworkConfig.hidden_sizes=(16, 16)",
        "critic/NetworkConfig.hidden_sizes=(16, 16)",
        "AgentConfig.batch_size=16", "TrainerConfig.progress_bar=False"]
SETTINGS = {"max_env_steps": 400, "learning_starts": 100, "eval_interval": 200, "eval_episodes": 2,
            "hidden_sizes": (16, 16), "batch_size": 16, "progress_bar": False}
# The console script `polyak` does not put the current directory on sys.path (python -m and -c do): mimic it.
CONSOLE = "import sys; del sys.path[0]; from polyak.cli import main; sys.exit(main(sys.argv[1:]))"


def user_polyak(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``polyak ARGS`` as a user runs it in ``cwd`` (no PYTHONPATH of ours)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-c", CONSOLE, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def gin_params(bindings: list[str]) -> list[str]:
    return [arg for binding in bindings for arg in ("--gin-param", binding)]


def one_error_line(result: subprocess.CompletedProcess, *fragments: str) -> str:
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("polyak: error")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def warnings_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("polyak: warning")]


def eval_rows(run: Path) -> list[tuple[int, float]]:
    with open(run / "metrics.csv", newline="") as handle:
        return [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == "eval"]


@pytest.fixture
def envs_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``first_hour_envs.py`` in ``tmp_path``, importable by this process too."""
    (tmp_path / "first_hour_envs.py").write_text(ENVS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ------------------------------------------------------------------ 2. --env, --algo, the recommended config
def test_env_alone_gets_the_recommended_config_for_one_env(tmp_path: Path) -> None:
    plan = plan_run(env="Pendulum-v1", bindings=[f"TrainerConfig.runs_root = '{tmp_path}'"], seed=1)
    trainer, agent = plan.configs.trainer, plan.configs.agent
    assert trainer.env_id == "Pendulum-v1" and trainer.num_envs == 1 and trainer.solve_score is None
    assert (trainer.eval_interval, trainer.eval_episodes, trainer.start_steps) == (5000, 5, 5000)
    assert trainer.max_env_steps == 100_000
    assert agent.algorithm.value == "crossq_sac"
    assert (agent.n_critics, agent.policy_delay, agent.batch_size) == (2, 3, 256)
    assert (plan.configs.actor.hidden_sizes, plan.configs.critic.hidden_sizes) == ((256, 256), (512, 512))
    assert plan.run_dir == tmp_path / "Pendulum-v1_crossq_sac_seed_1"  # named after the env and the config


def test_recommended_config_says_what_it_is_in_its_first_line() -> None:
    first = shipped_configs()["recommended"].read_text().splitlines()[0]
    assert first.startswith("# ") and first.endswith(".") and "CrossQ in its SAC mode" in first and len(first) <= 120


SUITE_TASKS = ("halfcheetah", "hopper", "walker2d", "ant", "humanoid")


@pytest.mark.parametrize("task", SUITE_TASKS)
def test_the_recommended_config_is_the_suites_measured_row(task: str) -> None:
    """recommended.gin learns exactly as the suite's polyak_recommended row (suite/<task>_recommended.gin), the row
    its figures come from; only the env and the evaluation (5 episodes instead of the suite's 10) may differ."""
    recommended = configs_from_file(shipped_configs()["recommended"], [])
    measured = configs_from_file(shipped_configs()[f"suite/{task}_recommended"], [])
    for name in ("agent", "actor", "critic", "replay", "noise", "sac", "td7"):
        assert getattr(recommended, name) == getattr(measured, name), name
    learning = ("num_envs", "max_env_steps", "start_steps", "learn_every", "learn_steps", "eval_interval")
    for name in learning:
        assert getattr(recommended.trainer, name) == getattr(measured.trainer, name), name
    assert recommended.agent.actor_average is not None


@pytest.mark.parametrize("task", SUITE_TASKS)
def test_the_recommended_row_trains_as_the_rules_pick_with_a_wider_critic(task: str) -> None:
    """suite/<task>_recommended.gin is <task>_crossq_sac.gin (the row the suite's rule picked) with a 512-wide critic
    and the averaged actor, and nothing else (benchmarks/critic_width.py measured exactly that change)."""
    recommended = configs_from_file(shipped_configs()[f"suite/{task}_recommended"], [])
    pick = configs_from_file(shipped_configs()[f"suite/{task}_crossq_sac"], [])
    assert recommended.agent.actor_average is not None and pick.agent.actor_average is None
    assert dataclasses.replace(recommended.agent, actor_average=None) == pick.agent
    assert recommended.critic.hidden_sizes == (512, 512) and pick.critic.hidden_sizes == (256, 256)
    assert dataclasses.replace(recommended.critic, hidden_sizes=(256, 256)) == pick.critic
    for name in ("trainer", "actor", "replay", "noise", "sac", "td7"):
        assert getattr(recommended, name) == getattr(pick, name), name


@pytest.mark.parametrize("algo", ALGORITHMS)
def test_algo_picks_the_generic_config_of_that_algorithm(algo: str, tmp_path: Path) -> None:
    plan = plan_run(env="Pendulum-v1", algo=algo, bindings=["TrainerConfig.max_env_steps = 100000",
                                                             f"TrainerConfig.runs_root = '{tmp_path}'"])
    expected = configs_from_file(shipped_configs()[f"suite/{algo}"], ["TrainerConfig.max_env_steps = 100000"])
    assert plan.configs.agent == expected.agent and plan.configs.trainer.env_id == "Pendulum-v1"
    assert plan.run_dir.name == f"Pendulum-v1_{algo}"


def test_cli_env_trains_into_a_run_named_after_env_and_config(tmp_path: Path) -> None:
    result = user_polyak("train", "--env", "Pendulum-v1", "--seed", "1", *gin_params(TINY), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    run = tmp_path / "runs" / "Pendulum-v1_crossq_sac_seed_1"
    config = json.loads((run / "config.json").read_text())
    assert config["trainer"]["env_id"] == "Pendulum-v1" and config["trainer"]["num_envs"] == 1
    assert [steps for steps, _ in eval_rows(run)] == [200, 400]
    assert json.loads((run / "env.json").read_text())["made_by"] == "id"


def test_cli_help_lists_the_algorithms() -> None:
    help_text = subprocess.run([sys.executable, "-m", "polyak.cli", "train", "--help"], capture_output=True,
                               text=True, timeout=120).stdout
    assert all(name in " ".join(help_text.split()) for name in ALGORITHMS)


def test_cli_bad_algo_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--env", "Pendulum-v1", "--algo", "td4"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "unknown algorithm 'td4'" in error
    assert all(name in error for name in ALGORITHMS)


def test_a_config_made_for_another_env_warns_naming_what_it_keeps(tmp_path: Path) -> None:
    """The issue's run: the default Reacher config on MountainCar kept num_envs 20, solve 30, eval 200000 silently."""
    result = user_polyak("train", "--env", "MountainCarContinuous-v0", "--config", "unity_reacher",
                         *gin_params(["TrainerConfig.max_env_steps=400", "ReplayConfig.min_size=100",
                                      "actor/NetworkConfig.hidden_sizes=(8,)",
                                      "critic/NetworkConfig.hidden_sizes=(8,)", "AgentConfig.batch_size=16",
                                      "TrainerConfig.progress_bar=False"]), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    warned = warnings_of(result.stderr)
    assert len(warned) == 1, result.stderr
    for kept in ("unity_reacher.gin is made for polyak/UnityReacher-v0", "num_envs = 20", "solve_score = 30.0",
                 "eval_interval = 200000"):
        assert kept in warned[0]
    assert "max_env_steps" not in warned[0]  # bound by the user: not inherited
    assert (tmp_path / "runs" / "MountainCarContinuous-v0_unity_reacher").is_dir()


def test_a_config_made_for_its_own_env_or_no_env_does_not_warn() -> None:
    assert plan_run("pendulum").warnings == ()
    assert plan_run(env="Hopper-v5", algo="td7").warnings == ()
    plan = plan_run("pendulum", env="MountainCarContinuous-v0")
    assert len(plan.warnings) == 1 and "max_env_steps = 20000, eval_interval = 1000" in plan.warnings[0]


def test_an_env_id_given_as_config_points_at_env() -> None:
    with pytest.raises(ConfigError, match="is an environment id, not a config: polyak train --env Pendulum-v1"):
        polyak.train("Pendulum-v1")
    with pytest.raises(ConfigError, match="give it once"):
        plan_run(env="Pendulum-v1", bindings=["TrainerConfig.env_id = 'Hopper-v5'"])


# ------------------------------------------------------------------ 3. budgets, evaluation on by default
def test_a_budget_below_the_replay_min_size_is_refused_in_one_line(tmp_path: Path) -> None:
    """The issue's run: --config td7 on Pendulum for 2,000 steps ended with 0 updates and no evaluation."""
    result = user_polyak("train", "--config", "td7", "--env", "Pendulum-v1",
                         "--gin-param", "TrainerConfig.max_env_steps=2000", cwd=tmp_path)
    one_error_line(result, "TrainerConfig.max_env_steps = 2000", "ReplayConfig.min_size = 25001")
    assert not (tmp_path / "runs").exists()


def test_a_short_learning_budget_warns_in_one_line(tmp_path: Path) -> None:
    plan = plan_run(env="Pendulum-v1", settings={"max_env_steps": 5100})  # 5,000 start steps
    assert len(plan.warnings) == 1 and "only 100 of the 5100 env steps" in plan.warnings[0]
    plan = plan_run(env="Pendulum-v1", settings={"max_env_steps": 5100, "start_steps": 6000})
    assert len(plan.warnings) == 1 and "every action of this run is random" in plan.warnings[0]
    assert plan_run(env="Pendulum-v1", settings={"max_env_steps": 10_000}).warnings == ()
    result = user_polyak("train", "--env", "Pendulum-v1", *gin_params([*TINY, "TrainerConfig.max_env_steps=120"]),
                         cwd=tmp_path)
    assert result.returncode == 0 and len(warnings_of(result.stderr)) == 1, result.stderr[-2000:]
    assert "only 20 of the 120 env steps" in result.stderr


@pytest.mark.parametrize("name", sorted(shipped_configs()))
def test_every_shipped_config_evaluates_by_default(name: str) -> None:
    assert configs_from_file(shipped_configs()[name]).trainer.eval_interval is not None


# ------------------------------------------------------------------ 4. SB3 habits
@pytest.fixture(scope="module")
def point_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny run on a 2-D action env given as an env instance with a wrapper of the user's."""
    root = tmp_path_factory.mktemp("point")
    (root / "first_hour_envs.py").write_text(ENVS_MODULE)
    sys.path.insert(0, str(root))
    try:
        import first_hour_envs  # type: ignore[import-not-found]

        run = polyak.train(env=first_hour_envs.make_point(), run_dir=root / "run", seed=0, **SETTINGS)
    finally:
        sys.path.remove(str(root))
    return run.path


def test_predict_returns_sb3s_pair_for_one_observation_and_a_batch(point_run: Path) -> None:
    policy = polyak.load(point_run)
    obs = np.array([1.0, -2.0], dtype=np.float32)
    action, state = policy.predict(obs, state=None, episode_start=np.ones(1, bool), deterministic=True)
    assert action.shape == (2,) and state is None  # a 2-D action stays one action (it was unpacked into two)
    actions, _ = policy.predict(np.stack([obs] * 5))
    assert actions.shape == (5, 2)
    np.testing.assert_allclose(actions[0], action, rtol=0, atol=1e-6)


def test_sb3s_own_evaluate_policy_runs_a_polyak_policy(point_run: Path, envs_module: Path) -> None:
    evaluation = pytest.importorskip("stable_baselines3.common.evaluation")
    import first_hour_envs  # type: ignore[import-not-found]

    policy = polyak.load(point_run)
    mean, std = evaluation.evaluate_policy(policy, first_hour_envs.make_point(), n_eval_episodes=3, warn=False)
    assert np.isfinite(mean) and std >= 0
    scores, lengths = evaluation.evaluate_policy(policy, first_hour_envs.make_point(), n_eval_episodes=2,
                                                 return_episode_rewards=True, warn=False)
    assert lengths == [20, 20] and len(scores) == 2


def test_polyak_evaluate_gives_mean_and_std_on_an_instance_a_vector_env_or_an_id(point_run: Path,
                                                                               envs_module: Path) -> None:
    import first_hour_envs  # type: ignore[import-not-found]

    policy = polyak.load(point_run)
    mean, std = polyak.evaluate(policy, first_hour_envs.make_point(), n_episodes=4, seed=0)
    assert isinstance(mean, float) and isinstance(std, float) and mean < 0
    again = polyak.evaluate(policy, first_hour_envs.make_point(), n_episodes=4, seed=0)
    assert again == (mean, std)  # seeded: the same episodes
    vector = gym.vector.SyncVectorEnv([first_hour_envs.make_point] * 2)
    assert np.isfinite(polyak.evaluate(policy, vector, n_episodes=4, seed=0)[0])
    pendulum = polyak.train("pendulum", seed=0, run_dir=envs_module / "pendulum", max_env_steps=300,
                            learning_starts=100, eval_interval=300, eval_episodes=1, hidden_sizes=(8,),
                            batch_size=16, progress_bar=False)
    score = polyak.evaluate(pendulum.load(), "Pendulum-v1", n_episodes=2, seed=0)
    assert -2000 < score[0] < 0
    # counts as a numpy int or a whole float (2e0), as training settings take them: the same two episodes
    assert polyak.evaluate(pendulum.load(), "Pendulum-v1", n_episodes=np.int64(2), seed=0) == score
    assert polyak.evaluate(pendulum.load(), "Pendulum-v1", n_episodes=2.0, seed=0, max_episode_steps=1e3) == score
    with pytest.raises(ConfigError, match=r"^n_episodes must be a whole number >= 1, got 2.5$"):
        polyak.evaluate(pendulum.load(), "Pendulum-v1", n_episodes=2.5)


def test_train_takes_sb3_style_keywords_and_whole_floats(tmp_path: Path) -> None:
    """The issue's call polyak.train("pendulum", max_env_steps=400) raised TypeError; 5e3 was refused."""
    run = polyak.train("pendulum", run_dir=tmp_path / "run", max_env_steps=4e2, learning_starts=1e2,
                       learning_rate=3e-4, buffer_size=10_000, eval_freq=200, n_eval_episodes=1, net_arch=[16, 16],
                       batch_size=16, tau=0.01, gamma=0.95, train_freq=2, gradient_steps=2, progress_bar=False)
    config = json.loads((run.path / "config.json").read_text())
    assert config["trainer"]["max_env_steps"] == 400 and run.summary["env_steps"] == 400
    assert config["actor"]["lr"] == config["critic"]["lr"] == 3e-4
    assert config["replay"]["capacity"] == 10_000 and config["replay"]["min_size"] == 100
    assert (config["trainer"]["learn_every"], config["trainer"]["learn_steps"]) == (2, 2)
    assert (config["agent"]["tau"], config["agent"]["gamma"]) == (0.01, 0.95)
    with pytest.raises(ConfigError, match=r"must be int, got 5\.5"):
        plan_run("pendulum", settings={"max_env_steps": 5.5})
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        plan_run("pendulum", settings={"learning_rat": 1e-3})


@pytest.mark.parametrize("binding", ["AgentConfig.learning_rate=1e-3", "learning_rate=1e-3"])
def test_an_sb3_name_points_at_the_real_binding(binding: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--env", "Pendulum-v1", "--gin-param", binding]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "NetworkConfig.lr" in error
    with pytest.raises(ConfigError, match=r"ReplayConfig\.capacity"):
        plan_run(env="Pendulum-v1", bindings=["AgentConfig.buffer_size = 10"])


def test_the_evaluation_callback_stops_training_cleanly(tmp_path: Path) -> None:
    seen: list[tuple[int, float]] = []

    def stop_at_first(env_steps: int, score: float) -> bool:
        seen.append((env_steps, score))
        return False

    run = polyak.train("pendulum", run_dir=tmp_path / "run", callback=stop_at_first, **SETTINGS)
    assert seen == eval_rows(run.path) and [steps for steps, _ in seen] == [200]
    assert run.summary["env_steps"] == 200 and run.summary["interrupted"] is None
    assert json.loads((run.path / "summary.json").read_text())["env_steps"] == 200
    assert int(RunDir(run.path).newest_checkpoint().name.rsplit("_", 1)[-1]) == 200  # the final checkpoint
    more = run.train_more(200, callback=lambda steps, score: None)  # None goes on; the run continues to 400
    assert more.summary["env_steps"] == 400 and [s for s, _ in eval_rows(run.path)] == [200, 400]
    assert more is run and run.configs.trainer.max_env_steps == 400  # the Run is brought up to date
    run.train_more(200)  # and can go on again, as SB3's learn() can
    assert run.summary["env_steps"] == 600 and [s for s, _ in eval_rows(run.path)] == [200, 400, 600]
    with pytest.raises(ConfigError, match=r"whole number of env steps >= 1, got 0.5"):
        run.train_more(0.5)


# ------------------------------------------------------------------ 5. envs of one's own
def test_an_env_instance_with_a_users_wrapper_is_recorded_and_test_says_what_to_pass(point_run: Path) -> None:
    source = json.loads((point_run / "env.json").read_text())
    assert source["made_by"] == "instance" and source["wrappers"] == ["Halved"]
    config = json.loads((point_run / "config.json").read_text())
    assert config["trainer"]["env_id"] == "Point"
    for command in (["test", str(point_run)], ["record", str(point_run), "--out", str(point_run / "v.gif")]):
        one_error_line(user_polyak(*command, cwd=point_run), "inside the wrappers Halved",
                       f"polyak.evaluate(polyak.load('{point_run}'), env)")
    one_error_line(user_polyak("train", "--resume", str(point_run), "--gin-param", "TrainerConfig.max_env_steps=800",
                               cwd=point_run), f"polyak.train(resume='{point_run}', env=...)")


def test_an_instance_made_by_gym_make_is_rebuilt_from_its_id(tmp_path: Path) -> None:
    run = polyak.train(gym.make("Pendulum-v1", g=9.0), run_dir=tmp_path / "run", seed=0, **SETTINGS)
    config = json.loads((run.path / "config.json").read_text())
    assert config["trainer"]["env_id"] == "Pendulum-v1" and config["trainer"]["env_kwargs"] == {"g": 9.0}
    result = user_polyak("test", str(run.path), "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0 and "mean score" in result.stdout, result.stderr


def test_a_function_from_a_module_is_imported_again_by_test(envs_module: Path) -> None:
    import first_hour_envs  # type: ignore[import-not-found]

    run = polyak.train(env=first_hour_envs.make_point, run_dir=envs_module / "run", seed=0, **SETTINGS)
    assert json.loads((run.path / "env.json").read_text())["callable"] == "first_hour_envs:make_point"
    tested = user_polyak("test", str(run.path), "--episodes", "2", cwd=envs_module)  # found in the cwd
    assert tested.returncode == 0 and "mean score" in tested.stdout, tested.stderr
    made = polyak.train(env=lambda: first_hour_envs.Point(), run_dir=envs_module / "lambda", seed=0, **SETTINGS)
    one_error_line(user_polyak("test", str(made.path), cwd=envs_module), "<lambda>", "define it in a module")


def test_cli_finds_a_module_in_the_current_directory_or_says_pythonpath(tmp_path: Path) -> None:
    (tmp_path / "first_hour_envs.py").write_text(ENVS_MODULE)
    result = user_polyak("train", "--env", "first_hour_envs:FirstHourPoint-v0", *gin_params(TINY), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    run = tmp_path / "runs" / "FirstHourPoint-v0_crossq_sac"
    assert [steps for steps, _ in eval_rows(run)] == [200, 400]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    one_error_line(user_polyak("train", "--env", "first_hour_envs:FirstHourPoint-v0", *gin_params(TINY),
                               cwd=elsewhere), "no first_hour_envs.py in the current directory", "PYTHONPATH")


SCRIPT = '''
import gymnasium as gym

import polyak
from first_hour_envs import Point


class Local(Point):
    pass


gym.register("ScriptPoint-v0", entry_point=Point)
gym.register("LocalPoint-v0", entry_point=Local)
settings = dict(max_env_steps=300, learning_starts=100, eval_interval=300, eval_episodes=1, hidden_sizes=(8,),
                batch_size=16, progress_bar=False)
polyak.train(env="ScriptPoint-v0", run_dir="module_entry", **settings)
polyak.train(env="LocalPoint-v0", run_dir="script_entry", **settings)
'''


def test_an_env_registered_by_the_users_script_is_registered_again_or_named(tmp_path: Path) -> None:
    (tmp_path / "first_hour_envs.py").write_text(ENVS_MODULE)
    (tmp_path / "train_script.py").write_text(SCRIPT)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    trained = subprocess.run([sys.executable, "train_script.py"], cwd=tmp_path, capture_output=True, text=True,
                             env=env, timeout=300)
    assert trained.returncode == 0, trained.stderr[-2000:]
    tested = user_polyak("test", "module_entry", "--episodes", "1", cwd=tmp_path)
    assert tested.returncode == 0 and "ScriptPoint-v0" in tested.stdout, tested.stderr
    one_error_line(user_polyak("test", "script_entry", cwd=tmp_path), "registered by the training script itself",
                   "__main__:Local", "polyak.evaluate(")


# ------------------------------------------------------------------ 6. training a finished run further
def test_a_finished_run_continued_to_2n_writes_what_one_run_to_2n_writes(tmp_path: Path) -> None:
    """N on the evaluation schedule (every 200); tests/smoke/test_run_end.py has a budget between evaluations."""
    args = ["--env", "Pendulum-v1", "--seed", "3", *gin_params(TINY[1:])]
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    assert user_polyak("train", *args, "--run-dir", str(whole), "--gin-param", "TrainerConfig.max_env_steps=800",
                       cwd=tmp_path).returncode == 0
    first = user_polyak("train", *args, "--run-dir", str(halves), "--gin-param", "TrainerConfig.max_env_steps=400",
                        cwd=tmp_path)
    assert first.returncode == 0 and (halves / "summary.json").is_file(), first.stderr[-2000:]
    same = user_polyak("train", "--resume", str(halves), "--gin-param", "TrainerConfig.max_env_steps=400",
                       cwd=tmp_path)
    one_error_line(same, "already finished at 400 env steps", "TrainerConfig.max_env_steps=800")
    more = user_polyak("train", "--resume", str(halves), "--gin-param", "TrainerConfig.max_env_steps=800",
                       cwd=tmp_path)
    assert more.returncode == 0 and "resuming" in more.stdout, more.stderr[-2000:]
    assert (halves / "metrics.csv").read_bytes() == (whole / "metrics.csv").read_bytes()
    assert json.loads((halves / "summary.json").read_text())["env_steps"] == 800
    np.testing.assert_array_equal(polyak.load(halves, "newest").predict(np.zeros(3))[0],
                                  polyak.load(whole, "newest").predict(np.zeros(3))[0])


def test_the_api_continues_a_finished_run(tmp_path: Path) -> None:
    run = polyak.train("pendulum", run_dir=tmp_path / "run", seed=0, **SETTINGS)
    with pytest.raises(ConfigError, match="already finished at 400 env steps"):
        polyak.train(resume=run.path, max_env_steps=400)
    more = polyak.train(resume=run.path, max_env_steps=600)
    assert more.summary["env_steps"] == 600 and [s for s, _ in eval_rows(run.path)] == [200, 400, 600]
