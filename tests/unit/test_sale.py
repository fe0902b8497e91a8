"""TD7's SALE encoders, their loss and the encoder copies."""

import torch
from torch.nn import functional

from polyak.layers import avg_l1_norm
from polyak.sale import SALEEncoder, SALEEncoders, sale_loss


def _encoder(seed=0, **kwargs):
    return SALEEncoder(3, 2, generator=torch.Generator().manual_seed(seed), **kwargs)


def _by_hand_zs(encoder, obs):
    first, second, last = encoder.state_encoder.layers
    h = functional.elu(obs @ first.weight.T + first.bias)
    h = functional.elu(h @ second.weight.T + second.bias)
    z = h @ last.weight.T + last.bias
    return z / z.abs().mean(-1, keepdim=True).clamp(min=1e-8)


def _by_hand_zsa(encoder, zs, action):
    first, second, last = encoder.state_action_encoder.layers
    h = functional.elu(torch.cat([zs, action], -1) @ first.weight.T + first.bias)
    h = functional.elu(h @ second.weight.T + second.bias)
    return h @ last.weight.T + last.bias


def test_default_dims_follow_td7():
    encoder = SALEEncoder(5, 2)
    first, second, last = encoder.state_encoder.layers
    assert (first.in_features, first.out_features, second.out_features, last.out_features) == (5, 256, 256, 256)
    first, _, last = encoder.state_action_encoder.layers
    assert (first.in_features, last.out_features) == (256 + 2, 256)
    assert encoder.zs_dim == encoder.zsa_dim == 256


def test_encoders_by_hand_and_only_zs_is_normalized():
    encoder = _encoder(zs_dim=4, zsa_dim=6, hidden_dim=8)
    obs, action = torch.randn(5, 3), torch.rand(5, 2) * 2 - 1
    zs, zsa = encoder(obs, action)
    assert zs.shape == (5, 4) and zsa.shape == (5, 6)
    torch.testing.assert_close(zs, _by_hand_zs(encoder, obs))
    torch.testing.assert_close(zsa, _by_hand_zsa(encoder, zs, action))
    torch.testing.assert_close(zs.abs().mean(-1), torch.ones(5))  # AvgL1Norm on zs
    assert not torch.allclose(zsa.abs().mean(-1), torch.ones(5))  # zsa is a plain linear output
    torch.testing.assert_close(encoder.zs(obs), avg_l1_norm(encoder.zs(obs)))


def test_generator_makes_init_reproducible():
    a, b, c = _encoder(seed=1, hidden_dim=8), _encoder(seed=1, hidden_dim=8), _encoder(seed=2, hidden_dim=8)
    for (name, pa), pb, pc in zip(a.named_parameters(), b.parameters(), c.parameters(), strict=True):
        torch.testing.assert_close(pa, pb, msg=name)
        assert not torch.equal(pa, pc)


def test_sale_loss_targets_live_encoder_without_gradient():
    encoder = _encoder(zs_dim=4, hidden_dim=8)
    obs, action, next_obs = torch.randn(6, 3), torch.rand(6, 2), torch.randn(6, 3)
    loss = sale_loss(encoder, obs, action, next_obs)
    zs = _by_hand_zs(encoder, obs)
    target = _by_hand_zs(encoder, next_obs).detach()
    expected = (_by_hand_zsa(encoder, zs, action) - target).pow(2).mean()
    torch.testing.assert_close(loss, expected)

    loss.backward()
    grads = [p.grad.clone() for p in encoder.parameters()]
    assert all(g.abs().sum() > 0 for g in grads)  # both f and g learn
    encoder.zero_grad()
    expected.backward()
    for got, want in zip(grads, (p.grad for p in encoder.parameters()), strict=True):
        torch.testing.assert_close(got, want)
    # a gradient through the target would differ
    encoder.zero_grad()
    (_by_hand_zsa(encoder, _by_hand_zs(encoder, obs), action) - _by_hand_zs(encoder, next_obs)).pow(2).mean().backward()
    first_layer = next(encoder.parameters())
    assert not torch.allclose(first_layer.grad, grads[0])


def _perturb(encoder, amount):
    with torch.no_grad():
        for p in encoder.parameters():
            p.add_(amount)


def _same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_encoder_copies_start_equal_frozen_and_independent():
    encoders = SALEEncoders(_encoder(hidden_dim=8, zs_dim=4))
    for copy in (encoders.fixed_encoder, encoders.fixed_encoder_target, encoders.checkpoint_encoder):
        assert _same(copy, encoders.encoder)
        assert copy is not encoders.encoder
        assert not any(p.requires_grad for p in copy.parameters())
    assert all(p.requires_grad for p in encoders.encoder.parameters())
    _perturb(encoders.encoder, 0.1)
    assert not _same(encoders.fixed_encoder, encoders.encoder)


def test_update_fixed_shifts_target_then_fixed():
    encoders = SALEEncoders(_encoder(hidden_dim=8, zs_dim=4))
    snapshots = [SALEEncoder(3, 2, zs_dim=4, hidden_dim=8)]
    snapshots[0].load_state_dict(encoders.encoder.state_dict())
    for k in range(1, 4):
        _perturb(encoders.encoder, 0.1 * k)  # "training" during iteration k
        snap = SALEEncoder(3, 2, zs_dim=4, hidden_dim=8)
        snap.load_state_dict(encoders.encoder.state_dict())
        snapshots.append(snap)
        encoders.update_fixed()
        # the critic uses the encoder of one iteration ago, the target the one of two iterations ago
        assert _same(encoders.fixed_encoder, snapshots[k])
        assert _same(encoders.fixed_encoder_target, snapshots[k - 1])
    # copies are by value: training the live encoder later leaves them alone
    _perturb(encoders.encoder, 1.0)
    assert _same(encoders.fixed_encoder, snapshots[3])
    encoders.update_checkpoint()
    assert _same(encoders.checkpoint_encoder, snapshots[3])


def test_gradient_flows_through_fixed_encoder_to_the_action():
    encoders = SALEEncoders(_encoder(hidden_dim=8, zs_dim=4))
    obs = torch.randn(4, 3)
    action = torch.rand(4, 2, requires_grad=True)
    zs = encoders.fixed_encoder.zs(obs)
    encoders.fixed_encoder.zsa(zs, action).sum().backward()
    assert action.grad is not None and action.grad.abs().sum() > 0
    assert all(p.grad is None for p in encoders.fixed_encoder.parameters())


def test_encoders_state_dict_round_trip():
    encoders = SALEEncoders(_encoder(seed=3, hidden_dim=8, zs_dim=4))
    _perturb(encoders.encoder, 0.2)
    encoders.update_fixed()
    _perturb(encoders.encoder, 0.3)
    state = encoders.state_dict()
    assert any(key.startswith("fixed_encoder_target.") for key in state)
    restored = SALEEncoders(_encoder(seed=9, hidden_dim=8, zs_dim=4))
    restored.load_state_dict(state)
    for name in ("encoder", "fixed_encoder", "fixed_encoder_target", "checkpoint_encoder"):
        assert _same(getattr(restored, name), getattr(encoders, name)), name
    obs, action, next_obs = torch.randn(4, 3), torch.rand(4, 2), torch.randn(4, 3)
    torch.testing.assert_close(restored.loss(obs, action, next_obs), encoders.loss(obs, action, next_obs))
