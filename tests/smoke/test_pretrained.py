"""The shipped pretrained Reacher agent: `polyak test` with no arguments runs it on 20 arms."""

import re

from tests.smoke.cli_helpers import polyak


def test_pretrained_agent_solves_one_episode_on_20_arms():
    result = polyak("test")
    assert result.returncode == 0, result.stderr
    match = re.search(r"UnityReacher-v0 \(the pretrained agent\): mean score ([0-9.]+) ± [0-9.]+ over 20 episodes",
                      result.stdout)
    assert match, result.stdout
    assert float(match.group(1)) >= 30.0
