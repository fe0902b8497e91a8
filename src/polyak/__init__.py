"""polyak: DDPG-family agents for continuous control.

``polyak.train(env="Pendulum-v1")`` trains and returns a :class:`~polyak.api.Run`;
``action, _ = polyak.load(run_dir).predict(obs)`` acts in the env's units; ``polyak.evaluate(policy, env)`` gives
the mean and std of its returns; ``polyak.export(run_dir, out)`` saves the actor alone for
sharing. Nothing heavy is imported until used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Policy", "Run", "__version__", "evaluate", "export", "load", "train"]

if TYPE_CHECKING:
    from polyak.api import Run, evaluate, export, load, train
    from polyak.policy import Policy


def __getattr__(name: str) -> Any:
    if name in ("train", "load", "evaluate", "export", "Run"):
        from polyak import api

        return getattr(api, name)
    if name == "Policy":
        from polyak.policy import Policy

        return Policy
    raise AttributeError(f"module 'polyak' has no attribute {name!r}")
