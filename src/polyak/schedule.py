"""When the every-N-steps work of a training loop is due (learning, evaluation, logging, checkpoints)."""

from __future__ import annotations


class Every:
    """Due once each time a counter passes a multiple of ``interval``; never with ``interval=None``.

    The counter may advance by any amount between checks (one env.step of N envs, an Ape-X
    worker's chunk): passing several multiples at once is due once. ``start`` is the counter's
    value when the schedule begins (a resumed run's env steps).
    """

    def __init__(self, interval: int | None, start: int = 0) -> None:
        if interval is not None and interval < 1:
            raise ValueError(f"interval must be >= 1 or None, got {interval}")
        self.interval = interval
        self._last = start

    def due(self, counter: int) -> bool:
        if self.interval is None:
            return False
        passed = counter // self.interval > self._last // self.interval
        self._last = counter
        return passed
