"""Point-by-point checks of the Unity-Reacher re-creation against docs/reacher-spec.md."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import mujoco
import numpy as np
import pytest

from polyak.envs.registration import UNITY_REACHER_ID, register_envs
from polyak.envs.scripted import ScriptedReacherController
from polyak.envs.unity_reacher import UnityReacherEnv, UnityReacherVectorEnv, build_reacher_xml

N = 20


@pytest.fixture(scope="module")
def venv() -> Iterator[UnityReacherVectorEnv]:
    env = UnityReacherVectorEnv(num_envs=N)
    yield env
    env.close()


def _rollout(env: UnityReacherVectorEnv, seed: int, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    obs, _ = env.reset(seed=seed)
    all_obs, all_rew = [obs], []
    for a in actions:
        obs, rew, _, _, _ = env.step(a)
        all_obs.append(obs)
        all_rew.append(rew)
    return np.array(all_obs), np.array(all_rew)


def test_spaces_and_metadata(venv: UnityReacherVectorEnv) -> None:
    assert venv.single_observation_space.shape == (33,)
    assert venv.single_observation_space.dtype == np.float32
    assert np.all(np.isinf(venv.single_observation_space.low))
    assert venv.single_action_space.shape == (4,)
    assert np.all(venv.single_action_space.low == -1) and np.all(venv.single_action_space.high == 1)
    assert venv.observation_space.shape == (N, 33)
    assert venv.action_space.shape == (N, 4)
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert venv.metadata["render_modes"] == ["rgb_array"]


def test_model_physics_constants(venv: UnityReacherVectorEnv) -> None:
    """Spec §6–§8: dt 0.02, gravity −9.81 y, masses, COM offset, no contacts."""
    m = venv.model
    assert m.opt.timestep == pytest.approx(0.02)
    np.testing.assert_allclose(m.opt.gravity, [0, -9.81, 0])
    np.testing.assert_allclose(m.body_mass[venv._upper], 1.0)
    np.testing.assert_allclose(m.body_mass[venv._lower], 1.0, atol=1e-9)
    np.testing.assert_allclose(m.body_ipos[venv._lower][:, 1], 1.4545, atol=1e-3)
    assert np.all(m.geom_contype == 0) and np.all(m.geom_conaffinity == 0)
    assert m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT
    assert m.nv == 4 * N and m.nu == 0


def test_initial_observation_is_hanging_pose(venv: UnityReacherVectorEnv) -> None:
    """Spec §2 table and the Udacity notebook's printed initial observation."""
    obs, info = venv.reset(seed=3)
    assert obs.shape == (N, 33) and obs.dtype == np.float32 and info == {}
    np.testing.assert_allclose(obs[:, 0:3], np.tile([0, -4, 0], (N, 1)), atol=1e-6)
    np.testing.assert_allclose(obs[:, 13:16], np.tile([0, -10, 0], (N, 1)), atol=1e-6)
    for q in (obs[:, 3:7], obs[:, 16:20]):
        np.testing.assert_allclose(np.abs(q), np.tile([1, 0, 0, 0], (N, 1)), atol=1e-6)
    np.testing.assert_array_equal(obs[:, 7:13], 0)
    np.testing.assert_array_equal(obs[:, 20:26], 0)
    goal = obs[:, 26:29].astype(np.float64)
    np.testing.assert_allclose(np.hypot(goal[:, 0], goal[:, 2]), 8.0, atol=1e-5)
    np.testing.assert_allclose(goal[:, 1], -1.0)
    angle = np.rad2deg(np.arctan2(goal[:, 0], goal[:, 2])) % 360.0
    np.testing.assert_allclose(angle, np.round(angle) % 360, atol=1e-3)
    np.testing.assert_array_equal(obs[:, 29:32], np.tile([0, 1, 0], (N, 1)))
    assert np.all(np.abs(obs[:, 32]) <= 1.0) and np.unique(obs[:, 32]).size == N


def test_geometry_shoulder_elbow_hand(venv: UnityReacherVectorEnv) -> None:
    """Spec §7: shoulder at y=+0.02, elbow at −7, hand centre at −13 (relative to the root)."""
    venv.reset(seed=0)
    d = venv.data
    anchors = d.xanchor.reshape(N, 4, 3) - venv.offsets[:, None, :]
    np.testing.assert_allclose(anchors[:, :2], np.tile([0, 0.02, 0], (N, 2, 1)), atol=1e-9)
    np.testing.assert_allclose(anchors[:, 2:], np.tile([0, -7, 0], (N, 2, 1)), atol=1e-9)
    np.testing.assert_allclose(d.site_xpos - venv.offsets, np.tile([0, -13, 0], (N, 1)), atol=1e-9)


def test_goal_moves_goal_speed_degrees_per_physics_step(venv: UnityReacherVectorEnv) -> None:
    """Spec §5: θ += goal_speed each of the 4 physics steps of a decision, radius 8, y −1."""
    obs0, _ = venv.reset(seed=5)
    obs1, *_ = venv.step(np.zeros((N, 4)))
    a0 = np.rad2deg(np.arctan2(obs0[:, 26], obs0[:, 28]))
    a1 = np.rad2deg(np.arctan2(obs1[:, 26], obs1[:, 28]))
    delta = (a1 - a0 + 180.0) % 360.0 - 180.0
    np.testing.assert_allclose(delta, 4 * obs0[:, 32], atol=1e-3)
    np.testing.assert_array_equal(obs1[:, 32], obs0[:, 32])
    np.testing.assert_allclose(venv.data.mocap_pos - venv.offsets, obs1[:, 26:29], atol=1e-5)


def test_rewards_are_multiples_of_001_up_to_004(venv: UnityReacherVectorEnv) -> None:
    """Spec §4: +0.01 per physics step in the goal, so per decision in {0, …, 0.04}."""
    controller = ScriptedReacherController()
    obs, _ = venv.reset(seed=1)
    rng = np.random.default_rng(0)
    seen = set()
    for t in range(300):
        action = controller(obs) if t % 50 < 40 else rng.uniform(-1, 1, (N, 4))
        obs, rew, term, trunc, _ = venv.step(action)
        assert rew.shape == (N,) and not term.any() and not trunc.any()
        seen.update(np.round(rew, 12).tolist())
    assert seen <= {0.0, 0.01, 0.02, 0.03, 0.04}
    assert {0.0, 0.04} <= seen and len(seen) >= 3


def test_reward_threshold_is_3p5(venv: UnityReacherVectorEnv) -> None:
    """Spec §4: reward iff ‖hand − goal‖ < 2.5 + 1.0."""
    venv.reset(seed=0)
    hand = venv.data.site_xpos.copy()
    venv._mocap_pos[:] = hand + np.array([3.49, 0.0, 0.0])
    assert venv._hand_in_goal().all()
    venv._mocap_pos[:] = hand + np.array([0.0, 0.0, 3.51])
    assert not venv._hand_in_goal().any()


def test_truncates_after_exactly_1000_decisions_with_same_step_autoreset() -> None:
    """Spec §6: 1000 decisions, truncation (not termination), all arms together; gymnasium SAME_STEP."""
    env = UnityReacherVectorEnv(num_envs=3)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(999):
        obs, _, term, trunc, info = env.step(rng.uniform(-1, 1, (3, 4)))
        assert not term.any() and not trunc.any() and "final_obs" not in info
    obs, _, term, trunc, info = env.step(rng.uniform(-1, 1, (3, 4)))
    assert term.dtype == bool and trunc.dtype == bool
    assert not term.any() and trunc.all()
    assert info["final_obs"].shape == (3, 33) and info["_final_obs"].all()
    assert not np.allclose(info["final_obs"][:, 7:13], 0)
    np.testing.assert_allclose(obs[:, 0:3], np.tile([0, -4, 0], (3, 1)), atol=1e-6)
    np.testing.assert_array_equal(obs[:, 7:13], 0)
    _, _, _, trunc2, info2 = env.step(np.zeros((3, 4)))
    assert not trunc2.any() and "final_obs" not in info2
    env.close()


def test_same_seed_same_trajectory_different_seed_differs() -> None:
    env = UnityReacherVectorEnv(num_envs=4)
    actions = np.random.default_rng(7).uniform(-1, 1, (120, 4, 4))
    obs_a, rew_a = _rollout(env, 11, actions)
    obs_b, rew_b = _rollout(env, 11, actions)
    obs_c, _ = _rollout(env, 12, actions)
    np.testing.assert_array_equal(obs_a, obs_b)
    np.testing.assert_array_equal(rew_a, rew_b)
    assert not np.array_equal(obs_a[0, :, 26:], obs_c[0, :, 26:])
    assert not np.array_equal(obs_a, obs_c)
    env.close()


def test_arms_never_influence_each_other(venv: UnityReacherVectorEnv) -> None:
    """Arm k's trajectory is bit-identical whatever the other arms do (spec §7 "never interact")."""
    rng = np.random.default_rng(3)
    k = 7
    own = rng.uniform(-1, 1, (300, 4))
    others_random = rng.uniform(-1, 1, (300, N, 4))
    others_random[:, k] = own
    others_zero = np.zeros((300, N, 4))
    others_zero[:, k] = own
    obs_r, rew_r = _rollout(venv, 21, others_random)
    obs_z, rew_z = _rollout(venv, 21, others_zero)
    np.testing.assert_array_equal(obs_r[:, k], obs_z[:, k])
    np.testing.assert_array_equal(rew_r[:, k], rew_z[:, k])
    assert not np.array_equal(obs_r[:, k - 1], obs_z[:, k - 1])


def test_torques_are_world_frame(venv: UnityReacherVectorEnv) -> None:
    """Spec §3: a pure +x (or +z) torque on the hanging upper arm spins it about world +x (+z) only.

    The upper arm's body frame is rotated 180° about x, so a body-frame +z torque would give −z rotation.
    """
    for col, axis in ((0, 0), (1, 2)):
        venv.reset(seed=0)
        action = np.zeros((N, 4))
        action[:, col] = 0.5
        obs, *_ = venv.step(action)
        w = obs[:, 7:10]
        assert np.all(w[:, axis] > 0.1)
        others = [i for i in range(3) if i != axis]
        np.testing.assert_allclose(w[:, others], 0, atol=1e-6)
    venv.reset(seed=0)
    action = np.zeros((N, 4))
    action[:, 3] = 0.5
    obs, *_ = venv.step(action)
    assert np.all(obs[:, 22] > 0.1) and np.allclose(obs[:, [20, 21]], 0, atol=1e-6)
    np.testing.assert_allclose(venv.data.xfrc_applied[venv._lower, 5], 75.0)
    np.testing.assert_allclose(venv.data.xfrc_applied[venv._lower, 3], 0.0)


def test_actions_are_clipped(venv: UnityReacherVectorEnv) -> None:
    venv.reset(seed=0)
    venv.step(np.full((N, 4), 5.0))
    np.testing.assert_allclose(venv.data.xfrc_applied[venv._upper, 3:6], np.tile([150, 0, 150], (N, 1)))


def test_velocities_match_mj_object_velocity_and_speed_cap(venv: UnityReacherVectorEnv) -> None:
    """Spec §8.6: obs velocities = mj_objectVelocity (world ω, COM v); spec §7: ‖ω‖ ≤ 7 per body."""
    obs, _ = venv.reset(seed=4)
    rng = np.random.default_rng(4)
    m, d = venv.model, venv.data
    res = np.zeros(6)
    max_w = 0.0
    for t in range(60):
        obs, *_ = venv.step(rng.uniform(-1, 1, (N, 4)))
        max_w = max(max_w, np.linalg.norm(obs[:, 7:10], axis=1).max(), np.linalg.norm(obs[:, 20:23], axis=1).max())
        if t % 20 == 19:
            for i in range(N):
                for body, sl in ((venv._upper[i], slice(7, 13)), (venv._lower[i], slice(20, 26))):
                    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, body, res, 0)
                    np.testing.assert_allclose(obs[i, sl], res, rtol=1e-5, atol=1e-5)
            mujoco.mj_kinematics(m, d)
            np.testing.assert_allclose(obs[:, 0:3], d.xpos[venv._upper] - venv.offsets, atol=1e-5)
    assert 6.5 < max_w <= 7.0 + 1e-5


def test_gymnasium_make_and_make_vec() -> None:
    register_envs()
    register_envs()
    env = gymnasium.make(UNITY_REACHER_ID)
    assert isinstance(env.unwrapped, UnityReacherEnv)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (33,) and obs.dtype == np.float32
    obs_again, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs, obs_again)
    for t in range(1000):
        obs, rew, term, trunc, _ = env.step(env.action_space.sample())
        assert isinstance(rew, float) and not term
        if t < 999:
            assert not trunc
    assert trunc and not np.allclose(obs[7:13], 0)
    env.close()
    for kwargs in ({}, {"vectorization_mode": "vector_entry_point"}):
        venv = gymnasium.make_vec(UNITY_REACHER_ID, num_envs=N, **kwargs)
        assert isinstance(venv, UnityReacherVectorEnv) and venv.num_envs == N
        obs, _ = venv.reset(seed=0)
        assert obs.shape == (N, 33)
        venv.close()


def test_xml_builds_for_other_arm_counts() -> None:
    for n in (1, 7, 23):
        m = mujoco.MjModel.from_xml_string(build_reacher_xml(n))
        assert m.nv == 4 * n and m.nmocap == n


def test_render_frames() -> None:
    env = UnityReacherVectorEnv(num_envs=N, render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    try:
        frame0 = env.render()
    except Exception as exc:  # pragma: no cover - depends on the machine's GL stack
        env.close()
        pytest.skip(f"no working MuJoCo GL backend (MUJOCO_GL=egl/osmesa): {exc!r}")
    controller = ScriptedReacherController()
    obs, _ = env.reset(seed=0)
    for _ in range(40):
        obs, *_ = env.step(controller(obs))
    frame1 = env.render()
    assert frame0.shape == (120, 160, 3) and frame0.dtype == np.uint8
    assert frame0.mean() > 20 and frame0.std() > 5
    assert np.abs(frame0.astype(int) - frame1.astype(int)).mean() > 0.5
    env.close()
    assert env._renderer is None
