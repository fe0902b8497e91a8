"""Environments: Gymnasium vector envs with normalised actions, and the Unity Reacher re-creation."""

from polyak.envs.factory import final_observations, make_env
from polyak.envs.registration import register_envs
from polyak.envs.scripted import ScriptedReacherController

register_envs()

__all__ = ["ScriptedReacherController", "final_observations", "make_env", "register_envs"]
