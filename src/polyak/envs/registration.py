"""Gymnasium registration of the Unity-Reacher re-creation (spec §0, §8)."""

from __future__ import annotations

import gymnasium

__all__ = ["UNITY_REACHER_ID", "register_envs"]

UNITY_REACHER_ID = "polyak/UnityReacher-v0"


def register_envs() -> None:
    """Register ``polyak/UnityReacher-v0`` (single arm) with a ``vector_entry_point`` (N arms, one model).

    ``gymnasium.make_vec(UNITY_REACHER_ID, num_envs=20)`` then builds one :class:`UnityReacherVectorEnv`.
    The 1000-decision limit is enforced by the environments themselves, so no ``TimeLimit`` is added.
    Safe to call more than once.
    """
    if UNITY_REACHER_ID in gymnasium.registry:
        return
    gymnasium.register(
        id=UNITY_REACHER_ID,
        entry_point="polyak.envs.unity_reacher:UnityReacherEnv",
        vector_entry_point="polyak.envs.unity_reacher:UnityReacherVectorEnv",
        max_episode_steps=None,
        disable_env_checker=False,
    )
