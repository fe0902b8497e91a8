"""AvgL1Norm, BatchRenorm1d and the joint forward pass against hand/numpy computations."""

import numpy as np
import pytest
import torch
from torch import nn

from polyak.layers import AvgL1Norm, BatchRenorm1d, avg_l1_norm, batch_moments, joint_forward, module_mode

# ---------------------------------------------------------------- AvgL1Norm


def test_avg_l1_norm_by_hand():
    x = torch.tensor([[1.0, -3.0], [0.5, 0.5]])
    # row 0: mean|x| = 2 -> [0.5, -1.5]; row 1: mean|x| = 0.5 -> [1, 1]
    torch.testing.assert_close(avg_l1_norm(x), torch.tensor([[0.5, -1.5], [1.0, 1.0]]))
    torch.testing.assert_close(AvgL1Norm()(x), avg_l1_norm(x))


def test_avg_l1_norm_clamps_tiny_scale():
    x = torch.tensor([[1e-9, -1e-9, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    # mean|x| = 5e-10 < 1e-8: divided by 1e-8 instead -> [0.1, -0.1, 0, 0]; all-zero row stays 0 (no NaN)
    torch.testing.assert_close(avg_l1_norm(x), torch.tensor([[0.1, -0.1, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]))
    # a smaller eps does not clamp: 1e-9 / 5e-10 = 2
    torch.testing.assert_close(AvgL1Norm(eps=1e-10)(x[:1]), torch.tensor([[2.0, -2.0, 0.0, 0.0]]))


def test_avg_l1_norm_works_on_last_dim_of_any_shape():
    x = torch.randn(3, 4, 5)
    out = avg_l1_norm(x)
    torch.testing.assert_close(out.abs().mean(-1), torch.ones(3, 4))


# ---------------------------------------------------------------- BatchRenorm1d: numpy reference


class NumpyBRN:
    """Straight transcription of the formula in the notes (§2.3), float64, biased variance by default."""

    def __init__(self, features, momentum=0.01, eps=1e-3, r_max=3.0, d_max=5.0, warmup=100_000, unbiased=False):
        self.mean, self.var, self.steps = np.zeros(features), np.ones(features), 0
        self.momentum, self.eps, self.r_max, self.d_max, self.warmup = momentum, eps, r_max, d_max, warmup
        self.ddof = 1 if unbiased else 0

    def train_step(self, x, weight, bias):
        mu_b, var_b = x.mean(0), x.var(0, ddof=self.ddof)
        std_b, std_r = np.sqrt(var_b + self.eps), np.sqrt(self.var + self.eps)
        r = np.clip(std_b / std_r, 1 / self.r_max, self.r_max)
        d = np.clip((mu_b - self.mean) / std_r, -self.d_max, self.d_max)
        if self.steps >= self.warmup:
            mean, var = mu_b - d * np.sqrt(var_b) / r, var_b / r**2
        else:
            mean, var = mu_b, var_b
        self.mean = (1 - self.momentum) * self.mean + self.momentum * mu_b
        self.var = (1 - self.momentum) * self.var + self.momentum * var_b
        self.steps += 1
        return (x - mean) / np.sqrt(var + self.eps) * weight + bias, r, d

    def eval_step(self, x, weight, bias):
        return (x - self.mean) / np.sqrt(self.var + self.eps) * weight + bias


def _brn(features=3, **kwargs):
    layer = BatchRenorm1d(features, **kwargs).double()
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([1.5, -0.5, 2.0][:features], dtype=torch.float64))
        layer.bias.copy_(torch.tensor([0.1, 0.2, -0.3][:features], dtype=torch.float64))
    return layer


def _np(t):
    return t.detach().numpy()


def test_batch_moments_by_hand():
    x = torch.tensor([[1.0, -2.0], [3.0, 0.0], [5.0, 2.0]])  # columns: mean 3 and 0, squared deviations 8 and 8
    mean, var = batch_moments(x)
    torch.testing.assert_close(mean, torch.tensor([3.0, 0.0]))
    torch.testing.assert_close(var, torch.tensor([8.0 / 3, 8.0 / 3]))
    torch.testing.assert_close(batch_moments(x, unbiased=True)[1], torch.tensor([4.0, 4.0]))


@pytest.mark.parametrize("shape", [(512, 37), (2, 256, 64), (3, 5, 1)])
@pytest.mark.parametrize("unbiased", [False, True])
def test_batch_moments_match_torch_values_and_gradients(shape, unbiased):
    generator = torch.Generator().manual_seed(0)
    x = (torch.randn(shape, generator=generator, dtype=torch.float64) * 3 + 10).requires_grad_()
    weights = torch.randn(shape[:-2] + shape[-1:], generator=generator, dtype=torch.float64)
    mean, var = batch_moments(x, unbiased)
    torch.testing.assert_close(mean, x.mean(dim=-2))
    torch.testing.assert_close(var, x.var(dim=-2, unbiased=unbiased))
    (grad,) = torch.autograd.grad(((mean + var) * weights).sum(), x)
    (expected,) = torch.autograd.grad(((x.mean(dim=-2) + x.var(dim=-2, unbiased=unbiased)) * weights).sum(), x)
    torch.testing.assert_close(grad, expected)


def test_brn_defaults_follow_crossq():
    layer = BatchRenorm1d(4)
    assert (layer.momentum, layer.eps, layer.r_max, layer.d_max, layer.warmup_steps) == (0.01, 1e-3, 3.0, 5.0, 100_000)
    assert layer.unbiased is False
    torch.testing.assert_close(layer.running_mean, torch.zeros(4))
    torch.testing.assert_close(layer.running_var, torch.ones(4))
    assert layer.steps.dtype == torch.long and int(layer.steps) == 0


def test_brn_warmup_is_plain_batch_norm_by_hand():
    layer = BatchRenorm1d(1, affine=False, warmup_steps=10).double()
    x = torch.tensor([[1.0], [3.0]], dtype=torch.float64)
    # mu_B = 2, biased var_B = 1: y = (x - 2) / sqrt(1 + 1e-3)
    expected = torch.tensor([[-1.0], [1.0]], dtype=torch.float64) / np.sqrt(1.001)
    torch.testing.assert_close(layer(x), expected)
    # running: 0.99 * 0 + 0.01 * 2 = 0.02; 0.99 * 1 + 0.01 * 1 = 1
    torch.testing.assert_close(layer.running_mean, torch.tensor([0.02], dtype=torch.float64))
    torch.testing.assert_close(layer.running_var, torch.tensor([1.0], dtype=torch.float64))
    assert int(layer.steps) == 1


def test_brn_after_warmup_by_hand_with_clipping():
    layer = BatchRenorm1d(1, affine=False, warmup_steps=0).double()
    x = torch.tensor([[10.0], [30.0]], dtype=torch.float64)
    # mu_B = 20, var_B = 100, std_B = sqrt(100.001); running 0 / 1 -> std_R = sqrt(1.001)
    # r = std_B / std_R ~ 9.995 -> clipped to 3;  d = 20 / sqrt(1.001) ~ 19.99 -> clipped to 5
    # mean = 20 - 5 * sqrt(var_B) / 3 (no eps there, as the CrossQ authors' Flax code and sb3-contrib), var = 100 / 9
    mean, var = 20 - 5 * 10 / 3, 100 / 9
    expected = (np.array([[10.0], [30.0]]) - mean) / np.sqrt(var + 1e-3)
    torch.testing.assert_close(layer(x), torch.tensor(expected))
    # the running statistics move with the unclipped batch statistics: 0.01 * 20, 0.99 * 1 + 0.01 * 100
    torch.testing.assert_close(layer.running_mean, torch.tensor([0.2], dtype=torch.float64))
    torch.testing.assert_close(layer.running_var, torch.tensor([0.99 + 1.0], dtype=torch.float64))


@pytest.mark.parametrize("unbiased", [False, True])
def test_brn_matches_numpy_through_warmup_switch_and_eval(unbiased):
    rng = np.random.default_rng(0)
    warmup = 3
    layer = _brn(warmup_steps=warmup, unbiased=unbiased)
    ref = NumpyBRN(3, warmup=warmup, unbiased=unbiased)
    weight, bias = _np(layer.weight), _np(layer.bias)
    clipped_r = clipped_d = False
    for step in range(8):
        # drifting, wide batches: after warmup r and d hit their clips in some features
        x = rng.normal(loc=[0.0, 4.0 * step, -2.0], scale=[1.0, 6.0, 0.05], size=(5, 3))
        layer.train()
        out = layer(torch.tensor(x))
        expected, r, d = ref.train_step(x, weight, bias)
        np.testing.assert_allclose(_np(out), expected, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(_np(layer.running_mean), ref.mean, rtol=1e-12)
        np.testing.assert_allclose(_np(layer.running_var), ref.var, rtol=1e-12)
        assert int(layer.steps) == step + 1
        if step >= warmup:
            clipped_r |= bool(np.any((r == 3.0) | (r == 1 / 3)))
            clipped_d |= bool(np.any(np.abs(d) == 5.0))
        layer.eval()
        x_eval = rng.normal(size=(4, 3))
        np.testing.assert_allclose(_np(layer(torch.tensor(x_eval))), ref.eval_step(x_eval, weight, bias), rtol=1e-10)
        assert int(layer.steps) == step + 1  # eval updates nothing
    assert clipped_r and clipped_d  # the test did exercise the clipping


def test_brn_warmup_boundary_is_steps_ge_warmup():
    x = torch.tensor([[0.0, 10.0], [2.0, 30.0]], dtype=torch.float64)
    plain = torch.tensor([[-1.0, -10.0], [1.0, 10.0]], dtype=torch.float64)
    layer = BatchRenorm1d(2, affine=False, warmup_steps=2).double()
    for _ in range(2):  # calls with steps 0 and 1: plain batch norm
        torch.testing.assert_close(layer(x), plain / torch.sqrt(torch.tensor([1.001, 100.001], dtype=torch.float64)))
    assert layer.warmed_up
    # steps == 2: renormalized, different output
    assert not torch.allclose(layer(x), plain / torch.sqrt(torch.tensor([1.001, 100.001], dtype=torch.float64)))


def test_brn_running_stats_after_k_calls_closed_form():
    # the same batch k times: running = batch + (1 - m)^k (init - batch)
    layer = BatchRenorm1d(2, warmup_steps=0)
    x = torch.tensor([[1.0, 0.0], [3.0, 4.0], [5.0, 8.0]])
    for _ in range(7):
        layer(x)
    decay = 0.99**7
    mu, var = torch.tensor([3.0, 4.0]), torch.tensor([8 / 3, 32 / 3])
    torch.testing.assert_close(layer.running_mean, mu * (1 - decay))
    torch.testing.assert_close(layer.running_var, var + decay * (1 - var))
    assert int(layer.steps) == 7


def test_brn_state_dict_round_trip_keeps_steps():
    layer = _brn(warmup_steps=5)
    for _ in range(7):
        layer(torch.randn(4, 3, dtype=torch.float64))
    state = layer.state_dict()
    assert {"steps", "running_mean", "running_var", "weight", "bias"} <= set(state)
    restored = _brn(warmup_steps=5)
    restored.load_state_dict(state)
    assert int(restored.steps) == 7 and restored.warmed_up
    x = torch.randn(4, 3, dtype=torch.float64)
    torch.testing.assert_close(restored(x), layer(x))  # train mode, renormalizing: same r, d and output
    torch.testing.assert_close(restored.running_var, layer.running_var)
    assert int(restored.steps) == 8


def _autograd_reference(x, weight, bias, running_mean, running_var, eps, r, d):
    """Renormalized output with r and d as numpy constants: gradient flows through mu_B and var_B only."""
    mu, var = x.mean(0), x.var(0, unbiased=False)
    r_t, d_t = torch.tensor(r), torch.tensor(d)
    return (x - (mu - d_t * var.sqrt() / r_t)) / (var / r_t**2 + eps).sqrt() * weight + bias


def test_brn_gradient_stops_at_r_and_d():
    rng = np.random.default_rng(1)
    layer = _brn(warmup_steps=0)
    with torch.no_grad():  # running stats near the batch's so that r and d are not clipped (clipping hides grads)
        layer.running_mean.copy_(torch.tensor([0.2, 1.0, -0.4], dtype=torch.float64))
        layer.running_var.copy_(torch.tensor([0.8, 2.0, 0.5], dtype=torch.float64))
    running_mean, running_var = _np(layer.running_mean).copy(), _np(layer.running_var).copy()
    x_np = rng.normal(loc=[0.0, 1.0, -0.5], scale=[1.0, 1.5, 0.7], size=(6, 3))
    upstream = torch.tensor(rng.normal(size=(6, 3)))

    x = torch.tensor(x_np, requires_grad=True)
    (layer(x) * upstream).sum().backward()

    std_b = np.sqrt(x_np.var(0) + 1e-3)
    std_r = np.sqrt(running_var + 1e-3)
    r, d = std_b / std_r, (x_np.mean(0) - running_mean) / std_r
    assert np.all((r > 1 / 3) & (r < 3)) and np.all(np.abs(d) < 5)
    weight, bias = layer.weight.detach().clone(), layer.bias.detach().clone()
    x_ref = torch.tensor(x_np, requires_grad=True)
    (_autograd_reference(x_ref, weight, bias, torch.tensor(running_mean), torch.tensor(running_var), 1e-3, r, d)
     * upstream).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)

    # with gradient through r and d the gradient would differ (sanity check that the test can fail)
    x_full = torch.tensor(x_np, requires_grad=True)
    mu, var = x_full.mean(0), x_full.var(0, unbiased=False)
    std = (var + 1e-3).sqrt()
    r_t = std / torch.tensor(std_r)
    d_t = (mu - torch.tensor(running_mean)) / torch.tensor(std_r)
    full = (x_full - (mu - d_t * var.sqrt() / r_t)) / (var / r_t**2 + 1e-3).sqrt() * weight + bias
    (full * upstream).sum().backward()
    assert not torch.allclose(x_full.grad, x.grad)
    assert layer.weight.grad is not None and layer.bias.grad is not None
    assert not layer.running_mean.requires_grad


def test_brn_eval_gradient_is_affine_only():
    layer = _brn()
    layer.eval()
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    layer(x).sum().backward()
    expected = (layer.weight / torch.sqrt(layer.running_var + 1e-3)).detach().expand(4, 3)
    torch.testing.assert_close(x.grad, expected)


def test_brn_members_equal_independent_layers():
    torch.manual_seed(0)
    members = BatchRenorm1d(3, members=2, warmup_steps=2)
    singles = [BatchRenorm1d(3, warmup_steps=2) for _ in range(2)]
    with torch.no_grad():
        members.weight.copy_(torch.randn(2, 3))
        members.bias.copy_(torch.randn(2, 3))
        for i, single in enumerate(singles):
            single.weight.copy_(members.weight[i])
            single.bias.copy_(members.bias[i])
    for step in range(5):
        x = torch.randn(2, 8, 3) * (step + 1) + step
        out = members(x)
        for i, single in enumerate(singles):
            torch.testing.assert_close(out[i], single(x[i]))
            torch.testing.assert_close(members.running_mean[i], single.running_mean)
            torch.testing.assert_close(members.running_var[i], single.running_var)
    shared = torch.randn(8, 3)  # a (batch, features) input goes to every member
    out = members(shared)
    for i, single in enumerate(singles):
        torch.testing.assert_close(out[i], single(shared))
    members.eval()
    first = members(shared, members=slice(0, 1))
    singles[0].eval()
    torch.testing.assert_close(first[0], singles[0](shared))


def test_brn_rejects_bad_shapes_and_settings():
    with pytest.raises(ValueError):
        BatchRenorm1d(3)(torch.randn(2, 3, 4))
    with pytest.raises(ValueError):
        BatchRenorm1d(3)(torch.randn(2, 4))
    with pytest.raises(ValueError):
        BatchRenorm1d(3, momentum=0.99 + 1)
    with pytest.raises(ValueError):
        BatchRenorm1d(3, r_max=0.5)


# ---------------------------------------------------------------- joint forward pass


class _Critic(nn.Module):
    """BRN(concat(s, a)) -> Linear: the first block of CrossQ's critic."""

    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.norm = BatchRenorm1d(obs_dim + action_dim, warmup_steps=0)
        self.linear = nn.Linear(obs_dim + action_dim, 1)

    def forward(self, obs, action):
        return self.linear(self.norm(torch.cat([obs, action], dim=-1))).squeeze(-1)


def test_joint_forward_uses_mixed_batch_statistics_once():
    torch.manual_seed(0)
    critic = _Critic(2, 1)
    critic.eval()  # the helper switches to train mode for the call and restores eval afterwards
    s, a = torch.randn(4, 2), torch.randn(4, 1)
    s_next, a_next = torch.randn(4, 2) + 3.0, torch.randn(4, 1) - 2.0
    q, q_next = joint_forward(critic, (s, a), (s_next, a_next))
    assert q.shape == (4,) and q_next.shape == (4,)
    assert not critic.training and not critic.norm.training
    assert int(critic.norm.steps) == 1  # one update per joint call

    mixed = torch.cat([torch.cat([s, a], -1), torch.cat([s_next, a_next], -1)])
    torch.testing.assert_close(critic.norm.running_mean, 0.01 * mixed.mean(0))
    torch.testing.assert_close(critic.norm.running_var, 0.99 + 0.01 * mixed.var(0, unbiased=False))
    for half in (torch.cat([s, a], -1), torch.cat([s_next, a_next], -1)):
        assert not torch.allclose(critic.norm.running_mean, 0.01 * half.mean(0))

    # the outputs are those of one pass over the mixed batch
    fresh = _Critic(2, 1)
    fresh.load_state_dict({**critic.state_dict(), "norm.running_mean": torch.zeros(3),
                           "norm.running_var": torch.ones(3), "norm.steps": torch.tensor(0)})
    together = fresh(torch.cat([s, s_next]), torch.cat([a, a_next]))
    torch.testing.assert_close(torch.cat([q, q_next]), together)
    # ... and not those of two separate passes
    separate = _Critic(2, 1)
    separate.load_state_dict(fresh.state_dict())
    assert not torch.allclose(separate(s, a), q)

    joint_forward(critic, (s, a), (s_next, a_next))
    assert int(critic.norm.steps) == 2


def test_joint_forward_splits_ensemble_output_on_last_dim_and_unequal_batches():
    def ensemble(obs, action):  # (n=2, batch) output, like polyak's ensemble critic
        q = torch.cat([obs, action], -1).sum(-1)
        return torch.stack([q, 2 * q])

    s, a = torch.ones(3, 2), torch.zeros(3, 1)
    s_next, a_next = torch.full((2, 2), 2.0), torch.ones(2, 1)
    q, q_next = joint_forward(ensemble, (s, a), (s_next, a_next), output_dim=-1, train=None)
    torch.testing.assert_close(q, torch.tensor([[2.0] * 3, [4.0] * 3]))
    torch.testing.assert_close(q_next, torch.tensor([[5.0] * 2, [10.0] * 2]))
    with pytest.raises(TypeError):
        joint_forward(ensemble, (s, a), (s_next, a_next), output_dim=-1)
    with pytest.raises(ValueError):
        joint_forward(ensemble, (s, a), (s_next,), train=None)


def test_joint_forward_gradient_reaches_both_halves():
    critic = _Critic(2, 1)
    s = torch.randn(4, 2, requires_grad=True)
    s_next = torch.randn(4, 2, requires_grad=True)
    q, q_next = joint_forward(critic, (s, torch.randn(4, 1)), (s_next, torch.randn(4, 1)))
    (q.sum() + q_next.sum()).backward()
    assert s.grad is not None and s_next.grad is not None


def test_module_mode_restores_mixed_modes():
    net = nn.Sequential(BatchRenorm1d(2), BatchRenorm1d(2))
    net.train()
    net[1].eval()
    with module_mode(net, False):
        assert not net.training and not net[0].training and not net[1].training
    assert net.training and net[0].training and not net[1].training
    with pytest.raises(RuntimeError), module_mode(net, True):
        raise RuntimeError
    assert net.training and net[0].training and not net[1].training


def test_brn_matches_sb3_contrib_batch_renorm_after_warmup():
    """sb3-contrib's BatchRenorm (unbiased variance, renormalizing once ``steps > warmup``) on the same inputs and
    running statistics: the same outputs and running statistics, including the mean term's ``sqrt(var_B)``."""
    torch_layers = pytest.importorskip("sb3_contrib.common.torch_layers")
    reference = torch_layers.BatchRenorm1d(3, momentum=0.01, warmup_steps=2).double()
    layer = _brn(unbiased=True, warmup_steps=2)
    with torch.no_grad():
        reference.scale.copy_(layer.weight)
        reference.bias.copy_(layer.bias)
        for module_mean, module_var in ((reference.ra_mean, reference.ra_var), (layer.running_mean, layer.running_var)):
            module_mean.copy_(torch.tensor([0.5, -1.0, 2.0]))
            module_var.copy_(torch.tensor([0.25, 4.0, 1e-4]))
    reference.steps.fill_(10)
    layer.steps.fill_(10)
    x = torch.tensor([[1.0, 3.0, 2.0], [3.0, -2.0, 2.0], [2.5, 0.0, 2.0], [0.0, 1.0, 2.0]], dtype=torch.float64)
    reference.train()
    torch.testing.assert_close(layer(x), reference(x))  # feature 3 is constant: var_B = 0 <= eps
    torch.testing.assert_close(layer.running_mean, reference.ra_mean)
    torch.testing.assert_close(layer.running_var, reference.ra_var)


def test_brn_reference_mean_term_by_hand_and_finite_gradient_for_a_constant_feature():
    """Flax mode (biased variance) at x = [1, 3] with running mean 0 and variance 1, after warmup:
    mu_B = 2, var_B = 1, std_B = sqrt(1.001), std_R = sqrt(1.001): r = 1, d = 2 / sqrt(1.001);
    mean = 2 - d * sqrt(1) / 1, var = 1, so y = (x - mean) / sqrt(1.001) = [0.99850, 2.99750] (with
    sqrt(var_B + eps) in the mean term it would be [0.99950, 2.99850]); a constant feature gets a finite gradient."""
    layer = BatchRenorm1d(1, affine=False, warmup_steps=0).double()
    y = layer(torch.tensor([[1.0], [3.0]], dtype=torch.float64))
    torch.testing.assert_close(y, torch.tensor([[0.99850], [2.99750]], dtype=torch.float64), atol=5e-6, rtol=0)
    constant = BatchRenorm1d(2, warmup_steps=0)
    with torch.no_grad():
        constant.running_mean.fill_(0.3)
    x = torch.tensor([[0.0, 1.0], [0.0, 2.0], [0.0, 4.0]], requires_grad=True)
    constant(x).pow(2).sum().backward()
    assert torch.isfinite(x.grad).all()
