"""Wall-clock cost of one learner update: TD3 (the suite's td3.gin), TD7 and CrossQ (configs/suite/td7.gin,
crossq.gin) at several critic widths, on random HalfCheetah-sized batches (17 observations, 6 actions).

    OMP_NUM_THREADS=1 python benchmarks/update_cost.py [--threads 1] [--updates 300] [--widths 256 512 1024 2048]
                                                       [--precision float32|bfloat16]

Prints one JSON line per setting (ms per update, and the ratio to TD3) so the suite's CPU budget can be planned.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np
import torch

from polyak.agent import Agent
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig
from polyak.types import Batch

OBS, ACT = 17, 6


def td3() -> tuple[AgentConfig, NetworkConfig, NetworkConfig, ReplayConfig, int]:
    net = NetworkConfig(hidden_sizes=(400, 300), lr=1e-3)
    critic = NetworkConfig(hidden_sizes=(400, 300), lr=1e-3, action_layer=0)
    agent = AgentConfig(device="cpu", batch_size=100, n_critics=2, policy_delay=2, target_policy_noise=0.2)
    return agent, net, critic, ReplayConfig(), 100


def td7() -> tuple[AgentConfig, NetworkConfig, NetworkConfig, ReplayConfig, int]:
    actor = NetworkConfig(hidden_sizes=(256, 256), lr=3e-4, avg_l1_norm=True)
    critic = NetworkConfig(hidden_sizes=(256, 256), lr=3e-4, avg_l1_norm=True, activation="elu", action_layer=0)
    agent = AgentConfig(device="cpu", batch_size=256, n_critics=2, policy_delay=2, target_policy_noise=0.2,
                        algorithm="td7", actor_objective="mean")
    return agent, actor, critic, ReplayConfig(sampler="lap"), 256


def crossq(width: int) -> tuple[AgentConfig, NetworkConfig, NetworkConfig, ReplayConfig, int]:
    actor = NetworkConfig(hidden_sizes=(256, 256), lr=1e-3, batch_renorm=True, adam_beta1=0.5)
    critic = NetworkConfig(hidden_sizes=(width, width), lr=1e-3, batch_renorm=True, adam_beta1=0.5, action_layer=0)
    agent = AgentConfig(device="cpu", batch_size=256, n_critics=2, policy_delay=3, target_policy_noise=0.2,
                        algorithm="crossq", actor_objective="min")
    return agent, actor, critic, ReplayConfig(), 256


def cost(setting: tuple[AgentConfig, NetworkConfig, NetworkConfig, ReplayConfig, int], updates: int,
         precision: str = "float32") -> float:
    agent_config, actor, critic, replay, batch_size = setting
    agent_config = dataclasses.replace(agent_config, precision=precision)
    agent = Agent(OBS, ACT, 1, agent_config, actor, critic, NoiseConfig(), np.random.SeedSequence(0), replay)
    generator = torch.Generator().manual_seed(0)
    batches = [Batch(obs=torch.randn(batch_size, OBS, generator=generator),
                     action=torch.rand(batch_size, ACT, generator=generator) * 2 - 1,
                     reward=torch.randn(batch_size, generator=generator),
                     next_obs=torch.randn(batch_size, OBS, generator=generator),
                     terminated=torch.zeros(batch_size), discount=0.99) for _ in range(8)]
    for batch in batches * 3:  # warm up
        agent.learner.update(batch)
    started = time.perf_counter()
    for index in range(updates):
        result = agent.learner.update(batches[index % len(batches)])
    float(result.metrics["critic_loss"])
    return (time.perf_counter() - started) / updates * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--widths", type=int, nargs="+", default=[256, 512, 1024, 2048])
    parser.add_argument("--precision", choices=["float32", "bfloat16"], default="float32",
                        help="AgentConfig.precision of every setting (x_td3 compares within one precision)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tag = {"precision": args.precision, "cpu_isa": torch.backends.cpu.get_cpu_capability()}
    base = cost(td3(), args.updates, args.precision)
    print(json.dumps({"setting": "td3 400-300, batch 100", "ms_per_update": round(base, 2), "x_td3": 1.0, **tag}))
    ms = cost(td7(), args.updates, args.precision)
    print(json.dumps({"setting": "td7 256-256 + SALE + LAP loss, batch 256", "ms_per_update": round(ms, 2),
                      "x_td3": round(ms / base, 2), **tag}))
    for width in args.widths:
        ms = cost(crossq(width), max(args.updates // (width // 256), 30), args.precision)
        print(json.dumps({"setting": f"crossq critic {width}-{width}, actor 256-256, batch 256",
                          "ms_per_update": round(ms, 2), "x_td3": round(ms / base, 2), **tag}))


if __name__ == "__main__":
    main()
