"""Hand-computed checks of the update's tensor functions."""

import torch

from polyak.losses import actor_loss, clipped_min, critic_loss, polyak_update, smoothing_noise, td_target


def test_td_target_bootstraps_on_truncation_but_not_on_termination():
    reward = torch.tensor([1.0, 1.0, -0.5])
    terminated = torch.tensor([0.0, 1.0, 0.0])  # row 0: truncated by the time limit, row 1: terminal
    next_q = torch.tensor([10.0, 10.0, 4.0])
    target = td_target(reward, 0.9, terminated, next_q)
    # 1 + 0.9 * 10 = 10; terminal: just the reward; -0.5 + 0.9 * 4 = 3.1
    torch.testing.assert_close(target, torch.tensor([10.0, 1.0, 3.1]))


def test_td_target_uses_per_sample_discount():
    target = td_target(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 0.25]), torch.zeros(2), torch.tensor([4.0, 8.0]))
    torch.testing.assert_close(target, torch.tensor([3.0, 4.0]))


def test_polyak_update_lerps_floats_and_copies_integers():
    target = [torch.tensor([0.0, 10.0]), torch.tensor(3, dtype=torch.long)]
    online = [torch.tensor([1.0, 20.0]), torch.tensor(7, dtype=torch.long)]
    polyak_update(target, online, tau=0.1)
    torch.testing.assert_close(target[0], torch.tensor([0.1, 11.0]))
    assert int(target[1]) == 7
    torch.testing.assert_close(online[0], torch.tensor([1.0, 20.0]))


def test_polyak_update_with_tau_one_copies():
    target = [torch.zeros(3)]
    polyak_update(target, [torch.arange(3.0)], tau=1.0)
    torch.testing.assert_close(target[0], torch.arange(3.0))


def test_critic_loss_sums_critics_and_weights_samples():
    q = torch.tensor([[1.0, 2.0], [0.0, 4.0]])  # 2 critics, batch 2
    y = torch.tensor([2.0, 2.0])
    # critic 0: (1 + 0) / 2 = 0.5; critic 1: (4 + 4) / 2 = 4
    torch.testing.assert_close(critic_loss(q, y), torch.tensor(4.5))
    w = torch.tensor([1.0, 0.5])
    # critic 0: (1 + 0) / 2 = 0.5; critic 1: (4 + 2) / 2 = 3
    torch.testing.assert_close(critic_loss(q, y, w), torch.tensor(3.5))


def test_clipped_min_and_actor_loss():
    q = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    torch.testing.assert_close(clipped_min(q), torch.tensor([1.0, 2.0]))
    torch.testing.assert_close(actor_loss(torch.tensor([1.0, 3.0])), torch.tensor(-2.0))


def test_smoothing_noise_is_clipped():
    noise = smoothing_noise((10_000, 2), 1.0, 0.3, torch.Generator().manual_seed(0), torch.device("cpu"))
    assert noise.abs().max() <= 0.3 + 1e-7
    assert (noise.abs() == 0.3).float().mean() > 0.5  # most N(0,1) draws exceed the clip
