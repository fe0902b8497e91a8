"""Environments: Gymnasium vector envs with normalised actions, and the Unity Reacher re-creation."""

from polyak.envs.factory import final_observations, make_env

__all__ = ["final_observations", "make_env"]
