"""TD7's value clipping and checkpoint-policy schedule: documented edge cases and a step-by-step reference."""

import random

import pytest
import torch

from polyak.losses import td_target
from polyak.td7 import CheckpointAssessor, CheckpointDecision, ValueClipper

# ---------------------------------------------------------------- value clipping


def test_first_iteration_learns_q_equals_r():
    clipper = ValueClipper()
    reward = torch.tensor([1.0, -2.0, 0.5])
    next_q = torch.tensor([100.0, -50.0, 3.0])
    y = clipper.target(reward, 0.99, torch.zeros(3), next_q)
    torch.testing.assert_close(y, reward)  # the clip range is [0, 0]
    torch.testing.assert_close(clipper.clip(next_q), torch.zeros(3))


def test_clip_range_is_lifetime_extremes_copied_at_update():
    clipper = ValueClipper()
    terminated = torch.zeros(2)
    clipper.target(torch.tensor([1.0, -2.0]), 0.5, terminated, torch.tensor([10.0, 10.0]))  # y = [1, -2]
    clipper.target(torch.tensor([3.0, 0.0]), 0.5, terminated, torch.tensor([10.0, 10.0]))  # y = [3, 0]
    assert (clipper.min_target.item(), clipper.max_target.item()) == (0.0, 0.0)  # not before the update
    clipper.update()
    assert (clipper.min_target.item(), clipper.max_target.item()) == (-2.0, 3.0)
    # iteration 2: bootstraps clipped to [-2, 3]; the targets now include the clipped bootstrap
    y = clipper.target(torch.tensor([0.0, 1.0]), 0.5, torch.tensor([0.0, 1.0]), torch.tensor([10.0, -10.0]))
    torch.testing.assert_close(y, torch.tensor([1.5, 1.0]))
    torch.testing.assert_close(y, td_target(torch.tensor([0.0, 1.0]), 0.5, torch.tensor([0.0, 1.0]),
                                            clipper.clip(torch.tensor([10.0, -10.0]))))
    clipper.observe(torch.tensor([-1.0, 2.5]))  # inside the range: no change
    clipper.update()
    assert (clipper.min_target.item(), clipper.max_target.item()) == (-2.0, 3.0)  # never reset, never shrinks
    clipper.observe(torch.tensor([7.0]))
    clipper.update()
    assert (clipper.min_target.item(), clipper.max_target.item()) == (-2.0, 7.0)


def test_value_clipper_initial_state_and_round_trip():
    clipper = ValueClipper()
    assert clipper.seen_min.item() == 1e8 and clipper.seen_max.item() == -1e8
    clipper.observe(torch.tensor([4.0, -1.0]))
    clipper.update()
    clipper.observe(torch.tensor([9.0]))
    restored = ValueClipper()
    restored.load_state_dict(clipper.state_dict())
    for name in ("min_target", "max_target", "seen_min", "seen_max"):
        torch.testing.assert_close(getattr(restored, name), getattr(clipper, name))
    restored.update()
    assert restored.max_target.item() == 9.0


def test_value_clipper_no_gradient_through_target():
    clipper = ValueClipper()
    next_q = torch.tensor([1.0], requires_grad=True)
    assert not clipper.target(torch.tensor([0.0]), 0.9, torch.zeros(1), next_q).requires_grad


# ---------------------------------------------------------------- checkpoint schedule: reference transcription


class ReferenceSchedule:
    """TD7's maybe_train_and_checkpoint / train_and_reset written out literally, one training step at a time."""

    def __init__(self):
        self.training_steps, self.max_eps_before_update, self.best_min_return = 0, 1, -1e8
        self.eps_since_update, self.timesteps_since_update, self.min_return = 0, 0, 1e8
        self.events = []

    def maybe_train_and_checkpoint(self, ep_timesteps, ep_return):
        self.eps_since_update += 1
        self.timesteps_since_update += ep_timesteps
        self.min_return = min(self.min_return, ep_return)
        if self.min_return < self.best_min_return:
            self.train_and_reset()
        elif self.eps_since_update == self.max_eps_before_update:
            self.best_min_return = self.min_return
            self.events.append(("checkpoint", self.training_steps))
            self.train_and_reset()

    def train_and_reset(self):
        for _ in range(self.timesteps_since_update):
            if self.training_steps == 750_000:
                self.best_min_return *= 0.9
                self.max_eps_before_update = 20
            self.training_steps += 1
        self.eps_since_update = self.timesteps_since_update = 0
        self.min_return = 1e8


def _state(obj):
    return (obj.training_steps, obj.max_eps_before_update, obj.best_min_return, obj.eps_since_update,
            obj.timesteps_since_update, obj.min_return)


def test_first_episode_updates_checkpoint_and_trains_its_length():
    assessor = CheckpointAssessor()
    assert assessor.end_episode(1000, -5.0) == CheckpointDecision(update_checkpoint=True, train_steps=1000,
                                                                  early_stop=False)
    assert assessor.best_min_return == -5.0 and assessor.training_steps == 1000
    assert assessor.min_return == 1e8 and assessor.eps_since_update == 0


def test_early_stop_is_strictly_less():
    assessor = CheckpointAssessor()
    assessor.end_episode(100, 50.0)
    equal = assessor.end_episode(80, 50.0)  # not worse: checkpoint updated
    assert equal.update_checkpoint and not equal.early_stop and equal.train_steps == 80
    worse = assessor.end_episode(120, 49.9)
    assert worse == CheckpointDecision(update_checkpoint=False, train_steps=120, early_stop=True)
    assert assessor.best_min_return == 50.0
    better = assessor.end_episode(90, 60.0)
    assert better.update_checkpoint and assessor.best_min_return == 60.0
    assert assessor.training_steps == 100 + 80 + 120 + 90


def test_reset_at_750k_training_steps_scales_score_and_lengthens_assessment():
    assessor = CheckpointAssessor()
    assessor.training_steps = 749_000
    assessor.end_episode(1000, -100.0)  # steps 749000..749999: no reset yet (the check sees 749999 at most)
    assert assessor.best_min_return == -100.0 and assessor.max_eps_before_update == 1
    decision = assessor.end_episode(1000, -100.0)  # the first of these steps sees training_steps == 750000
    assert decision.update_checkpoint  # decided before training, with the old rule
    assert assessor.best_min_return == pytest.approx(-90.0)  # a negative score: the bar gets stricter
    assert assessor.max_eps_before_update == 20
    # now a 20-episode assessment: -95 < -90 stops it early
    assert assessor.end_episode(1000, -95.0) == CheckpointDecision(False, 1000, True)


def test_reset_fires_inside_a_batch_and_only_once():
    assessor = CheckpointAssessor(training_steps=749_990)
    assessor.end_episode(1000, 10.0)  # crosses 750000 inside: best set to 10, then scaled while training
    assert assessor.best_min_return == pytest.approx(9.0) and assessor.max_eps_before_update == 20
    for _ in range(19):
        assert assessor.end_episode(1000, 9.5) == CheckpointDecision(False, 0, False)
    last = assessor.end_episode(1000, 9.5)
    assert last == CheckpointDecision(True, 20_000, False)  # the steps of all 20 episodes
    assert assessor.best_min_return == 9.5  # not scaled again


def test_twenty_episode_assessment_stops_early_on_any_worse_episode():
    assessor = CheckpointAssessor(max_eps_when_checkpointing=20, training_steps=800_000)
    assessor.max_eps_before_update, assessor.best_min_return = 20, 0.0
    for length in (10, 20, 30):
        assert assessor.end_episode(length, 5.0).train_steps == 0
    decision = assessor.end_episode(40, -1.0)
    assert decision == CheckpointDecision(False, 100, True)
    assert assessor.eps_since_update == 0 and assessor.min_return == 1e8


def test_matches_reference_on_random_episode_sequences():
    rng = random.Random(0)
    for start in (0, 745_000, 749_999, 750_000):
        reference, assessor = ReferenceSchedule(), CheckpointAssessor(training_steps=start)
        reference.training_steps = start
        for _ in range(400):
            length, ret = rng.randint(1, 1000), rng.choice([rng.uniform(-50, 50), 0.0, 10.0])
            before = assessor.training_steps
            decision = assessor.end_episode(length, ret)
            events = len(reference.events)
            reference.maybe_train_and_checkpoint(length, ret)
            assert _state(assessor) == pytest.approx(_state(reference))
            assert decision.update_checkpoint == (len(reference.events) > events)
            assert decision.train_steps == reference.training_steps - before


def test_assessor_state_dict_round_trip_is_exact():
    assessor = CheckpointAssessor(training_steps=749_500)
    for length, ret in [(300, 1.0), (300, 2.0), (300, 0.5), (200, 3.0)]:
        assessor.end_episode(length, ret)
    restored = CheckpointAssessor()
    restored.load_state_dict(assessor.state_dict())
    assert restored.state_dict() == assessor.state_dict()
    for length, ret in [(100, 3.0), (100, 1.0), (50, 4.0)]:
        assert restored.end_episode(length, ret) == assessor.end_episode(length, ret)
    with pytest.raises(KeyError):
        CheckpointAssessor().load_state_dict({"training_steps": 1})
