"""``polyak record`` encodes an MP4 frame by frame as the episode runs (its memory does not grow with the episode),
and writes the video beside ``--out`` first, so a render that fails leaves an earlier video as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import imageio
import numpy as np
import pytest

from polyak.envs.factory import make_env
from polyak.errors import PolyakError
from polyak.record import record_episode

pytest.importorskip("mujoco")
ENV_ID, ACTION_DIM = "InvertedPendulum-v5", 1


class CountingPolicy:
    """Zero actions; counts its calls and, with ``fail_at``, raises on that call (a render or policy breaking)."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.env_id, self.calls, self.fail_at = ENV_ID, 0, fail_at

    def make_env(self, num_envs: int | None = None, render_mode: str | None = None, **kwargs: Any):
        return make_env(self.env_id, 1, render_mode, **kwargs)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        if self.calls == self.fail_at:
            raise RuntimeError("the policy broke")
        self.calls += 1
        return np.zeros((len(obs), ACTION_DIM), dtype=np.float32)


class KeepingWriter:
    """imageio's writer stand-in: notes how many actions the policy had taken when each frame arrived."""

    def __init__(self, policy: CountingPolicy, path: Path) -> None:
        self.policy, self.path, self.actions_before_frame = policy, path, []

    def append_data(self, frame: np.ndarray) -> None:
        assert frame.shape == (48, 64, 3)
        self.actions_before_frame.append(self.policy.calls)

    def close(self) -> None:
        self.path.write_bytes(b"video")


def test_an_mp4_frame_is_handed_to_the_encoder_before_the_next_step(tmp_path: Path, monkeypatch) -> None:
    policy = CountingPolicy()
    writers: list[KeepingWriter] = []

    def get_writer(path: Any, **_: Any) -> KeepingWriter:
        writers.append(KeepingWriter(policy, Path(path)))
        return writers[-1]

    monkeypatch.setattr(imageio, "get_writer", get_writer)
    assert record_episode(policy, tmp_path / "clip.mp4", steps=7, every=2, width=64, height=48) == 4
    # frames at steps 0, 2, 4, 6: each reaches the encoder when the policy has acted 0, 2, 4 and 6 times
    assert len(writers) == 1 and writers[0].actions_before_frame == [0, 2, 4, 6]
    assert (tmp_path / "clip.mp4").read_bytes() == b"video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


def test_a_real_mp4_holds_the_frames_recorded(tmp_path: Path) -> None:
    out = tmp_path / "clip.mp4"
    assert record_episode(CountingPolicy(), out, steps=5, width=64, height=48) == 5
    with imageio.get_reader(out) as reader:
        frames = [frame for frame in reader]
    assert len(frames) == 5 and frames[0].shape == (48, 64, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_a_failed_render_leaves_the_earlier_video_and_no_partial_file(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"clip{suffix}"
    out.write_bytes(b"the earlier video")
    with pytest.raises(PolyakError, match=r"rendering failed .*the policy broke"):
        record_episode(CountingPolicy(fail_at=3), out, steps=10, width=64, height=48)
    assert out.read_bytes() == b"the earlier video"
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


class InterruptedPolicy(CountingPolicy):
    """Ctrl-C on its fourth action."""

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        if self.calls == 3:
            raise KeyboardInterrupt
        return super().__call__(obs)


class SlowToStopWriter:
    """An encoder that has started its file and is interrupted again (a second Ctrl-C) while it stops."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_bytes(b"half a video")

    def append_data(self, frame: np.ndarray) -> None:
        pass

    def close(self) -> None:
        raise KeyboardInterrupt


def test_a_second_ctrl_c_while_the_encoder_stops_leaves_no_partial_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(imageio, "get_writer", lambda path, **_: SlowToStopWriter(Path(path)))
    out = tmp_path / "clip.mp4"
    out.write_bytes(b"the earlier video")
    with pytest.raises(KeyboardInterrupt):
        record_episode(InterruptedPolicy(), out, steps=10, width=64, height=48)
    assert out.read_bytes() == b"the earlier video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


def test_an_out_that_is_a_directory_is_refused_before_the_episode(tmp_path: Path) -> None:
    (tmp_path / "clip.mp4").mkdir()
    policy = CountingPolicy()
    with pytest.raises(PolyakError, match="is a directory; give a file name such as"):
        record_episode(policy, tmp_path / "clip.mp4", steps=5, width=64, height=48)
    assert policy.calls == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


class FullDiskWriter(SlowToStopWriter):
    def append_data(self, frame: np.ndarray) -> None:
        raise OSError(28, "No space left on device")

    def close(self) -> None:
        pass


def test_a_write_that_fails_is_named_as_such_not_as_a_rendering_problem(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(imageio, "get_writer", lambda path, **_: FullDiskWriter(Path(path)))
    with pytest.raises(PolyakError, match=r"^cannot write the video to .*: No space left on device$"):
        record_episode(CountingPolicy(), tmp_path / "clip.mp4", steps=5, width=64, height=48)
    assert list(tmp_path.iterdir()) == []
