"""A hand-written Reacher controller that uses only the 33-number observation (spec §2).

It estimates the elbow and hand from the forearm capsule centre and orientation (the hand is 3 units from the
forearm centre along its long axis, spec §7), then computes Cartesian PD forces on the hand (towards the goal,
with goal-velocity feed-forward) and on the elbow (towards an "elbow-up" inverse-kinematics solution), maps
them with gravity compensation to generalized forces on the four hinge axes, and solves for the world-frame
body torques ``(τx, 0, τz)`` that produce them (spec §3). Vectorised over arms.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ScriptedReacherController"]

_SHOULDER = np.array([0.0, 0.02, 0.0])
_UPPER_LEN = 7.02
_FOREARM_LEN = 6.0
_HALF_FOREARM = 3.0
_FOREARM_COM = 1.4545
_GRAVITY = np.array([0.0, -9.81, 0.0])
_DT_PHYSICS = 0.02
_TORQUE_SCALE = 150.0


def _rotation_columns(q_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(N, 3, 3)`` from quaternions in Unity's (x, y, z, w) order."""
    q = q_xyzw / np.linalg.norm(q_xyzw, axis=1, keepdims=True)
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    r = np.empty((q.shape[0], 3, 3))
    r[:, 0, 0] = 1 - 2 * (y * y + z * z)
    r[:, 0, 1] = 2 * (x * y - z * w)
    r[:, 0, 2] = 2 * (x * z + y * w)
    r[:, 1, 0] = 2 * (x * y + z * w)
    r[:, 1, 1] = 1 - 2 * (x * x + z * z)
    r[:, 1, 2] = 2 * (y * z - x * w)
    r[:, 2, 0] = 2 * (x * z - y * w)
    r[:, 2, 1] = 2 * (y * z + x * w)
    r[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)


def _solve_xz(axes: tuple[np.ndarray, np.ndarray], rhs: np.ndarray, damping: float) -> np.ndarray:
    """World torques ``(N, 3)`` with zero y component such that ``axes[k]·τ ≈ rhs[:, k]`` (damped LS)."""
    m = np.stack([axes[0][:, [0, 2]], axes[1][:, [0, 2]]], axis=1)
    mt = np.swapaxes(m, 1, 2)
    lhs = mt @ m + damping * np.eye(2)
    sol = np.linalg.solve(lhs, (mt @ rhs[:, :, None]))[:, :, 0]
    out = np.zeros((rhs.shape[0], 3))
    out[:, 0] = sol[:, 0]
    out[:, 2] = sol[:, 1]
    return out


class ScriptedReacherController:
    """Observation-only tracking controller for the Reacher (``__call__(obs (N, 33)) -> actions (N, 4)``).

    The hinge-axis directions follow the environment's universal joints (spec §7 "Joints", §8.3): shoulder
    axes world x and the upper arm's local z; elbow axes the upper arm's local x and the forearm's local z.
    """

    def __init__(
        self,
        kp_hand: float = 30.0,
        kd_hand: float = 12.0,
        kp_elbow: float = 15.0,
        kd_elbow: float = 6.0,
        lead_steps: float = 4.0,
        damping: float = 0.02,
    ) -> None:
        self.kp_hand = kp_hand
        self.kd_hand = kd_hand
        self.kp_elbow = kp_elbow
        self.kd_elbow = kd_elbow
        self.lead_steps = lead_steps
        self.damping = damping

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float64).reshape(-1, 33)
        pos_a, pos_b = obs[:, 0:3], obs[:, 13:16]
        rot_a, rot_b = _rotation_columns(obs[:, 3:7]), _rotation_columns(obs[:, 16:20])
        w_a, w_b, v_b = obs[:, 7:10], obs[:, 20:23], obs[:, 23:26]
        goal, speed = obs[:, 26:29], obs[:, 32]

        u_b = rot_b[:, :, 1]
        hand = pos_b + _HALF_FOREARM * u_b
        elbow = pos_b - _HALF_FOREARM * u_b
        com_b = pos_b + _FOREARM_COM * u_b
        v_hand = v_b + np.cross(w_b, hand - com_b)
        v_elbow = np.cross(w_a, elbow - _SHOULDER)

        theta = np.arctan2(goal[:, 0], goal[:, 2])
        rate = np.deg2rad(speed) / _DT_PHYSICS
        theta_t = theta + np.deg2rad(speed) * self.lead_steps
        radius = np.hypot(goal[:, 0], goal[:, 2])
        target = np.stack([radius * np.sin(theta_t), goal[:, 1], radius * np.cos(theta_t)], axis=1)
        v_target = np.stack([radius * np.cos(theta_t), np.zeros_like(theta), -radius * np.sin(theta_t)], axis=1)
        v_target *= rate[:, None]

        elbow_t = self._elbow_up(target)
        f_hand = self.kp_hand * (target - hand) + self.kd_hand * (v_target - v_hand)
        f_elbow = self.kp_elbow * (elbow_t - elbow) - self.kd_elbow * v_elbow

        grav_b = np.cross(com_b - elbow, _GRAVITY)
        t_elbow = np.cross(hand - elbow, f_hand) - grav_b
        t_shoulder = (
            np.cross(hand - _SHOULDER, f_hand)
            + np.cross(elbow - _SHOULDER, f_elbow)
            - np.cross(pos_a - _SHOULDER, _GRAVITY)
            - np.cross(com_b - _SHOULDER, _GRAVITY)
        )

        a0 = np.broadcast_to(np.array([1.0, 0.0, 0.0]), pos_a.shape)
        a1, a2, a3 = rot_a[:, :, 2], rot_a[:, :, 0], rot_b[:, :, 2]
        tau_b = _solve_xz((a2, a3), np.stack([_dot(a2, t_elbow), _dot(a3, t_elbow)], 1), self.damping)
        rest = t_shoulder - tau_b
        tau_a = _solve_xz((a0, a1), np.stack([_dot(a0, rest), _dot(a1, rest)], 1), self.damping)

        actions = np.stack([tau_a[:, 0], tau_a[:, 2], tau_b[:, 0], tau_b[:, 2]], axis=1) / _TORQUE_SCALE
        return np.clip(actions, -1.0, 1.0).astype(np.float32)

    @staticmethod
    def _elbow_up(target: np.ndarray) -> np.ndarray:
        """Highest elbow position that places the hand on ``target`` (two-link IK)."""
        d = target - _SHOULDER
        dist = np.clip(np.linalg.norm(d, axis=1), _UPPER_LEN - _FOREARM_LEN + 0.1, _UPPER_LEN + _FOREARM_LEN - 0.1)
        n = _unit(d)
        along = (_UPPER_LEN**2 - _FOREARM_LEN**2 + dist**2) / (2 * dist)
        radius = np.sqrt(np.maximum(_UPPER_LEN**2 - along**2, 0.0))
        up = np.array([0.0, 1.0, 0.0])
        perp = _unit(up - n * (n @ up)[:, None])
        return _SHOULDER + n * along[:, None] + perp * radius[:, None]
