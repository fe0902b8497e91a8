"""Render a policy's episode to a GIF or MP4, headless (MuJoCo EGL) through imageio.

Frames come from the first env of the vector env. ``width`` and ``height`` reach envs whose constructor
takes them (MuJoCo envs, the Unity Reacher); others (classic control, PyBullet) render at their own size.
Each frame shows the state the policy acts on, the reset state first. A MuJoCo model with a camera named
``track`` (Gymnasium's locomotion tasks: HalfCheetah, Hopper, Walker2d, Ant, Humanoid) is filmed through it, so the
body stays in the frame as it runs: Gymnasium 1.4 renders them from a free camera by default, which they run out of.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from polyak.config import TrainerConfig
from polyak.envs.factory import resolve_env_id
from polyak.envs.gl_backend import backend_problem
from polyak.errors import EnvError, PolyakError
from polyak.evaluation import time_limit
from polyak.policy import Policy

FORMATS = (".gif", ".mp4")
DEFAULT_NAME = "video.mp4"
DEFAULT_WIDTH, DEFAULT_HEIGHT = 480, 360  # pixels, for envs that take a size
EPISODE_CAP = TrainerConfig.eval_max_episode_steps  # one recorded episode's steps on an env without a time limit
TRACKING_CAMERA = "track"  # the camera Gymnasium's locomotion models define to follow the body


def default_video_path(run: str | Path | None) -> Path:
    """``polyak record``'s ``--out`` when none is given: ``video.mp4`` in the run directory when ``run`` is one,
    else (a checkpoint, an exported agent, the pretrained agent) in the current directory."""
    from polyak.run_dir import RunDir

    if run is not None and Path(run).is_dir() and RunDir(run).holds_a_run():
        return Path(run) / DEFAULT_NAME
    return Path(DEFAULT_NAME)


def accepts_size(env_id: str) -> bool:
    """Whether the env's constructor takes ``width`` and ``height`` (or any keyword arguments)."""
    try:
        spec = gym.spec(resolve_env_id(env_id))
        creator = spec.entry_point
        if isinstance(creator, str):
            creator = gym.envs.registration.load_env_creator(creator)
        parameters = inspect.signature(creator).parameters.values()
    except (gym.error.Error, TypeError, ValueError, ImportError, AttributeError):
        return False
    names = {p.name for p in parameters}
    return {"width", "height"} <= names or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def has_tracking_camera(env: gym.vector.VectorEnv) -> bool:
    """Whether the first env is a MuJoCo env whose model has a camera named ``TRACKING_CAMERA``."""
    envs = getattr(env, "envs", None)
    model = getattr(envs[0].unwrapped, "model", None) if envs else None
    if model is None or not hasattr(model, "ncam"):
        return False
    import mujoco

    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, TRACKING_CAMERA) != -1


def first_frame(rendered: Any) -> np.ndarray:
    """One ``(height, width, 3)`` frame from what a vector env's ``render`` returns (a frame or one per env)."""
    if isinstance(rendered, tuple | list):
        rendered = rendered[0]
    frame = np.asarray(rendered)
    if frame.ndim == 4:
        frame = frame[0]
    if frame.ndim != 3:
        raise PolyakError(f"the env rendered an array of shape {frame.shape}, not an RGB frame")
    return frame


def record_episode(policy: Policy, out: Path, steps: int | None = None, every: int = 1, fps: float = 25.0,
                   seed: int = 0, width: int | None = None, height: int | None = None) -> int:
    """Run the policy (no exploration) for ``steps`` env steps (default: one episode, cut at
    :data:`EPISODE_CAP` steps on an env without a time limit of its own) and write every ``every``-th frame.

    An MP4 is encoded frame by frame as the episode runs, so its memory does not grow with the episode; a GIF keeps
    each frame as a palette image (a byte a pixel) and is written at the end. The video goes to a file beside
    ``out`` first and replaces ``out`` only once it is whole: a render that fails leaves an earlier video at ``out``
    as it was.
    Returns the number of frames written.
    """
    if out.suffix.lower() not in FORMATS:
        raise PolyakError(f"--out must end in {' or '.join(FORMATS)}, got {out.name!r}")
    if out.is_dir():
        raise PolyakError(f"--out {out} is a directory; give a file name such as {out / DEFAULT_NAME}")
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame (classic control) without a display

    size = {}
    if accepts_size(policy.env_id):
        size = {"width": DEFAULT_WIDTH if width is None else width,
                "height": DEFAULT_HEIGHT if height is None else height}
    elif width is not None or height is not None:
        print(f"polyak: warning: {policy.env_id} renders frames at a size of its own; --width and --height are "
              "ignored", file=sys.stderr, flush=True)
    env = policy.make_env(render_mode="rgb_array", **size)  # as its run made it, or one line on what to pass
    if size and has_tracking_camera(env):
        env.close()
        env = policy.make_env(render_mode="rgb_array", camera_name=TRACKING_CAMERA, **size)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.stem}.{os.getpid()}.partial{out.suffix}")  # one per process: no collision
    sink: _Sink = _Mp4Sink(partial, fps) if out.suffix.lower() == ".mp4" else _GifSink(partial, fps)
    try:
        try:
            obs, _ = env.reset(seed=seed)
            for step in range((time_limit(env) or EPISODE_CAP) if steps is None else steps):
                if step % every == 0:
                    sink.add(first_frame(env.render()))
                obs, _, terminated, truncated, _ = env.step(policy(obs))
                if steps is None and (np.any(terminated) or np.any(truncated)):
                    break
        except PolyakError:
            raise
        except gym.error.DependencyNotInstalled as error:
            raise EnvError(f"rendering {policy.env_id} needs a package that is not installed: {error}") from None
        except Exception as error:  # GL context creation failures surface as several exception types
            if (problem := backend_problem(error)) is not None:
                raise EnvError(problem) from None
            raise PolyakError(f"rendering failed ({type(error).__name__}: {error}); headless rendering needs "
                              "MUJOCO_GL=egl and the EGL libraries (libegl1)") from None
        finally:
            env.close()
        sink.deliver(out)
    finally:
        sink.abandon()
    return sink.frames


class _Sink:
    """Frames into a video at ``path`` (a file beside the one asked for), moved to its place by :meth:`deliver`;
    :meth:`abandon` removes whatever did not get there. A failed write is one line naming the file."""

    def __init__(self, path: Path, fps: float) -> None:
        self.path, self.fps, self.frames = path, fps, 0
        self._delivered = False

    def add(self, frame: np.ndarray) -> None:
        with self._writing():
            self._add(frame)
        self.frames += 1

    def deliver(self, out: Path) -> None:
        """Finish the video and move it to ``out``."""
        if not self.frames:
            raise PolyakError("the episode gave no frame to write")
        with self._writing():
            self._finish()
        try:
            os.replace(self.path, out)
        except OSError as error:
            raise PolyakError(f"cannot write the video to {out}: {error.strerror or error}") from None
        self._delivered = True

    def abandon(self) -> None:
        """After a failure (a no-op after :meth:`deliver`): stop writing and remove the partial file."""
        if self._delivered:
            return
        try:
            with contextlib.suppress(Exception):  # the failure being reported is the one that matters
                self._stop()
        finally:  # a second Ctrl-C while the encoder stops must not leave the partial file
            self.path.unlink(missing_ok=True)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except OSError as error:  # a full disk or a missing permission, not a rendering problem
            why = error.strerror or str(error).strip().splitlines()[0]  # imageio-ffmpeg appends ffmpeg's command
            raise PolyakError(f"cannot write the video to {self.path.parent}: {why}") from None

    def _add(self, frame: np.ndarray) -> None:
        raise NotImplementedError

    def _finish(self) -> None:
        raise NotImplementedError

    def _stop(self) -> None:
        pass


class _Mp4Sink(_Sink):
    """Encodes each frame as it comes (imageio's ffmpeg writer): memory stays that of one frame."""

    def __init__(self, path: Path, fps: float) -> None:
        super().__init__(path, fps)
        self._writer: Any = None

    def _add(self, frame: np.ndarray) -> None:
        if self._writer is None:  # opened on the first frame, so a failed env start leaves no file
            import imageio

            self._writer = imageio.get_writer(self.path, fps=self.fps, codec="libx264", macro_block_size=2,
                                              ffmpeg_log_level="error")  # its errors only: the cause of ours
        self._writer.append_data(frame)

    def _finish(self) -> None:
        writer, self._writer = self._writer, None
        writer.close()

    def _stop(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


class _GifSink(_Sink):
    """Keeps the frames, each turned into its 256-colour palette image as it comes (what Pillow's GIF writer would
    do to it at the end: one byte a pixel instead of three), and writes them when the episode ends."""

    def __init__(self, path: Path, fps: float) -> None:
        super().__init__(path, fps)
        self._frames: list[Any] = []

    def _add(self, frame: np.ndarray) -> None:
        from PIL import Image

        self._frames.append(Image.fromarray(np.ascontiguousarray(frame)).convert("P", palette=Image.Palette.ADAPTIVE))

    def _finish(self) -> None:
        first, *rest = self._frames
        first.save(self.path, format="GIF", save_all=True, append_images=rest, duration=1000.0 / self.fps, loop=0)
