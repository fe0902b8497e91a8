"""TD7's LAP loss and priorities against hand computations."""

import pytest
import torch
from torch.nn import functional

from polyak.lap import lap_huber, lap_priority


def test_lap_huber_by_hand_heads_first():
    td = torch.tensor([[0.5, -2.0, 1.0], [-0.2, 0.0, 3.0]])  # 2 critics, batch 3
    # critic 0: 0.125, 2, 1 (x = 1 is linear: 1, not 0.5); critic 1: 0.02, 0, 3
    # per sample: 0.145, 2, 4 -> mean 6.145 / 3
    torch.testing.assert_close(lap_huber(td), torch.tensor(6.145 / 3))


def test_lap_huber_td7_layout_and_single_head():
    td = torch.tensor([[0.5, -0.2], [-2.0, 0.0], [1.0, 3.0]])  # TD7's (batch, 2)
    torch.testing.assert_close(lap_huber(td, critic_dim=1), torch.tensor(6.145 / 3))
    torch.testing.assert_close(lap_huber(torch.tensor([0.5, -2.0])), torch.tensor((0.125 + 2.0) / 2))


def test_lap_huber_is_not_smooth_l1_and_jumps_at_threshold():
    just_below, at = torch.tensor([1.0 - 1e-6]), torch.tensor([1.0])
    assert lap_huber(just_below).item() == pytest.approx(0.5, abs=1e-5)
    assert lap_huber(at).item() == 1.0
    big = torch.tensor([4.0])
    assert lap_huber(big).item() == 4.0
    assert functional.smooth_l1_loss(big, torch.zeros(1)).item() == 3.5


def test_lap_huber_other_threshold():
    # min_priority 2: 0.5 * 1.5^2 = 1.125 below, 2 * 3 = 6 above
    torch.testing.assert_close(lap_huber(torch.tensor([1.5, -3.0]), min_priority=2.0), torch.tensor(7.125 / 2))


def test_lap_huber_gradient_equals_huber_gradient():
    values = torch.tensor([[-3.0, -0.7, -0.1, 0.0, 0.3, 0.99, 1.01, 5.0], [2.0, -1.5, 0.5, -0.25, 0.8, -0.6, 7.0, 0.1]])
    q = values.clone().requires_grad_(True)
    lap_huber(q).backward()
    reference = values.clone().requires_grad_(True)
    # smooth_l1 per element, summed over heads, mean over batch == sum / batch
    (functional.smooth_l1_loss(reference, torch.zeros_like(values), reduction="sum", beta=1.0) / 8).backward()
    torch.testing.assert_close(q.grad, reference.grad)
    assert torch.all(q.grad.abs() <= 1 / 8 + 1e-7)


def test_lap_priority_by_hand():
    td = torch.tensor([[0.5, -2.0, 1.5, 0.0], [-0.2, 0.3, -16.0, 0.9]])  # heads first
    # max |td| per sample: 0.5, 2, 16, 0.9 -> clamp at 1: 1, 2, 16, 1 -> ^0.4
    expected = torch.tensor([1.0, 2.0**0.4, 16.0**0.4, 1.0])
    torch.testing.assert_close(lap_priority(td), expected)
    torch.testing.assert_close(lap_priority(td.T, critic_dim=1), expected)
    torch.testing.assert_close(lap_priority(td, alpha=1.0, min_priority=0.5), torch.tensor([0.5, 2.0, 16.0, 0.9]))
    # min_priority = 1: max(|delta|^alpha, 1)
    torch.testing.assert_close(lap_priority(td), td.abs().amax(0).pow(0.4).clamp(min=1.0))


def test_lap_priority_has_no_gradient_and_rejects_3d():
    td = torch.randn(2, 5, requires_grad=True)
    assert not lap_priority(td).requires_grad
    with pytest.raises(ValueError):
        lap_priority(torch.randn(2, 3, 4))
