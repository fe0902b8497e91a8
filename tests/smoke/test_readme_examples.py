"""Every ```python block of the README and of the docs/ pages runs as written (in a fresh directory, one process
per block)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUNNABLE = "<!-- not runnable -->"  # put on the line before a block that needs a GPU or a cluster


def python_blocks(pages: list[Path] = PAGES) -> list[str]:
    blocks = []
    for page in pages:
        for match in re.finditer(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)```", page.read_text(), re.DOTALL):
            if NOT_RUNNABLE not in match.group("before"):
                blocks.append(match.group("code"))
    return blocks


def test_the_readme_has_python_examples() -> None:
    readme = python_blocks([README])
    assert any("polyak.train" in b for b in readme) and any("polyak.load" in b for b in readme)


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_python_block_runs(index: int, tmp_path: Path) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"), PYTHONWARNINGS="ignore")
    result = subprocess.run([sys.executable, "-c", python_blocks()[index]], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
