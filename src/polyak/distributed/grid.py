"""What a sweep runs: seed ranges, ``--grid`` bindings and their product as trials. Pure Python (no ray)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from polyak.errors import ConfigError

_BINDING_NAME = re.compile(r"^([A-Za-z_][\w.]*/)*[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_SEEDS_HINT = "a range like 0-4, a list like 0,2,5, or both (0-2,7)"
MAX_SEED = 2**31 - 1


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> [0, 1, 2, 3, 4]; ``"0,2,5"`` and ``"0-2,7"`` work too. Seeds are unique and >= 0."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        found = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not found:
            raise ConfigError(f"--seeds must be {_SEEDS_HINT}, got {text!r}")
        first = int(found.group(1))
        last = int(found.group(2)) if found.group(2) is not None else first
        if last < first:
            raise ConfigError(f"--seeds range {part!r} is empty (the end is below the start)")
        if last > MAX_SEED:
            raise ConfigError(f"--seeds must be below 2^31, got {last}")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds lists a seed twice: {text!r}")
    return seeds


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets, parentheses and quotes."""
    parts, depth, quote, current = [], 0, "", []
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced brackets")
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if depth or quote:
        raise ValueError("unbalanced brackets or quotes")
    parts.append("".join(current))
    return [p.strip() for p in parts]


def parse_grid(text: str) -> tuple[str, list[str]]:
    """``"AgentConfig.tau=[0.005, 0.05]"`` -> ("AgentConfig.tau", ["0.005", "0.05"]) (values stay gin text)."""
    hint = f"--grid must look like 'Binding=[value1, value2]', got {text!r}"
    name, sep, values = text.partition("=")
    name, values = name.strip(), values.strip()
    if not sep or not _BINDING_NAME.match(name) or not (values.startswith("[") and values.endswith("]")):
        raise ConfigError(hint)
    try:
        items = _split_top_level(values[1:-1])
    except ValueError as error:
        raise ConfigError(f"{hint} ({error})") from None
    if not items or any(not item for item in items):
        raise ConfigError(f"--grid {name} needs at least one value and no empty ones, got {values}")
    if len(set(items)) != len(items):
        raise ConfigError(f"--grid {name} lists a value twice: {values}")
    return name, items


def _short(name: str, value: str) -> str:
    """A readable, file-name-safe label: ``actor/NetworkConfig.lr=1e-4`` -> ``actor.lr=1e-4``."""
    scope, _, binding = name.rpartition("/")
    param = binding.rsplit(".", 1)[-1]
    label = f"{scope.replace('/', '.') + '.' if scope else ''}{param}={value}"
    return re.sub(r"[^\w.=+-]+", "_", label).strip("_")


@dataclass(frozen=True)
class Variant:
    """One point of the grid: its label (a directory-name prefix) and its gin bindings."""

    label: str
    bindings: tuple[str, ...]


def grid_variants(grids: list[str]) -> list[Variant]:
    """The product of every ``--grid`` (a single ``base`` variant without one)."""
    parsed = [parse_grid(text) for text in grids]
    names = [name for name, _ in parsed]
    if len(set(names)) != len(names):
        raise ConfigError("--grid names the same binding twice; put all its values in one list")
    if not parsed:
        return [Variant("base", ())]
    variants = []
    for combo in itertools.product(*(values for _, values in parsed)):
        pairs = list(zip(names, combo, strict=True))
        variants.append(Variant(",".join(_short(n, v) for n, v in pairs),
                                tuple(f"{n} = {v}" for n, v in pairs)))
    return variants
