"""benchmarks/sb3_snapshot.py: an SB3 suite run cut short goes on from its last evaluation's snapshot, which holds
every step up to that evaluation (its transition stored, its gradient step taken), and a snapshot of other settings
is never resumed."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
sb3_contrib = pytest.importorskip("sb3_contrib")
suite = pytest.importorskip("suite")
sb3_snapshot = pytest.importorskip("sb3_snapshot")
common = pytest.importorskip("common")

TASK = "InvertedPendulum-v5"
LEARNING_STARTS = 10


class Stop(Exception):
    pass


@pytest.fixture
def short_task(monkeypatch):
    """InvertedPendulum for 60 steps, evaluated every 20, learning from step 11 on."""
    monkeypatch.setitem(suite.TASKS, TASK, dataclasses.replace(suite.TASKS[TASK], budget=60, eval_every=20))
    shipped = suite.sb3_crossq_kwargs
    monkeypatch.setattr(suite, "sb3_crossq_kwargs",
                        lambda task, width=None: {**shipped(task, width), "learning_starts": LEARNING_STARTS})


def cut_short(monkeypatch, folder, at_evaluation: int) -> dict:
    """Run seed 0 with snapshots in ``folder`` until its ``at_evaluation``-th evaluation kills it; its progress."""
    import polyak.evaluation

    real, count = polyak.evaluation.run_episodes, [0]

    def evaluate(*args):
        count[0] += 1
        if count[0] == at_evaluation:
            raise Stop  # the process is killed while it evaluates
        return real(*args)

    with monkeypatch.context() as patch:
        patch.setattr(polyak.evaluation, "run_episodes", evaluate)
        with pytest.raises(Stop):
            suite.run_sb3(TASK, "sb3_crossq", 0, snapshots=folder)
    return json.loads((folder / "progress.json").read_text())


def test_a_run_cut_short_goes_on_from_its_last_evaluation(short_task, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "snapshots"
    progress = cut_short(monkeypatch, folder, 3)
    assert progress["eval_steps"] == [20, 40] and progress["snapshot"] == "at_40"
    assert sorted(path.name for path in folder.glob("at_*")) == ["at_40"]  # the one at 20 is replaced
    saved = sb3_contrib.CrossQ.load(folder / "at_40" / "model.zip", device="cpu")
    sb3_snapshot.load_buffer(saved.replay_buffer, folder / "at_40" / "replay_buffer.npz")
    # Steps 11 to 40 each trained once (one gradient step per env step), step 40 included; 40 transitions stored.
    assert saved.num_timesteps == 40 and saved._n_updates == 40 - LEARNING_STARTS
    assert saved.replay_buffer.pos == 40 and not saved.replay_buffer.full
    with np.load(folder / "at_40" / "replay_buffer.npz") as rows:  # the filled rows only, not the capacity
        assert rows["observations"].shape == (40, 1, 4) and rows["rewards"].shape == (40, 1)
    stored = saved.replay_buffer
    # InvertedPendulum-v5 pays 1 a step and 0 for the step that drops the pole; the rows past 40 stay empty.
    assert np.array_equal(stored.rewards[:40], 1.0 - stored.dones[:40]) and not stored.rewards[40:].any()
    go_on = ~stored.dones[:39, 0].astype(bool)  # within an episode, each row starts where the one before ended
    assert go_on.any() and np.array_equal(stored.observations[1:40][go_on], stored.next_observations[:39][go_on])

    result = suite.run_sb3(TASK, "sb3_crossq", 0, snapshots=folder)
    assert result["eval_steps"] == [20, 40, 60] and result["eval_returns"][:2] == progress["eval_returns"]
    assert result["resumed_at_steps"] == [40]
    # The earlier sitting's code is kept beside the result's own code_commit (the one of the last sitting).
    assert result["earlier_sittings_code_commits"] == progress["sitting_commits"] == [common.code_commit()]
    assert result["cpu_seconds_in_earlier_sittings"] == pytest.approx(progress["cpu_seconds"])
    assert result["eval_wall_seconds"][2] > progress["wall_seconds"]  # the clock goes on from the earlier sitting's
    assert not folder.exists()  # done: nothing left to resume
    assert f"{TASK} sb3_crossq seed 0: resumed at 40 env steps" in capsys.readouterr().out


def test_an_uncut_run_says_nothing_of_resuming(short_task, tmp_path):
    result = suite.run_sb3(TASK, "sb3_crossq", 0, snapshots=tmp_path / "snapshots")
    assert result["eval_steps"] == [20, 40, 60] and "resumed_at_steps" not in result
    assert not (tmp_path / "snapshots").exists()


def test_a_snapshot_of_other_settings_is_set_aside(short_task, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "snapshots"
    assert cut_short(monkeypatch, folder, 2)["eval_steps"] == [20]
    result = suite.run_sb3(TASK, "sb3_crossq", 1, snapshots=folder)  # another seed: its own run from the start
    assert "resumed_at_steps" not in result and result["eval_steps"] == [20, 40, 60]
    assert "a snapshot of other settings; starting the run afresh" in capsys.readouterr().out


def test_after_snapshot_sees_each_snapshot_and_can_end_the_run_early(short_task, tmp_path):
    seen = []

    def keep_going_until_40(snapshot, model):
        seen.append((snapshot.name, (snapshot / sb3_snapshot.MODEL).is_file(), model.num_timesteps))
        return model.num_timesteps < 40

    result = suite.run_sb3(TASK, "sb3_crossq", 0, snapshots=tmp_path / "snapshots", after_snapshot=keep_going_until_40)
    assert seen == [("at_20", True, 20), ("at_40", True, 40)]
    assert result["eval_steps"] == [20, 40]  # ended before the budget's evaluation at 60
