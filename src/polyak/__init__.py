"""polyak: DDPG-family agents for continuous control."""

__version__ = "0.1.0"
