"""Render a policy's episode to a GIF or MP4, headless (MuJoCo EGL) through imageio."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from polyak.envs import make_env
from polyak.errors import PolyakError
from polyak.playback import Policy

FORMATS = (".gif", ".mp4")


def record_episode(policy: Policy, out: Path, steps: int, every: int = 1, fps: float = 25.0, seed: int = 0,
                   width: int = 480, height: int = 360) -> int:
    """Run the policy (no exploration) for ``steps`` env steps and write every ``every``-th frame.

    Returns the number of frames written.
    """
    if out.suffix.lower() not in FORMATS:
        raise PolyakError(f"--out must end in {' or '.join(FORMATS)}, got {out.name!r}")
    os.environ.setdefault("MUJOCO_GL", "egl")
    import imageio.v3 as iio

    env = make_env(policy.env_id, policy.num_envs, render_mode="rgb_array", width=width, height=height,
                   **policy.env_kwargs)
    frames: list[np.ndarray] = []
    try:
        obs, _ = env.reset(seed=seed)
        for step in range(steps):
            if step % every == 0:
                frames.append(np.asarray(env.render()))
            obs, *_ = env.step(policy(obs))
    except Exception as error:  # GL context creation failures surface as several exception types
        raise PolyakError(f"rendering failed ({type(error).__name__}: {error}); headless rendering needs "
                          "MUJOCO_GL=egl and the EGL libraries (libegl1)") from None
    finally:
        env.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".gif":
        iio.imwrite(out, np.stack(frames), duration=1000.0 / fps, loop=0)
    else:
        _write_mp4(out, frames, fps)
    return len(frames)


def _write_mp4(out: Path, frames: list[np.ndarray], fps: float) -> None:
    import imageio

    with imageio.get_writer(out, fps=fps, codec="libx264", macro_block_size=8) as writer:
        for frame in frames:
            writer.append_data(frame)
