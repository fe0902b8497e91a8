"""MuJoCo re-creation of the Unity ML-Agents v0.4 "Reacher" (Udacity DRLND Continuous Control).

Every constant below comes from ``docs/reacher-spec.md`` (cited as "spec §n"). Unity's numeric
coordinates are kept as-is (y up, gravity ``(0, -9.81, 0)``), so observations, torques and quaternions
transfer without sign flips (spec §8.1).
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco

__all__ = [
    "ACT_DIM",
    "DECISIONS_PER_EPISODE",
    "OBS_DIM",
    "UnityReacherEnv",
    "UnityReacherVectorEnv",
    "arm_offsets",
    "build_reacher_xml",
]

OBS_DIM = 33
ACT_DIM = 4
TIMESTEP = 0.02
FRAME_SKIP = 4
DECISIONS_PER_EPISODE = 1000
TORQUE_SCALE = 150.0
REWARD_PER_PHYSICS_STEP = 0.01
GOAL_RADIUS = 8.0
GOAL_HEIGHT = -1.0
HAND_RADIUS = 1.0
MAX_ANGULAR_SPEED = 7.0
ANGULAR_DRAG = 0.05
SHOULDER_Y = 0.02
UPPER_COM_TO_ELBOW = 3.0
LOWER_CAPSULE_MASS = 0.5152
LOWER_HAND_MASS = 0.4848
_MAX_W2 = MAX_ANGULAR_SPEED**2

_UNITY_ROW_Z = (0.0, 20.0, 41.1, 61.1)
_ARM_RGBA = "0.20 0.45 0.85 1"
_FOREARM_RGBA = "0.30 0.60 0.95 1"
_HAND_RGBA = "0.95 0.75 0.15 1"
_GOAL_OFF_RGBA = np.array([0.85, 0.25, 0.25, 0.45], dtype=np.float32)
_GOAL_ON_RGBA = np.array([0.20, 0.85, 0.30, 0.55], dtype=np.float32)


def arm_offsets(num_arms: int) -> np.ndarray:
    """Root positions of the arms: Unity's 5-column grid (spec §7 "Scene layout"), extended by 20-unit rows."""
    offsets = np.zeros((num_arms, 3))
    for i in range(num_arms):
        row, col = divmod(i, 5)
        z = _UNITY_ROW_Z[row] if row < len(_UNITY_ROW_Z) else _UNITY_ROW_Z[-1] + 20.0 * (row - 3)
        offsets[i] = ((col - 2) * 20.0 if num_arms > 1 else 0.0, 0.0, z)
    return offsets


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` over the last axis (length 3), without its per-call overhead."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _fmt(v: np.ndarray | tuple[float, ...]) -> str:
    return " ".join(f"{float(x):.6g}" for x in v)


def _camera_xml(offsets: np.ndarray) -> str:
    """A fixed camera in front of (−z side) and above the arms, looking at the centre of the grid."""
    lo = offsets.min(axis=0) - np.array([13.0, 0.0, 13.0])
    hi = offsets.max(axis=0) + np.array([13.0, 0.0, 13.0])
    centre = np.array([(lo[0] + hi[0]) / 2, -6.0, (lo[2] + hi[2]) / 2])
    span = max(hi[0] - lo[0], hi[2] - lo[2], 20.0)
    elevation = np.deg2rad(35.0)
    dist = 0.45 * span / np.tan(np.deg2rad(22.5)) + 5.0
    pos = centre + dist * np.array([0.0, np.sin(elevation), -np.cos(elevation)])
    fwd = (centre - pos) / np.linalg.norm(centre - pos)
    x_cam = np.cross(fwd, [0.0, 1.0, 0.0])
    x_cam /= np.linalg.norm(x_cam)
    y_cam = np.cross(-fwd, x_cam)
    return f'<camera name="overview" pos="{_fmt(pos)}" xyaxes="{_fmt(x_cam)} {_fmt(y_cam)}" fovy="45"/>'


def build_reacher_xml(num_arms: int = 20, offsets: np.ndarray | None = None) -> str:
    """MJCF for ``num_arms`` independent Reacher arms (spec §7 geometry, §8.3 recipe).

    Each arm is a static root (anchor sphere r 0.5) with ``upper`` (capsule, mass 1, two hinges x/z at the
    shoulder (0, 0.02, 0)) and ``lower`` (capsule mass 0.5152 + hand sphere r 1 mass 0.4848, two hinges at
    the elbow (0, −7, 0)). The goal is a mocap sphere of radius 2.5. Contacts are disabled globally and all
    geoms have contype = conaffinity = 0, so arms never interact (spec §7 "never interact").
    """
    offsets = arm_offsets(num_arms) if offsets is None else np.asarray(offsets, dtype=float)
    lo, hi = offsets.min(axis=0), offsets.max(axis=0)
    centre = (lo + hi) / 2 + np.array([0.0, -6.0, 0.0])
    extent = max(float(np.max(hi - lo)), 0.0) / 2 + 20.0
    floor_size = max(float(np.max(hi - lo)), 0.0) / 2 + 30.0
    arms, goals = [], []
    for i, off in enumerate(offsets):
        arms.append(
            f"""
    <body name="root{i}" pos="{_fmt(off)}">
      <geom name="anchor{i}" type="sphere" size="0.5" rgba="0.5 0.5 0.5 1"/>
      <body name="upper{i}" pos="0 -4 0" quat="0 1 0 0">
        <joint name="shoulder_x{i}" pos="0 -4.02 0" axis="1 0 0"/>
        <joint name="shoulder_z{i}" pos="0 -4.02 0" axis="0 0 1"/>
        <geom name="upper{i}" type="capsule" fromto="0 -2.5 0 0 2.5 0" size="0.5" mass="1"
              rgba="{_ARM_RGBA}"/>
        <body name="lower{i}" pos="0 6 0">
          <joint name="elbow_x{i}" pos="0 -3 0" axis="1 0 0"/>
          <joint name="elbow_z{i}" pos="0 -3 0" axis="0 0 1"/>
          <geom name="lower{i}" type="capsule" fromto="0 -2.5 0 0 2.5 0" size="0.5"
                mass="{LOWER_CAPSULE_MASS}" rgba="{_FOREARM_RGBA}"/>
          <geom name="hand{i}" type="sphere" pos="0 3 0" size="{HAND_RADIUS}" mass="{LOWER_HAND_MASS}"
                rgba="{_HAND_RGBA}"/>
          <site name="hand{i}" pos="0 3 0" size="0.1"/>
        </body>
      </body>
    </body>"""
        )
        goals.append(
            f"""
    <body name="goal{i}" mocap="true" pos="{_fmt(off + np.array([0.0, GOAL_HEIGHT, GOAL_RADIUS]))}">
      <geom name="goal{i}" type="sphere" size="2.5" rgba="{_fmt(_GOAL_OFF_RGBA)}"/>
    </body>"""
        )
    return f"""<mujoco model="unity_reacher_{num_arms}">
  <compiler angle="radian" inertiafromgeom="true"/>
  <option timestep="{TIMESTEP}" gravity="0 -9.81 0" integrator="Euler">
    <flag contact="disable" constraint="disable" equality="disable" frictionloss="disable" limit="disable"
          actuation="disable" spring="disable" damper="disable"/>
  </option>
  <statistic center="{_fmt(centre)}" extent="{extent:.6g}"/>
  <visual>
    <global offwidth="1280" offheight="960"/>
    <headlight ambient="0.35 0.35 0.35" diffuse="0.45 0.45 0.45" specular="0.1 0.1 0.1"/>
    <quality shadowsize="2048"/>
  </visual>
  <default>
    <geom contype="0" conaffinity="0"/>
  </default>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.32 0.34 0.38" rgb2="0.26 0.28 0.31"
             width="256" height="256"/>
    <material name="grid" texture="grid" texrepeat="{floor_size / 5:.6g} {floor_size / 5:.6g}"
              reflectance="0.05"/>
    <texture name="sky" type="skybox" builtin="gradient" rgb1="0.55 0.65 0.8" rgb2="0.1 0.12 0.18"
             width="64" height="64"/>
  </asset>
  <worldbody>
    <light name="sun" directional="true" pos="{_fmt(centre + np.array([0.0, 60.0, -20.0]))}"
           dir="0 -1 0.35" diffuse="0.6 0.6 0.6" castshadow="true"/>
    <geom name="floor" type="plane" pos="{_fmt(np.array([centre[0], -15.0, centre[2]]))}"
          quat="0.70710678 -0.70710678 0 0" size="{floor_size:.6g} {floor_size:.6g} 1" material="grid"/>
    {_camera_xml(offsets)}{"".join(arms)}{"".join(goals)}
  </worldbody>
</mujoco>
"""


class UnityReacherVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` Reacher arms simulated together in one MuJoCo model (spec §8).

    * Action ``a`` (clipped to [−1, 1]) → world-frame torques ``150·(a0, 0, a1)`` on the upper arm and
      ``150·(a2, 0, a3)`` on the forearm via ``data.xfrc_applied`` (spec §3, §8.4), held for 4 physics steps
      of 0.02 s (spec §6).
    * Each sub-step (spec §8.5): the goal angle advances by ``goal_speed`` degrees, ``mj_step``, angular
      drag and the angular-speed cap (below), then +0.01 if ‖hand − goal‖ < 3.5 (spec §4).
    * Angular drag 0.05 (spec §7): all hinge velocities are multiplied by ``1 − 0.02·0.05`` each step. Body
      angular velocities are linear in the hinge velocities, so this scales every body's world angular
      velocity by exactly that factor, like PhysX's per-body damping.
    * Angular-speed cap, 7 rad/s per body (spec §7, §8.5.3), in generalized coordinates. Unity clamps each
      body independently in maximal coordinates; here (i) the upper arm's two shoulder hinge velocities are
      scaled so that ‖ω_upper‖ ≤ 7 (exactly Unity's clamp for that body); (ii) the forearm's target is
      Unity's clamped ω_forearm, and its elbow hinge velocities are set to the least-squares fit of
      ``ω_target − ω_upper`` on the two elbow axes (identity when nothing is clamped); (iii) if the forearm
      still exceeds 7 rad/s (only possible through the locked twist direction) the whole arm's hinge
      velocities are scaled down uniformly. Afterwards both bodies satisfy ‖ω‖ ≤ 7 exactly, so observed
      angular speeds never exceed 7 rad/s, as in Unity. The cap acts after ``mj_step`` (whose checks then
      still report instabilities), so the position update of that one step used the uncapped velocity,
      which exceeds 7 rad/s by at most |angular acceleration|·0.02 (≈0.1–0.2 rad/s at full torque); PhysX
      clamps before its position update. This is an approximation of PhysX's solver behaviour (spec
      §11); it keeps semi-implicit Euler at dt = 0.02 stable under random ±150 torques.
    * Observations (spec §2) come from MuJoCo kinematics after the last sub-step: capsule centres relative
      to the arm root, ``xquat`` reordered to (x, y, z, w), and world angular / COM linear velocities from
      ``cvel`` shifted to ``xipos``, i.e. the numbers of ``mj_objectVelocity(mjOBJ_BODY, flg_local=0)``
      (verified in the unit tests).
    * Episodes: all arms reset together (hanging pose, integer start angle 0..359, goal speed U(−1, 1)·
      ``goal_speed``; spec §5, §8.7) and truncate together after exactly 1000 decisions (spec §6), with
      gymnasium's SAME_STEP autoreset: the final observations go to ``info["final_obs"]`` (``(N, 33)``)
      with mask ``info["_final_obs"]``, and the returned observation is the fresh reset observation.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012
        "autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP,
        "render_modes": ["rgb_array"],
        "render_fps": 1.0 / (TIMESTEP * FRAME_SKIP),
    }

    def __init__(
        self,
        num_envs: int = 20,
        render_mode: str | None = None,
        goal_speed: float = 1.0,
        goal_size: float = 5.0,
        max_episode_steps: int = DECISIONS_PER_EPISODE,
        width: int = 640,
        height: int = 480,
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"Unsupported render_mode {render_mode!r}")
        self.num_envs = num_envs
        self.render_mode = render_mode
        self.goal_speed = float(goal_speed)
        self.goal_size = float(goal_size)
        self.max_episode_steps = int(max_episode_steps)
        self.width, self.height = int(width), int(height)
        self._reward_dist2 = (0.5 * self.goal_size + HAND_RADIUS) ** 2

        self.single_observation_space = spaces.Box(-np.inf, np.inf, (OBS_DIM,), np.float32)
        self.single_action_space = spaces.Box(-1.0, 1.0, (ACT_DIM,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

        self.offsets = arm_offsets(num_envs)
        self.model = mujoco.MjModel.from_xml_string(build_reacher_xml(num_envs, self.offsets))
        self.data = mujoco.MjData(self.model)
        self._init_indices()

        self._theta = np.zeros(num_envs)
        self._speed = np.zeros(num_envs)
        self._steps = 0
        self._in_goal = np.zeros(num_envs, dtype=bool)
        self._renderer: mujoco.Renderer | None = None
        self._needs_reset = True

    def _init_indices(self) -> None:
        """Views into ``MjData`` per arm; the generated model's layout is checked so that slicing is valid.

        Bodies are ``[world, (root_i, upper_i, lower_i) for each arm, goal_i ...]``, joints/dofs are 4 per arm
        in the order shoulder x, shoulder z, elbow x, elbow z, and mocap bodies and sites are one per arm.
        """
        m, d, n = self.model, self.data, self.num_envs

        def ids(kind: mujoco.mjtObj, fmt: str) -> np.ndarray:
            return np.array([mujoco.mj_name2id(m, kind, fmt.format(i)) for i in range(n)], dtype=np.intp)

        bodies = np.arange(1, 3 * n + 1).reshape(n, 3)
        joints = np.stack(
            [ids(mujoco.mjtObj.mjOBJ_JOINT, f) for f in ("shoulder_x{}", "shoulder_z{}", "elbow_x{}", "elbow_z{}")],
            axis=1,
        )
        self._upper = ids(mujoco.mjtObj.mjOBJ_BODY, "upper{}")
        self._lower = ids(mujoco.mjtObj.mjOBJ_BODY, "lower{}")
        self._goal_geom = ids(mujoco.mjtObj.mjOBJ_GEOM, "goal{}")
        layout_ok = (
            np.array_equal(bodies[:, 1], self._upper)
            and np.array_equal(bodies[:, 2], self._lower)
            and np.array_equal(m.body_rootid[bodies], np.repeat(bodies[:, :1], 3, axis=1))
            and np.array_equal(joints.ravel(), np.arange(4 * n))
            and np.array_equal(m.jnt_dofadr[joints].ravel(), np.arange(4 * n))
            and np.array_equal(m.body_mocapid[ids(mujoco.mjtObj.mjOBJ_BODY, "goal{}")], np.arange(n))
            and np.array_equal(ids(mujoco.mjtObj.mjOBJ_SITE, "hand{}"), np.arange(n))
        )
        if not layout_ok:
            raise RuntimeError("unexpected layout of the generated Reacher model")
        self._qvel = d.qvel.reshape(n, 4)
        self._xaxis = d.xaxis.reshape(n, 4, 3)
        self._hand_pos = d.site_xpos
        self._torque = d.xfrc_applied[1 : 3 * n + 1].reshape(n, 3, 6)[:, 1:, 3:]
        self._w_body = np.zeros((n, 2, 3))
        self._mocap_pos = d.mocap_pos
        self._mocap_pos[:, 1] = self.offsets[:, 1] + GOAL_HEIGHT
        self._mocap_x = self._mocap_pos[:, 0]
        self._mocap_z = self._mocap_pos[:, 2]
        self._root_x = self.offsets[:, 0].copy()
        self._root_z = self.offsets[:, 2].copy()

    # ------------------------------------------------------------------ reset / goal
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset all arms to the hanging pose with fresh goals (spec §7 "Reset", §8.7)."""
        super().reset(seed=seed, options=options)
        self._reset_arms()
        return self._observe(), {}

    def _reset_arms(self) -> None:
        d, rng = self.data, self.np_random
        d.qpos[:] = 0.0
        d.qvel[:] = 0.0
        d.qacc_warmstart[:] = 0.0
        d.xfrc_applied[:] = 0.0
        d.time = 0.0
        self._theta = rng.integers(0, 360, size=self.num_envs).astype(np.float64)
        self._speed = rng.uniform(-1.0, 1.0, size=self.num_envs) * self.goal_speed
        self._place_goals()
        self._steps = 0
        mujoco.mj_kinematics(self.model, d)
        mujoco.mj_camlight(self.model, d)  # the camera pose too: a frame rendered right after reset uses it
        self._in_goal = self._hand_in_goal()
        self._needs_reset = False

    def _goal_local(self) -> np.ndarray:
        """Goal position relative to the arm root: (8 sin θ, −1, 8 cos θ), θ in degrees (spec §5)."""
        rad = np.deg2rad(self._theta)
        out = np.empty((self.num_envs, 3))
        out[:, 0] = GOAL_RADIUS * np.sin(rad)
        out[:, 1] = GOAL_HEIGHT
        out[:, 2] = GOAL_RADIUS * np.cos(rad)
        return out

    def _place_goals(self) -> None:
        rad = self._theta * (np.pi / 180.0)
        self._mocap_x[:] = self._root_x + GOAL_RADIUS * np.sin(rad)
        self._mocap_z[:] = self._root_z + GOAL_RADIUS * np.cos(rad)

    def _hand_in_goal(self) -> np.ndarray:
        diff = self._hand_pos - self._mocap_pos
        return np.einsum("ij,ij->i", diff, diff) < self._reward_dist2

    # ------------------------------------------------------------------ dynamics
    def _damp_and_cap(self) -> None:
        """Angular drag and the 7 rad/s per-body cap (see class docstring); needs fresh ``xaxis``."""
        qv, ax, wb = self._qvel, self._xaxis, self._w_body
        qv *= 1.0 - TIMESTEP * ANGULAR_DRAG
        w = ax * qv[:, :, None]
        np.add(w[:, 0], w[:, 1], out=wb[:, 0])
        np.add(w[:, 2], w[:, 3], out=wb[:, 1])
        wb[:, 1] += wb[:, 0]
        n2 = np.einsum("ijk,ijk->ij", wb, wb)
        if n2.max() <= _MAX_W2:
            return
        over = np.flatnonzero(n2.max(axis=1) > _MAX_W2)
        q, ax_elbow, w_sel = qv[over], ax[over, 2:], wb[over]
        scale = MAX_ANGULAR_SPEED / np.sqrt(np.maximum(n2[over], _MAX_W2))
        w_sel *= scale[:, :, None]
        q[:, :2] *= scale[:, :1]
        q[:, 2:] = np.einsum("ijk,ik->ij", ax_elbow, w_sel[:, 1] - w_sel[:, 0])
        w_lower = w_sel[:, 0] + np.einsum("ij,ijk->ik", q[:, 2:], ax_elbow)
        n2_lower = np.einsum("ij,ij->i", w_lower, w_lower)
        q *= (MAX_ANGULAR_SPEED / np.sqrt(np.maximum(n2_lower, _MAX_W2)))[:, None]
        qv[over] = q

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One decision: 4 physics steps with the action held (spec §3, §6, §8.5)."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        m, d = self.model, self.data
        a = np.clip(np.asarray(actions, dtype=np.float64).reshape(self.num_envs, ACT_DIM), -1.0, 1.0)
        a = a * TORQUE_SCALE
        self._torque[:, :, 0] = a[:, 0::2]
        self._torque[:, :, 2] = a[:, 1::2]

        hits = np.zeros(self.num_envs)
        for _ in range(FRAME_SKIP):
            self._theta += self._speed
            self._place_goals()
            mujoco.mj_step(m, d)
            mujoco.mj_kinematics(m, d)
            self._damp_and_cap()
            self._in_goal = self._hand_in_goal()
            hits += self._in_goal
        rewards = hits * REWARD_PER_PHYSICS_STEP
        self._steps += 1

        obs = self._observe()
        terminated = np.zeros(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        if self._steps >= self.max_episode_steps:
            truncated = np.ones(self.num_envs, dtype=bool)
            info["final_obs"] = obs
            info["_final_obs"] = np.ones(self.num_envs, dtype=bool)
            self._reset_arms()
            obs = self._observe()
        else:
            truncated = np.zeros(self.num_envs, dtype=bool)
        return obs, rewards, terminated, truncated, info

    # ------------------------------------------------------------------ observation
    def body_velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """World angular velocity and world COM linear velocity, ``(N, 2, 3)`` each (upper arm, forearm).

        Same numbers as ``mj_objectVelocity(mjOBJ_BODY, flg_local=0)``: ``cvel`` is the spatial velocity at
        the arm root's subtree COM, shifted to the body COM ``xipos`` (spec §8.6). Runs ``mj_comPos`` and
        ``mj_comVel``, so it needs fresh kinematics.
        """
        m, d, n = self.model, self.data, self.num_envs
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        arms = slice(1, 3 * n + 1)
        cvel = d.cvel[arms].reshape(n, 3, 6)[:, 1:]
        xipos = d.xipos[arms].reshape(n, 3, 3)[:, 1:]
        root_com = d.subtree_com[arms].reshape(n, 3, 3)[:, :1]
        w = cvel[..., :3]
        return w, cvel[..., 3:] + _cross(w, xipos - root_com)

    def _observe(self) -> np.ndarray:
        """The 33 observations of spec §2 for every arm, float32 ``(N, 33)``."""
        d, n = self.data, self.num_envs
        obs = np.empty((n, OBS_DIM), dtype=np.float32)
        w, v = self.body_velocities()
        arms = slice(1, 3 * n + 1)
        xpos = d.xpos[arms].reshape(n, 3, 3)
        xquat = d.xquat[arms].reshape(n, 3, 4)
        obs[:, 0:3] = xpos[:, 1] - self.offsets
        obs[:, 3:6] = xquat[:, 1, 1:]
        obs[:, 6] = xquat[:, 1, 0]
        obs[:, 7:10] = w[:, 0]
        obs[:, 10:13] = v[:, 0]
        obs[:, 13:16] = xpos[:, 2] - self.offsets
        obs[:, 16:19] = xquat[:, 2, 1:]
        obs[:, 19] = xquat[:, 2, 0]
        obs[:, 20:23] = w[:, 1]
        obs[:, 23:26] = v[:, 1]
        obs[:, 26:29] = self._goal_local()
        obs[:, 29:32] = (0.0, 1.0, 0.0)
        obs[:, 32] = self._speed
        return obs

    # ------------------------------------------------------------------ rendering
    def render(self) -> np.ndarray | None:
        """An ``(height, width, 3)`` uint8 frame of all arms from the ``overview`` camera (goals green when hit)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without render_mode; pass render_mode='rgb_array'")
            return None
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.model, height=self.height, width=self.width)
        self.model.geom_rgba[self._goal_geom] = np.where(self._in_goal[:, None], _GOAL_ON_RGBA, _GOAL_OFF_RGBA)
        self._renderer.update_scene(self.data, camera="overview")
        return self._renderer.render().copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Free the renderer (its GL context)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


class UnityReacherEnv(gymnasium.Env):
    """Single-arm Reacher (``gymnasium.make("polyak/UnityReacher-v0")``): the vector env with one arm.

    Returns ``truncated=True`` (never ``terminated``) after exactly 1000 decisions (spec §6) with the final
    observation, without needing gymnasium's ``TimeLimit``.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": ["rgb_array"],
        "render_fps": UnityReacherVectorEnv.metadata["render_fps"],
    }

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        self._venv = UnityReacherVectorEnv(num_envs=1, render_mode=render_mode, **kwargs)
        self.render_mode = render_mode
        self.observation_space = self._venv.single_observation_space
        self.action_space = self._venv.single_action_space

    @property
    def vector_env(self) -> UnityReacherVectorEnv:
        """The underlying one-arm vector env (model, data, ...)."""
        return self._venv

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._venv.np_random = self.np_random
        obs, info = self._venv.reset(options=options)
        return obs[0], info

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self._venv.step(np.asarray(action).reshape(1, ACT_DIM))
        if truncated[0]:
            return info["final_obs"][0], float(rewards[0]), False, True, {}
        return obs[0], float(rewards[0]), bool(terminated[0]), False, {}

    def render(self) -> np.ndarray | None:
        return self._venv.render()

    def close(self) -> None:
        self._venv.close()
        super().close()
