"""Dependencies point down: every ``polyak`` module sits in a layer and imports only from its own layer or lower
ones (docs/architecture.md). A new module must be given a layer here; an upward import fails this test, which is
shown failing on a deliberate one below."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src"

# Lowest first. A name stands for the module and, for a package, everything under it (the longest name wins).
LAYERS: tuple[tuple[str, ...], ...] = (
    # pure pieces: no polyak imports beyond this layer; `polyak` itself only for `__version__` (a lazy facade)
    ("polyak", "polyak.errors", "polyak.seeding", "polyak.types", "polyak.losses", "polyak.lap", "polyak.layers",
     "polyak.scores", "polyak.schedule", "polyak.td7", "polyak.spaces", "polyak.safe_files", "polyak.runlock",
     "polyak.evaluation", "polyak.replay.nstep", "polyak.replay.sumtree", "polyak.replay.storage", "polyak.envs",
     "polyak.wandb_sink", "polyak.distributed.apex_pace", "polyak.distributed.grid",
     "polyak.distributed.ray_runtime", "polyak.threads", "polyak.user_modules"),
    # configuration: the dataclasses, gin at the edge of them, their JSON form, the device
    ("polyak.config", "polyak.ginconf", "polyak.config_json", "polyak.device", "polyak.model_card",
     "polyak.checkpoint"),
    # building blocks of an agent and a run
    ("polyak.networks", "polyak.sale", "polyak.ensemble", "polyak.modes", "polyak.optim", "polyak.noise",
     "polyak.averaging", "polyak.normalization", "polyak.replay", "polyak.logger", "polyak.evaluator", "polyak.policy",
     "polyak.explorer"),
    # one module per learning algorithm
    ("polyak.algorithms",),
    # the parts a training loop composes, and loading a trained policy
    ("polyak.agent", "polyak.collector", "polyak.checkpointer", "polyak.run_dir", "polyak.progress",
     "polyak.playback"),
    # the single-process loop and the tools on runs
    ("polyak.trainer", "polyak.exporter", "polyak.onnx_export", "polyak.record", "polyak.plot", "polyak.upgrade",
     "polyak.planning", "polyak.run_parts"),
    # optional Ray: Ape-X and sweeps
    ("polyak.distributed",),
    # entry points
    ("polyak.api", "polyak.cli"),
)
FACADE = "polyak"  # the package root re-exports train/load lazily; its own imports are not checked


def layer_of(module: str) -> int:
    """The layer of ``module``: that of the longest listed name it is or lies under (the root only itself)."""
    best, found = -1, None
    for index, names in enumerate(LAYERS):
        for name in names:
            covers = module == name or (name != FACADE and module.startswith(name + "."))
            if covers and len(name) > best:
                best, found = len(name), index
    if found is None:
        raise LookupError(f"{module} has no layer: add it to LAYERS in {Path(__file__).name}")
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def polyak_imports(source: str, module: str) -> set[str]:
    """Every ``polyak`` module ``source`` imports, at any depth (function-level imports count)."""
    package = module if module.count(".") == 0 else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "polyak")
        elif isinstance(node, ast.ImportFrom):
            name = node.module or ""
            if node.level:  # relative: resolve against the importing package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, name] if name else base)
            if name.split(".")[0] == "polyak":
                found.add(name)
    return found


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``A -> B`` for every import of ``graph`` whose target sits in a higher layer than its importer."""
    return sorted(f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
                  for module, targets in graph.items() if module != FACADE
                  for target in targets if layer_of(target) > layer_of(module))


def source_graph() -> dict[str, set[str]]:
    return {module_name(path): polyak_imports(path.read_text(), module_name(path))
            for path in sorted((SOURCE / "polyak").rglob("*.py"))}


def test_every_module_has_a_layer():
    missing = []
    for module in source_graph():
        try:
            layer_of(module)
        except LookupError as error:
            missing.append(str(error))
    assert not missing, "\n".join(missing)


def test_no_module_imports_a_layer_above_it():
    assert upward_imports(source_graph()) == []


def test_the_check_fails_on_a_deliberate_upward_import():
    graph = source_graph()
    graph["polyak.config_json"] = graph["polyak.config_json"] | polyak_imports(
        "from polyak.distributed.apex_config import ApexConfig\n", "polyak.config_json")
    graph["polyak.algorithms.ddpg"] = {"polyak.trainer"}
    assert upward_imports(graph) == [
        "polyak.algorithms.ddpg (layer 3) imports polyak.trainer (layer 5)",
        "polyak.config_json (layer 1) imports polyak.distributed.apex_config (layer 6)",
    ]


def test_an_unlisted_module_is_named():
    with pytest.raises(LookupError, match=r"polyak\.brand_new has no layer"):
        layer_of("polyak.brand_new")
