"""The configuration reference page (docs/gen_config_reference.py) lists every field of every config class, with its
type and default, and each class's docstring: it is generated from the dataclasses, so it cannot go stale."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from pathlib import Path

import pytest

from polyak import config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("gen_config_reference", ROOT / "docs" / "gen_config_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config_classes() -> list[type]:
    """Every dataclass of polyak.config but the bundle of them (``Configs``, built in code, not by gin)."""
    return [value for value in vars(config).values() if isinstance(value, type) and dataclasses.is_dataclass(value)
            and value.__module__ == config.__name__ and value is not config.Configs]


def test_every_config_class_is_on_the_page_once(generator) -> None:
    page = generator.reference()
    classes = _config_classes()
    assert {"TrainerConfig", "AgentConfig", "NetworkConfig", "ReplayConfig", "NoiseConfig", "TD7Config", "SACConfig",
            "ApexConfig"} <= {cls.__name__ for cls in classes}
    for cls in classes:
        assert page.count(f"\n## {cls.__name__}\n") == 1, cls.__name__
    assert [c.__name__ for c in generator.config_classes()] != [] and set(generator.config_classes()) == set(classes)


def test_every_field_is_listed_with_its_type_and_default(generator) -> None:
    rows = {line.split(" | ")[0].strip("| `"): line for line in generator.reference().splitlines()
            if line.startswith("| `")}
    for cls in _config_classes():
        for field in dataclasses.fields(cls):
            row = rows.get(f"{cls.__name__}.{field.name}")
            assert row is not None, f"{cls.__name__}.{field.name} is missing"
            annotation = field.type if isinstance(field.type, str) else field.type.__name__
            for part in annotation.split("|"):
                assert f"`{part.strip()}`" in row, (row, annotation)
            if field.default is not dataclasses.MISSING:
                default = getattr(field.default, "value", field.default)
                assert f"`{default!r}`" in row, (row, default)


def test_each_class_docstring_is_on_the_page(generator) -> None:
    page = generator.reference()
    for cls in _config_classes():
        first = inspect.cleandoc(cls.__doc__).splitlines()[0]
        assert generator.markdown_of_docstring(first) in page, cls.__name__


def test_the_generator_writes_the_page_to_a_file(generator, tmp_path: Path) -> None:
    out = tmp_path / "reference.md"
    assert generator.main([str(out)]) == 0
    assert out.read_text() == generator.reference()
