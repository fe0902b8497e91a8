"""polyak vs Stable-Baselines3, side by side in one process on identical settings (issue #6).

Usage: python benchmarks/speed.py [--quick] [--only a b c] [--threads 1] [--device cpu] [--seeds 0 1 2 3 4]
       [--polyak-config configs/pendulum_fast.gin] [--extras | --no-extras] [--out benchmarks/results/speed.json]

What is measured (every timing with ``--threads`` torch threads, 1 by default, for both libraries):

(a) Learning updates/s from a replay prefilled with the same random transitions (HalfCheetah dims,
    obs 17 / action 6): polyak ``replay.sample`` + ``learner.update`` vs SB3 ``model.train(gradient_steps=K)``.
    Rows: TD3 256-256, batch 256, lr 1e-3, tau 0.005, 2 critics, policy delay 2, target noise 0.2 / clip 0.5;
    the seed's DDPG Reacher networks (obs 33 / action 4, actor 256-128, critic 128-128, batch 256, tau 1e-3,
    1 critic, no delay or smoothing) matched to what SB3 can build (action joins the critic's input, no
    BatchNorm), plus polyak with the real seed config (BatchNorm, action at critic layer 1, grad clip) as
    an unmatched extra row. Rounds interleave the libraries (order reversed every other round); medians
    and the ratio of medians are reported.
(b) End-to-end env steps/s of TD3 256-256 (batch 256, one update per env step, the same random start
    steps) on Pendulum-v1 and HalfCheetah-v5, evaluation and checkpoints off (polyak still writes its run
    dir: metrics.csv, TensorBoard events and one final checkpoint), construction + training timed.
    Repeats run in ABBA order.
(c) Wall seconds to the first deterministic evaluation (5 episodes every 1,000 steps) with mean >= -200
    on Pendulum-v1, per seed, libraries alternating: SB3 TD3 with the rl-baselines3-zoo Pendulum settings,
    polyak with configs/pendulum_fast.gin (DDPG 64-64, 3-step returns; its best Pendulum config, see
    ``POLYAK_CONFIG_WHY``).
    Unsolved runs count at the time they reached the step cap.

``ratios`` (top level) are polyak/SB3 so that higher is better for polyak: updates/s and steps/s are
polyak over SB3; ``pendulum_time_to_threshold`` is SB3 median time over polyak median time. All are
wall-clock; ``cpu_ratios`` repeat the throughput ones per CPU second of this process (``time.process_time``),
which waiting for a shared CPU does not inflate: compare the two to see how much the load distorted a run.
Opt-in AgentConfig fields ``compile`` and ``precision='bfloat16'`` (when this polyak has them) are
measured as extra, labelled polyak rows (``extra_ratios``), never mixed into ``ratios``.

``--quick`` (fewer rounds/steps, 1 seed with a 5,000-step cap in (c)) takes under 2 minutes and writes
nothing unless ``--out`` is given. Its (c) cap is below the zoo's 10,000 learning_starts, so SB3 cannot
solve there: that ratio only checks the wiring (``ratio_note`` calls it a lower bound). The full run is
estimated at ~25 minutes on the project's 2-core CPU at load 4-5 ((a) ~4, (b) ~9, (c) ~12), less when
idle, plus up to ~7 minutes per SB3 seed that runs to the 30,000-step cap. The last stdout line is the
JSON result.
"""

from __future__ import annotations

import os
import sys

# Threads for OpenMP/MKL/OpenBLAS are fixed when torch and numpy load, so set them first (``--threads N``).
os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = (
    sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv[:-1] else "1")

import argparse
import contextlib
import dataclasses
import importlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gin
import gymnasium as gym
import numpy as np
import torch
from common import code_commit, library_versions, load_average, machine_info, sb3_deterministic_action
from stable_baselines3 import DDPG, TD3
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.noise import NormalActionNoise

import polyak
from polyak.agent import Agent
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig
from polyak.envs import make_env
from polyak.evaluation import evaluation_seed, run_episodes
from polyak.ginconf import build_configs_from_gin, parse_gin
from polyak.replay import Replay
from polyak.seeding import run_streams
from polyak.trainer import Trainer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "speed.json"
THRESHOLD = -200.0

# rl-baselines3-zoo, hyperparams/td3.yml, entry Pendulum-v1 (the same values as its Pendulum-v0 entry at
# DLR-RM/rl-baselines3-zoo@a02f4fb; Pendulum-v1 as in the fork RaffaeleGalliera/rl-baselines3-zoo@4dc679d
# and the hyperparameters on the model card https://huggingface.co/sb3/td3-Pendulum-v1). Unset keys take
# SB3's TD3 defaults: batch_size 256, tau 0.005, policy_delay 2, target_policy_noise 0.2, target_noise_clip 0.5.
ZOO_TD3_PENDULUM: dict[str, Any] = {
    "n_timesteps": 20000, "policy": "MlpPolicy", "gamma": 0.98, "buffer_size": 200000, "learning_starts": 10000,
    "noise_type": "normal", "noise_std": 0.1, "gradient_steps": -1, "train_freq": [1, "episode"],
    "learning_rate": 1e-3, "policy_kwargs": "dict(net_arch=[400, 300])",
}
ZOO_SOURCE = ("rl-baselines3-zoo hyperparams/td3.yml, Pendulum-v1 (DLR-RM/rl-baselines3-zoo@a02f4fb Pendulum-v0 "
              "entry, same values; RaffaeleGalliera/rl-baselines3-zoo@4dc679d Pendulum-v1; "
              "https://huggingface.co/sb3/td3-Pendulum-v1)")
POLYAK_CONFIG_WHY = ("configs/pendulum_fast.gin: configs/pendulum.gin (DDPG, 1,000 random start steps, 1 update per "
                     "step) with 64-64 networks and 3-step returns. Chosen on seeds 100-109 with this script's "
                     "protocol before evaluations drew new start states (9/10 reached eval >= -200, median 3,500 "
                     "steps and ~6 s; 128-128 + 3-step and 64-64 + 1-step were slower: median 8.1 s and 9.4 s on "
                     "seeds 100-104). Re-measured with new start states per evaluation: 10/10 of seeds 100-109, "
                     "median 3,000 steps, 5.2 s (benchmarks/results/pendulum_fast_seeds_100_109.json). Smaller "
                     "networks cut the matmul work per update ~12x; n-step returns cut the steps needed.")


# ---------------------------------------------------------------------------------------------- settings
@dataclasses.dataclass(frozen=True)
class Budget:
    """How much each part runs; ``QUICK`` and ``FULL`` below."""

    fill: int                 # (a) random transitions in each replay
    rounds: int               # (a) interleaved rounds
    updates: int              # (a) updates per timed block
    warmup: int               # (a) untimed updates per learner before the rounds (compile happens here)
    e2e_steps: int            # (b) env steps per run
    e2e_start: int            # (b) random start steps (learning starts there too)
    e2e_repeats: int          # (b) runs per library and env (ABBA order)
    cap: int                  # (c) step cap per run
    seeds: tuple[int, ...]    # (c) seeds


QUICK = Budget(fill=5000, rounds=2, updates=150, warmup=20, e2e_steps=1000, e2e_start=500, e2e_repeats=1,
               cap=5000, seeds=(0,))
FULL = Budget(fill=10000, rounds=9, updates=400, warmup=100, e2e_steps=5000, e2e_start=1000, e2e_repeats=2,
              cap=30000, seeds=(0, 1, 2, 3, 4))


def polyak_extras() -> dict[str, dict[str, Any]]:
    """Opt-in speed switches this polyak's AgentConfig has: variant name -> AgentConfig overrides."""
    fields = {f.name for f in dataclasses.fields(AgentConfig)}
    extras: dict[str, dict[str, Any]] = {}
    if "precision" in fields:
        extras["polyak_bf16"] = {"precision": "bfloat16"}
    if "compile" in fields:
        extras["polyak_compile"] = {"compile": True}
    if {"precision", "compile"} <= fields:
        extras["polyak_compile_bf16"] = {"compile": True, "precision": "bfloat16"}
    return extras


def versions() -> dict[str, str]:
    """Versions of the libraries that take part."""
    return {"polyak": polyak.__version__, **library_versions()}


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence a library's stdout (polyak's evaluation lines use tqdm.write) so the last line stays JSON."""
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        yield


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


# ---------------------------------------------------------------------------------------------- (a) updates/s
class SpacesOnlyEnv(gym.Env):
    """An env that only carries Box spaces, so SB3 can build a model of the right shapes; never learnt from."""

    def __init__(self, obs_dim: int, action_dim: int) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (action_dim,), np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.zeros(self.observation_space.shape, np.float32), 0.0, False, False, {}


@dataclasses.dataclass(frozen=True)
class LearnSpec:
    """One matched learning setting of (a)."""

    name: str
    obs_dim: int
    action_dim: int
    actor_sizes: tuple[int, ...]
    critic_sizes: tuple[int, ...]
    n_critics: int
    policy_delay: int
    target_noise: float | None
    tau: float
    batch_size: int = 256
    lr: float = 1e-3
    gamma: float = 0.99


TD3_SPEC = LearnSpec("td3_256x256", 17, 6, (256, 256), (256, 256), n_critics=2, policy_delay=2, target_noise=0.2,
                     tau=0.005)
REACHER_SPEC = LearnSpec("reacher_ddpg", 33, 4, (256, 128), (128, 128), n_critics=1, policy_delay=1,
                         target_noise=None, tau=0.001)


def random_transitions(count: int, obs_dim: int, action_dim: int, seed: int) -> dict[str, np.ndarray]:
    """The same random transitions for both libraries (1% terminal)."""
    rng = np.random.default_rng(seed)
    return {
        "obs": rng.standard_normal((count, obs_dim)).astype(np.float32),
        "action": rng.uniform(-1, 1, (count, action_dim)).astype(np.float32),
        "reward": rng.standard_normal(count).astype(np.float32),
        "next_obs": rng.standard_normal((count, obs_dim)).astype(np.float32),
        "terminated": (rng.random(count) < 0.01).astype(np.float32),
    }


def polyak_learner(agent: Agent, replay: Replay, batch_size: int, device: str) -> Callable[[int], None]:
    """k updates exactly as the trainer's learning phase does them (sample, update, priorities)."""
    torch_device = torch.device(device)

    def run(k: int) -> None:
        for _ in range(k):
            batch = replay.sample(batch_size, torch_device)
            result = agent.learner.update(batch)
            replay.update_priorities(batch.indices, result.td_errors)
        synchronize(device)

    return run


def fill_polyak_replay(data: dict[str, np.ndarray], gamma: float, seed: int) -> Replay:
    """A uniform polyak replay holding ``data``, added one transition at a time like the trainer does."""
    count, obs_dim = data["obs"].shape
    replay = Replay(ReplayConfig(capacity=count, min_size=min(count, 1000)), gamma, 1, obs_dim,
                    data["action"].shape[1], np.random.default_rng(seed))
    for i in range(count):
        done = data["terminated"][i : i + 1]
        replay.add(data["obs"][i : i + 1], data["action"][i : i + 1], data["reward"][i : i + 1],
                   data["next_obs"][i : i + 1], done, done.astype(bool))
    return replay


def make_polyak_learner(spec: LearnSpec, data: dict[str, np.ndarray], device: str, seed: int,
                        overrides: dict[str, Any] | None = None) -> Callable[[int], None]:
    """polyak on ``spec``: no BatchNorm, the action joins the critic's input (SB3's layout)."""
    agent_cfg = AgentConfig(gamma=spec.gamma, tau=spec.tau, batch_size=spec.batch_size, n_critics=spec.n_critics,
                            policy_delay=spec.policy_delay, target_policy_noise=spec.target_noise,
                            target_noise_clip=0.5, device=device, **(overrides or {}))
    actor = NetworkConfig(hidden_sizes=spec.actor_sizes, lr=spec.lr, action_layer=0)
    critic = NetworkConfig(hidden_sizes=spec.critic_sizes, lr=spec.lr, action_layer=0)
    agent = Agent(spec.obs_dim, spec.action_dim, 1, agent_cfg, actor, critic, NoiseConfig(),
                  np.random.SeedSequence(seed))
    return polyak_learner(agent, fill_polyak_replay(data, spec.gamma, seed), spec.batch_size, device)


def make_polyak_seed_reacher(data: dict[str, np.ndarray], device: str, seed: int) -> Callable[[int], None]:
    """polyak with configs/unity_reacher_plain_ddpg.gin's own agent and networks (BatchNorm, action at layer 1)."""
    parse_gin(ROOT / "configs" / "unity_reacher_plain_ddpg.gin", [f"AgentConfig.device = '{device}'"])
    try:
        configs = build_configs_from_gin()
    finally:
        gin.clear_config()
    agent = Agent(REACHER_SPEC.obs_dim, REACHER_SPEC.action_dim, 1, configs.agent, configs.actor, configs.critic,
                  configs.noise, np.random.SeedSequence(seed))
    replay = fill_polyak_replay(data, configs.agent.gamma, seed)
    return polyak_learner(agent, replay, configs.agent.batch_size, device)


def make_sb3_learner(spec: LearnSpec, data: dict[str, np.ndarray], device: str, seed: int) -> Callable[[int], None]:
    """SB3 TD3 (or DDPG when ``spec`` has one critic, no delay, no smoothing) on ``spec``; times ``train``."""
    env = SpacesOnlyEnv(spec.obs_dim, spec.action_dim)
    common = dict(learning_rate=spec.lr, buffer_size=len(data["reward"]), learning_starts=0,
                  batch_size=spec.batch_size, tau=spec.tau, gamma=spec.gamma, device=device, seed=seed, verbose=0,
                  policy_kwargs={"net_arch": {"pi": list(spec.actor_sizes), "qf": list(spec.critic_sizes)}})
    if spec.n_critics == 1:
        model: TD3 = DDPG("MlpPolicy", env, **common)
    else:
        model = TD3("MlpPolicy", env, policy_delay=spec.policy_delay, target_policy_noise=spec.target_noise or 0.0,
                    target_noise_clip=0.5, **common)
    buffer = model.replay_buffer
    assert buffer is not None
    for i in range(len(data["reward"])):
        buffer.add(data["obs"][i : i + 1], data["next_obs"][i : i + 1], data["action"][i : i + 1],
                   data["reward"][i : i + 1], data["terminated"][i : i + 1], [{}])
    model._setup_learn(total_timesteps=1)

    def run(k: int) -> None:
        model.train(gradient_steps=k, batch_size=spec.batch_size)
        synchronize(device)

    return run


def timed_rounds(learners: dict[str, Callable[[int], None]], rounds: int, updates: int,
                 warmup: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Updates per wall second and per CPU second (this process) of each learner per round; rounds interleave
    the learners, reversing the order every other round."""
    for run in learners.values():
        run(warmup)
    wall: dict[str, list[float]] = {name: [] for name in learners}
    cpu: dict[str, list[float]] = {name: [] for name in learners}
    names = list(learners)
    for index in range(rounds):
        for name in names if index % 2 == 0 else reversed(names):
            started, cpu_started = time.perf_counter(), time.process_time()
            learners[name](updates)
            wall[name].append(round(updates / (time.perf_counter() - started), 1))
            cpu[name].append(round(updates / max(time.process_time() - cpu_started, 1e-9), 1))
    return wall, cpu


def summarise_rates(rates: dict[str, list[float]], cpu_rates: dict[str, list[float]],
                    baseline: str = "sb3") -> dict[str, Any]:
    """Per-round rates, medians, and each polyak row's ratio of medians over SB3 (the headline), plus the
    median of the per-round ratios (each pairs measurements taken close together: steadier under load) and
    the same per CPU second (insensitive to waiting for a shared CPU)."""
    out: dict[str, Any] = {}
    base, cpu_base = median(rates[baseline]), median(cpu_rates[baseline])
    for name, values in rates.items():
        row: dict[str, Any] = {"updates_per_s": values, "median": median(values),
                               "updates_per_cpu_s": cpu_rates[name], "cpu_median": median(cpu_rates[name])}
        if name != baseline:
            row["ratio_vs_sb3"] = ratio(median(values), base)
            row["median_round_ratio_vs_sb3"] = median([v / b for v, b in zip(values, rates[baseline], strict=True)])
            row["cpu_ratio_vs_sb3"] = ratio(median(cpu_rates[name]), cpu_base)
        out[name] = row
    return out


def build_learners(make: dict[str, Callable[[], Callable[[int], None]]]) -> tuple[
        dict[str, Callable[[int], None]], dict[str, str]]:
    """Build each learner; a failing extra (e.g. compile without a compiler) is recorded, not fatal."""
    learners: dict[str, Callable[[int], None]] = {}
    errors: dict[str, str] = {}
    for name, factory in make.items():
        try:
            learners[name] = factory()
        except Exception as error:
            if name in ("polyak", "sb3"):
                raise
            errors[name] = f"{type(error).__name__}: {error}"
    return learners, errors


def part_a(budget: Budget, device: str, extras: bool) -> dict[str, Any]:
    """(a) Learning updates/s: TD3 256-256, and the seed's Reacher DDPG networks (matched + the real config)."""
    load_start = load_average()
    result: dict[str, Any] = {}
    for spec in (TD3_SPEC, REACHER_SPEC):
        data = random_transitions(budget.fill, spec.obs_dim, spec.action_dim, seed=0)
        make: dict[str, Callable[[], Callable[[int], None]]] = {
            "polyak": lambda spec=spec, data=data: make_polyak_learner(spec, data, device, 0),
            "sb3": lambda spec=spec, data=data: make_sb3_learner(spec, data, device, 0),
        }
        if spec is REACHER_SPEC:
            make["polyak_seed_config"] = lambda data=data: make_polyak_seed_reacher(data, device, 0)
        if extras:
            for name, overrides in polyak_extras().items():
                make[name] = lambda spec=spec, data=data, o=overrides: make_polyak_learner(spec, data, device, 0, o)
        learners, errors = build_learners(make)
        rates, cpu_rates = timed_rounds(learners, budget.rounds, budget.updates, budget.warmup)
        result[spec.name] = {"spec": dataclasses.asdict(spec), "rows": summarise_rates(rates, cpu_rates),
                             "failed": errors}
    result["reacher_ddpg"]["note"] = (
        "'polyak' and 'sb3' are matched (SB3 DDPG cannot join the action after the critic's first layer or use "
        "BatchNorm: both join it at the input, no BatchNorm); 'polyak_seed_config' is "
        "configs/unity_reacher_plain_ddpg.gin's agent and networks (input/hidden BatchNorm, action at critic layer 1, "
        "fan-in init, critic grad clip 1.0), "
        "unmatched, for reference")
    result.update(settings={"fill_transitions": budget.fill, "rounds": budget.rounds,
                            "updates_per_round": budget.updates, "warmup_updates": budget.warmup,
                            "order": "interleaved per round, reversed every other round",
                            "replay": "uniform, prefilled with the same random transitions for both libraries",
                            "td3_dims": "HalfCheetah-v5 dims (obs 17, action 6)"},
                  loadavg_start=load_start, loadavg_end=load_average())
    return result


# ---------------------------------------------------------------------------------------------- (b) end-to-end
def polyak_configs(config: Path, bindings: list[str]) -> Any:
    """Configs built from a gin file plus bindings; gin is cleared afterwards."""
    parse_gin(config, bindings)
    try:
        return build_configs_from_gin()
    finally:
        gin.clear_config()


def polyak_end_to_end(env_id: str, budget: Budget, device: str, seed: int,
                      overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """configs/td3.gin on ``env_id`` with evaluation and checkpoints off; construction + run timed."""
    bindings = [f"TrainerConfig.env_id = '{env_id}'", f"TrainerConfig.max_env_steps = {budget.e2e_steps}",
                f"TrainerConfig.start_steps = {budget.e2e_start}", f"ReplayConfig.min_size = {budget.e2e_start}",
                "TrainerConfig.eval_interval = None", "TrainerConfig.checkpoint_interval = None",
                f"TrainerConfig.log_interval = {budget.e2e_steps + 1}", "TrainerConfig.progress_bar = False",
                f"TrainerConfig.seed = {seed}", f"AgentConfig.device = '{device}'"]
    bindings += [f"AgentConfig.{key} = {value!r}" for key, value in (overrides or {}).items()]
    configs = polyak_configs(ROOT / "configs" / "td3.gin", bindings)
    with tempfile.TemporaryDirectory() as tmp, quiet():
        started, cpu_started = time.perf_counter(), time.process_time()
        trainer = Trainer(configs, Path(tmp) / "run")
        summary = trainer.run()
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    return run_record(seconds, cpu_seconds, summary.env_steps, summary.updates)


def run_record(seconds: float, cpu_seconds: float, env_steps: int, updates: int) -> dict[str, Any]:
    """One end-to-end run: wall and CPU seconds, and steps per each."""
    return {"seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2), "env_steps": env_steps,
            "updates": updates, "steps_per_s": round(env_steps / seconds, 1),
            "steps_per_cpu_s": round(env_steps / max(cpu_seconds, 1e-9), 1)}


def sb3_end_to_end(env_id: str, budget: Budget, device: str, seed: int) -> dict[str, Any]:
    """SB3 TD3 with the same settings as configs/td3.gin; construction + learn timed."""
    started, cpu_started = time.perf_counter(), time.process_time()
    env = gym.make(env_id)
    action_dim = int(np.prod(env.action_space.shape))
    model = TD3("MlpPolicy", env, learning_rate=1e-3, buffer_size=200000, learning_starts=budget.e2e_start,
                batch_size=256, tau=0.005, gamma=0.98, train_freq=1, gradient_steps=1,
                action_noise=NormalActionNoise(np.zeros(action_dim), 0.1 * np.ones(action_dim)), policy_delay=2,
                target_policy_noise=0.2, target_noise_clip=0.5, policy_kwargs={"net_arch": [256, 256]},
                device=device, seed=seed, verbose=0)
    model.learn(total_timesteps=budget.e2e_steps)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    model.get_env().close()
    return run_record(seconds, cpu_seconds, model.num_timesteps, model._n_updates)


def part_b(budget: Budget, device: str, extras: bool) -> dict[str, Any]:
    """(b) End-to-end env steps/s, TD3 256-256, one update per env step, on Pendulum-v1 and HalfCheetah-v5."""
    load_start = load_average()
    result: dict[str, Any] = {}
    for env_id in ("Pendulum-v1", "HalfCheetah-v5"):
        runs: dict[str, list[dict[str, Any]]] = {"polyak": [], "sb3": []}
        for repeat in range(budget.e2e_repeats):
            order = ("polyak", "sb3") if repeat % 2 == 0 else ("sb3", "polyak")
            for library in order:
                run = polyak_end_to_end if library == "polyak" else sb3_end_to_end
                runs[library].append(run(env_id, budget, device, seed=repeat))
        if extras and env_id == "Pendulum-v1":
            for name, overrides in polyak_extras().items():
                try:
                    runs[name] = [polyak_end_to_end(env_id, budget, device, 0, overrides)]
                except Exception as error:
                    runs[name] = [{"error": f"{type(error).__name__}: {error}"}]
        medians = {name: median([r["steps_per_s"] for r in rs if "steps_per_s" in r]) for name, rs in runs.items()}
        cpu = {name: median([r["steps_per_cpu_s"] for r in rs if "steps_per_cpu_s" in r]) for name, rs in runs.items()}
        result[env_id] = {
            "runs": runs, "median_steps_per_s": medians, "median_steps_per_cpu_s": cpu,
            "ratio_vs_sb3": {name: ratio(value, medians["sb3"]) for name, value in medians.items() if name != "sb3"},
            "cpu_ratio_vs_sb3": {name: ratio(value, cpu["sb3"]) for name, value in cpu.items() if name != "sb3"},
        }
    result.update(settings={
        "algorithm": "TD3 256-256 (configs/td3.gin for polyak; SB3 TD3 with the same values)", "batch_size": 256,
        "learning_rate": 1e-3, "gamma": 0.98, "tau": 0.005, "policy_delay": 2, "target_noise": [0.2, 0.5],
        "exploration": "Gaussian 0.1", "buffer_size": 200000, "num_envs": 1, "env_steps": budget.e2e_steps,
        "random_start_steps": budget.e2e_start, "updates_per_env_step": 1, "repeats": budget.e2e_repeats,
        "order": "ABBA (polyak, sb3, sb3, polyak, ...), seed = repeat index; extras (Pendulum only): one run "
                 "each, seed 0, their one-off compile time included",
        "timed": "construction (envs, networks, replay) + the whole training run",
        "evaluation": "off for both", "logging": "polyak always writes a run dir (temp): metrics.csv and TensorBoard "
        "rows per episode, one final checkpoint (with the replay); SB3 (verbose 0): nothing",
    }, loadavg_start=load_start, loadavg_end=load_average())
    return result


# ---------------------------------------------------------------------------------------------- (c) threshold
class EvalEveryCallback(BaseCallback):
    """Every ``every`` steps: ``episodes`` deterministic episodes on ``eval_env``, each evaluation on new start
    states from the seeded stream ``stream_seed`` (polyak's protocol; the same starts as a polyak run of the same
    seed); stops training at the first mean >= ``threshold``. Records (steps, mean, seconds since ``started``)."""

    def __init__(self, eval_env: gym.vector.VectorEnv, every: int, episodes: int, threshold: float,
                 stream_seed: int, started: float) -> None:
        super().__init__()
        self.eval_env, self.every, self.episodes = eval_env, every, episodes
        self.threshold, self.stream_seed, self.started = threshold, stream_seed, started
        self.evals: list[tuple[int, float, float]] = []

    def act(self, obs: np.ndarray) -> np.ndarray:
        """The deterministic action in [-1, 1], as the eval env (rescaled like polyak's) expects."""
        return sb3_deterministic_action(self.model, obs)

    def _on_step(self) -> bool:
        if self.num_timesteps % self.every:
            return True
        self.model.policy.set_training_mode(False)
        rewards = run_episodes(self.eval_env, self.act, self.episodes,
                               evaluation_seed(self.stream_seed, len(self.evals)))
        score = float(np.mean(rewards))
        self.evals.append((self.num_timesteps, round(score, 2), round(time.perf_counter() - self.started, 2)))
        return score < self.threshold


def threshold_record(evals: list[tuple[int, float, float]], total_seconds: float, cap: int) -> dict[str, Any]:
    """Time/steps of the first eval >= THRESHOLD, or the time at the cap (``solved`` False)."""
    hit = next((e for e in evals if e[1] >= THRESHOLD), None)
    return {"solved": hit is not None, "steps": hit[0] if hit else cap,
            "seconds": hit[2] if hit else round(total_seconds, 2), "evals": [list(e) for e in evals]}


def sb3_time_to_threshold(seed: int, cap: int, device: str) -> dict[str, Any]:
    """SB3 TD3 with the zoo's Pendulum-v1 settings until an eval mean >= -200 or ``cap`` steps."""
    started = time.perf_counter()
    model = TD3("MlpPolicy", "Pendulum-v1", learning_rate=ZOO_TD3_PENDULUM["learning_rate"],
                buffer_size=ZOO_TD3_PENDULUM["buffer_size"], learning_starts=ZOO_TD3_PENDULUM["learning_starts"],
                gamma=ZOO_TD3_PENDULUM["gamma"], train_freq=(1, "episode"), gradient_steps=-1,
                action_noise=NormalActionNoise(np.zeros(1), ZOO_TD3_PENDULUM["noise_std"] * np.ones(1)),
                policy_kwargs={"net_arch": [400, 300]}, device=device, seed=seed, verbose=0)
    eval_env = make_env("Pendulum-v1", 1)
    callback = EvalEveryCallback(eval_env, 1000, 5, THRESHOLD, stream_seed=run_streams(seed).evaluation_seed,
                                 started=started)
    model.learn(total_timesteps=cap, callback=callback)
    total = time.perf_counter() - started
    eval_env.close()
    return threshold_record(callback.evals, total, cap)


def polyak_time_to_threshold(seed: int, cap: int, device: str, config: Path) -> dict[str, Any]:
    """polyak's ``config`` with the same eval protocol (every 1,000 steps, 5 episodes, stop at -200)."""
    configs = polyak_configs(config, [
        f"TrainerConfig.seed = {seed}", f"TrainerConfig.max_env_steps = {cap}", "TrainerConfig.eval_interval = 1000",
        "TrainerConfig.eval_episodes = 5", f"TrainerConfig.eval_stop_score = {THRESHOLD}",
        "TrainerConfig.checkpoint_interval = None", "TrainerConfig.progress_bar = False",
        f"AgentConfig.device = '{device}'"])
    evals: list[tuple[int, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, quiet():
        started = time.perf_counter()
        trainer = Trainer(configs, Path(tmp) / "run")
        assert trainer.evaluator is not None
        evaluate = trainer.evaluator.evaluate

        def timed_evaluate(policy, index: int) -> float:  # time stamp each eval's end
            score = evaluate(policy, index)
            evals.append((trainer.env_steps, round(score, 2), round(time.perf_counter() - started, 2)))
            return score

        trainer.evaluator.evaluate = timed_evaluate  # type: ignore[method-assign]
        trainer.run()
        total = time.perf_counter() - started
    return threshold_record(evals, total, cap)


def ratio_bound_note(summary: dict[str, dict[str, Any]]) -> str:
    """Say what unsolved seeds (timed at the cap) do to the SB3/polyak time ratio."""
    sb3_all = summary["sb3"]["solved"] == summary["sb3"]["seeds"]
    polyak_all = summary["polyak"]["solved"] == summary["polyak"]["seeds"]
    if sb3_all and polyak_all:
        return "every seed solved: exact ratio of medians"
    if polyak_all:
        return "some SB3 seeds unsolved and counted at the cap: the ratio is a lower bound"
    if sb3_all:
        return "some polyak seeds unsolved and counted at the cap: the ratio is an upper bound"
    return "seeds of both libraries unsolved and counted at the cap: the ratio is only indicative"


def part_c(budget: Budget, device: str, config: Path, seeds: tuple[int, ...]) -> dict[str, Any]:
    """(c) Wall time to Pendulum eval >= -200 per seed, libraries alternating per seed."""
    load_start = load_average()
    runs: dict[str, list[dict[str, Any]]] = {"polyak": [], "sb3": []}
    for index, seed in enumerate(seeds):
        order = ("polyak", "sb3") if index % 2 == 0 else ("sb3", "polyak")
        for library in order:
            record = (polyak_time_to_threshold(seed, budget.cap, device, config) if library == "polyak"
                      else sb3_time_to_threshold(seed, budget.cap, device))
            runs[library].append({"seed": seed, **record})
    summary = {}
    for library, records in runs.items():
        summary[library] = {
            "median_seconds": median([r["seconds"] for r in records]),
            "median_steps": median([r["steps"] for r in records]),
            "solved": sum(r["solved"] for r in records), "seeds": len(records),
        }
    return {
        "runs": runs, "summary": summary,
        "ratio_sb3_time_over_polyak_time": ratio(summary["sb3"]["median_seconds"], summary["polyak"]["median_seconds"]),
        "ratio_note": ratio_bound_note(summary),
        "settings": {
            "threshold": THRESHOLD, "eval": "every 1,000 env steps, 5 deterministic episodes on a separate env, "
            "new start states at every eval from the seeded stream of a polyak run of that seed (both libraries "
            "see the same starts)", "step_cap": budget.cap, "seeds": list(seeds),
            "order": "alternating per seed (polyak first on even positions)",
            "time": "wall seconds from constructing the model/trainer to the end of the first eval >= threshold; "
                    "unsolved seeds count at their time to the step cap (a lower bound on their true time)",
            "sb3": {"algorithm": "TD3", "hyperparameters": ZOO_TD3_PENDULUM, "source": ZOO_SOURCE,
                    "defaults_used": {"batch_size": 256, "tau": 0.005, "policy_delay": 2,
                                      "target_policy_noise": 0.2, "target_noise_clip": 0.5}},
            "polyak": {"config": str(config.relative_to(ROOT)) if config.is_relative_to(ROOT) else str(config),
                       "why": POLYAK_CONFIG_WHY if config.name == "pendulum_fast.gin"
                       else "chosen with --polyak-config"},
        },
        "loadavg_start": load_start, "loadavg_end": load_average(),
    }


# ---------------------------------------------------------------------------------------------- main
def collect_ratios(result: dict[str, Any]) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """The headline ratios (polyak/SB3, higher is better) and the extra-variant ones."""
    ratios: dict[str, float | None] = {}
    extra: dict[str, float | None] = {}
    if "updates_per_s" in result:
        a = result["updates_per_s"]
        ratios["updates_per_s"] = a["td3_256x256"]["rows"]["polyak"]["ratio_vs_sb3"]
        ratios["reacher_updates_per_s"] = a["reacher_ddpg"]["rows"]["polyak"]["ratio_vs_sb3"]
        for spec_name, key in (("td3_256x256", "updates_per_s"), ("reacher_ddpg", "reacher_updates_per_s")):
            for name, row in a[spec_name]["rows"].items():
                if name not in ("polyak", "sb3"):
                    extra[f"{key}_{name.removeprefix('polyak_')}"] = row["ratio_vs_sb3"]
    if "end_to_end" in result:
        for env_id, key in (("Pendulum-v1", "pendulum_steps_per_s"), ("HalfCheetah-v5", "halfcheetah_steps_per_s")):
            row = result["end_to_end"][env_id]["ratio_vs_sb3"]
            ratios[key] = row["polyak"]
            extra.update({f"{key}_{n.removeprefix('polyak_')}": v for n, v in row.items() if n != "polyak"})
    if "time_to_threshold" in result:
        ratios["pendulum_time_to_threshold"] = result["time_to_threshold"]["ratio_sb3_time_over_polyak_time"]
    return ratios, extra


def collect_cpu_ratios(result: dict[str, Any]) -> dict[str, float | None]:
    """The throughput ratios again per CPU second of this process: what a shared, loaded CPU distorts least."""
    ratios: dict[str, float | None] = {}
    if "updates_per_s" in result:
        for spec_name, key in (("td3_256x256", "updates_per_s"), ("reacher_ddpg", "reacher_updates_per_s")):
            ratios[key] = result["updates_per_s"][spec_name]["rows"]["polyak"]["cpu_ratio_vs_sb3"]
    if "end_to_end" in result:
        for env_id, key in (("Pendulum-v1", "pendulum_steps_per_s"), ("HalfCheetah-v5", "halfcheetah_steps_per_s")):
            ratios[key] = result["end_to_end"][env_id]["cpu_ratio_vs_sb3"]["polyak"]
    return ratios


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small budget (under 2 minutes); writes no file "
                        "unless --out is given")
    parser.add_argument("--only", nargs="+", choices=("a", "b", "c"), default=["a", "b", "c"])
    parser.add_argument("--threads", type=int, default=1, help="torch (and OMP/MKL) threads for both libraries")
    parser.add_argument("--device", default="cpu", help="torch device for both libraries")
    parser.add_argument("--seeds", type=int, nargs="+", help="(c) seeds (default 0-4; --quick: 0)")
    parser.add_argument("--polyak-config", default=str(ROOT / "configs" / "pendulum_fast.gin"),
                        help="(c) polyak's Pendulum config")
    parser.add_argument("--extras", action=argparse.BooleanOptionalAction, default=None,
                        help="also time polyak's opt-in compile / bfloat16 variants when present "
                             "(default: on, off with --quick)")
    parser.add_argument("--out", help=f"JSON file (default {DEFAULT_OUT.relative_to(ROOT)}; --quick: none)")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    with contextlib.suppress(RuntimeError):  # only settable before any inter-op work
        torch.set_num_interop_threads(args.threads)
    budget = QUICK if args.quick else FULL
    seeds = tuple(args.seeds) if args.seeds else budget.seeds
    extras = (not args.quick) if args.extras is None else args.extras
    started = time.perf_counter()
    result: dict[str, Any] = {
        "benchmark": "speed", "mode": "quick" if args.quick else "full", "ratios": {}, "extra_ratios": {},
        "cpu_ratios": {},
        "settings": {"threads": args.threads, "device": args.device, "budget": dataclasses.asdict(budget),
                     "parts": args.only, "extras": sorted(polyak_extras()) if extras else [],
                     "ratios": "polyak/SB3, higher is better for polyak (time to threshold: SB3 time / polyak time)",
                     "imports": "torch, SB3, polyak and tensorboard are imported before any timing"},
        "machine": machine_info(), "versions": versions(), "polyak_git": code_commit(), "loadavg_start": load_average(),
    }
    importlib.import_module("torch.utils.tensorboard")  # polyak's logger imports it: keep that one-off cost untimed

    if "a" in args.only:
        result["updates_per_s"] = part_a(budget, args.device, extras)
    if "b" in args.only:
        result["end_to_end"] = part_b(budget, args.device, extras)
    if "c" in args.only:
        result["time_to_threshold"] = part_c(budget, args.device, Path(args.polyak_config).absolute(), seeds)
    result["ratios"], result["extra_ratios"] = collect_ratios(result)
    result["cpu_ratios"] = collect_cpu_ratios(result)
    result["loadavg_end"] = load_average()
    result["total_wall_seconds"] = round(time.perf_counter() - started, 1)
    out = args.out or (None if args.quick else str(DEFAULT_OUT))
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
