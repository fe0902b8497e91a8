"""The ``README.md`` model card of an exported agent: task, algorithm, score and its evaluation protocol, usage."""

from __future__ import annotations

from typing import Any

from polyak.config import Algorithm, Configs, Sampler

ACTOR_WORDS = {"checkpoint_actor": "checkpoint policy (TD7) ", "actor_average": "averaged "}  # by checkpoint entry


def algorithm(configs: Configs) -> str:
    """DDPG, TD3, TD7 or CrossQ (``AgentConfig.algorithm``; TD3 is DDPG with its three switches on), with the
    switches that differ from it, as the configs set them."""
    agent = configs.agent
    td3 = agent.n_critics >= 2 and agent.policy_delay >= 2 and agent.target_policy_noise is not None
    name = {Algorithm.DDPG: "TD3" if td3 else "DDPG", Algorithm.TD7: "TD7", Algorithm.CROSSQ: "CrossQ",
            Algorithm.SAC: "SAC", Algorithm.CROSSQ_SAC: "CrossQ (SAC mode)"}[agent.algorithm]
    extras = []
    if agent.algorithm is Algorithm.TD7:
        parts = (("SALE", configs.td7.sale), ("the checkpoint policy", configs.td7.checkpoint_policy))
        extras += [f"without {part}" for part, on in parts if not on]
    if configs.replay.sampler is Sampler.PRIORITIZED:
        extras.append("prioritized replay")
    if configs.replay.n_step > 1:
        extras.append(f"{configs.replay.n_step}-step returns")
    if configs.trainer.normalize_observations:
        extras.append("observation normalization")
    return name + (f" ({', '.join(extras)})" if extras else "")


def _fmt(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else "n/a" if value is None else str(value)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def model_card(configs: Configs, info: dict[str, Any], name: str, onnx: bool) -> str:
    """Markdown with a Hugging Face style YAML header."""
    summary = info.get("training_summary") or {}
    record = info.get("checkpoint_record") or {}  # absent in exports of polyak before 2026-12-01
    unfinished = [] if summary else ["Training had not finished when this agent was exported (no summary.json: "
                                     "interrupted, or still running); the scores above are those of the exported "
                                     "checkpoint.", ""]
    evaluation = info["evaluation"]
    env_id, algo = info["env_id"], algorithm(configs)
    protocol = (f"mean return of {evaluation['eval_episodes']} episodes without exploration noise, new start "
                f"states each evaluation, every {evaluation['eval_interval']} env steps and when training ends"
                if evaluation["eval_interval"] is not None else "no evaluations were run during training")
    action = info["spaces"]["action_space"]
    low = ", ".join(_fmt(float(v)) for v in action["low"])
    high = ", ".join(_fmt(float(v)) for v in action["high"])
    kwargs = f" with keyword arguments `{info['env_kwargs']}`" if info["env_kwargs"] else ""
    lines = [
        "---",
        "library_name: polyak",
        "tags:",
        "- reinforcement-learning",
        "- deep-reinforcement-learning",
        f"- {algo.split(' ')[0].lower()}",
        f"- {env_id}",
        "---",
        "",
        f"# {algo} agent for `{env_id}`",
        "",
        f"Trained with polyak {info['polyak_version']}; the "
        f"{ACTOR_WORDS.get(info.get('actor'), '')}actor of checkpoint "
        f"`{info['checkpoint']}`.",
        "",
        "## Task",
        "",
        f"- environment: `{env_id}`{kwargs}",
        f"- observations: {_count(info['obs_dim'], 'value')}; actions: {_count(info['action_dim'], 'value')} in "
        f"[{low}] .. [{high}]",
        f"- observation normalization: {'yes (statistics in info.json)' if info.get('obs_normalizer') else 'no'}",
        "",
        "## Results",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| best evaluation score | {_fmt(summary.get('best_eval'))} |",
        f"| final evaluation score | {_fmt(summary.get('final_eval'))} |",
        f"| best {configs.trainer.solve_window}-episode training mean | {_fmt(summary.get('best_window_mean'))} |",
        f"| env steps | {_fmt(summary.get('env_steps'))} |",
        f"| seed | {_fmt(summary.get('seed', configs.trainer.seed))} |",
        f"| exported checkpoint: env steps | {_fmt(record.get('env_steps'))} |",
        f"| exported checkpoint: evaluation score | {_fmt(record.get('eval_score'))} |",
        "",
        *unfinished,
        f"Evaluation protocol: {protocol}.",
        "",
        "## Usage",
        "",
        "```python",
        "import polyak",
        "",
        f'policy = polyak.load("{name}")            # this directory',
        "action, _ = policy.predict(obs)           # one observation or a batch; actions in the env's units",
        "```",
        "",
        f"Test it: `polyak test {name} --episodes 10`. Files: `actor.safetensors` (weights), `config.json` "
        "(configs), `info.json` (spaces, normalization statistics, training summary), `config.gin` (for reading).",
    ]
    if onnx:
        lines += [
            "",
            "Without polyak, `policy.onnx` takes raw observations (`obs`, shape `(batch, obs_dim)`, float32) and "
            "returns actions in the env's units:",
            "",
            "```python",
            "import onnxruntime",
            "",
            f'session = onnxruntime.InferenceSession("{name}/policy.onnx")',
            'action = session.run(["action"], {"obs": obs.reshape(1, -1).astype("float32")})[0][0]',
            "```",
        ]
    return "\n".join(lines) + "\n"
