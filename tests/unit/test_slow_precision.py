"""The warning for bfloat16 on a CPU that only emulates it (measured 2 GFLOP/s against 34 in float32)."""

import torch

from polyak import device as learner
from polyak.config import AgentConfig, Precision


def test_bfloat16_without_native_matmul_is_named_and_float32_never_is(monkeypatch):
    bf16, fp32 = AgentConfig(precision=Precision.BFLOAT16), AgentConfig(precision=Precision.FLOAT32)
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    monkeypatch.setattr(learner, "native_bfloat16_matmul", lambda: False)
    assert "precision = 'float32'" in learner.slow_precision(bf16, cpu)
    assert learner.slow_precision(fp32, cpu) is None
    assert learner.slow_precision(bf16, cuda) is None  # GPUs are not this check's business
    monkeypatch.setattr(learner, "native_bfloat16_matmul", lambda: True)
    assert learner.slow_precision(bf16, cpu) is None
    monkeypatch.setattr(learner, "native_bfloat16_matmul", lambda: None)  # unknown: say nothing
    assert learner.slow_precision(bf16, cpu) is None


def test_the_query_answers_a_bool_on_this_torch():
    assert learner.native_bfloat16_matmul() in (True, False)
