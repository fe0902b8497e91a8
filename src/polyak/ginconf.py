"""Gin at the edge: parse files and bindings, build the configs, and word gin's errors as one line."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import difflib
import importlib.util  # noqa: F401  gin's `include` calls importlib.util without importing it (gin-config 0.5)
import io
import logging
import os
import re
import tokenize
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

import gin

from polyak.config import Configs, build_configs
from polyak.errors import ConfigError
from polyak.user_modules import NOT_FOUND_HINT, search_current_directory


def packaged_config(name: str) -> Path:
    """A config file shipped inside the package (``polyak/configs``)."""
    return Path(str(resources.files("polyak") / "configs" / name))


def _configs_root() -> Path:
    return packaged_config("")


def shipped_configs() -> dict[str, Path]:
    """Every shipped config by name: its path under ``configs/`` without ``.gin`` (``suite/hopper_td3``)."""
    root = _configs_root()
    return {p.relative_to(root).with_suffix("").as_posix(): p for p in sorted(root.rglob("*.gin"))}


def describe_config(path: Path) -> str:
    """The first comment line of a config file (its one-line description), or ''."""
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line.strip():
            break
    return ""


def resolve_config(name: str | Path) -> Path:
    """A config file from a path, or a shipped config's name: ``pendulum``, ``pendulum.gin``, ``suite/hopper_td3``
    or ``hopper_td3`` (when only one shipped config has that name)."""
    path = Path(name)
    if path.is_file():
        return path
    if path.is_dir():
        raise ConfigError(f"config {name} is a directory; give a .gin file or a shipped config's name")
    text = str(name).removesuffix(".gin")
    shipped = shipped_configs()
    if text in shipped:
        return shipped[text]
    by_stem = [key for key in shipped if key.rsplit("/", 1)[-1] == text]
    if len(by_stem) == 1:
        return shipped[by_stem[0]]
    if len(by_stem) > 1:
        raise ConfigError(f"config name {str(name)!r} is ambiguous: {', '.join(by_stem)}")
    names = list(dict.fromkeys([*shipped, *(k.rsplit("/", 1)[-1] for k in shipped)]))
    close = difflib.get_close_matches(text, names, n=3)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else " (list them: polyak configs)"
    raise ConfigError(f"config file {name} does not exist and no shipped config has that name{hint}")


def _configurables() -> dict[str, type]:
    from polyak import config

    return {name: getattr(config, name) for name in ("TrainerConfig", "AgentConfig", "NetworkConfig", "ReplayConfig",
                                                     "NoiseConfig", "ApexConfig")}


SB3_NAMES: dict[str, tuple[str, ...]] = {
    "learning_rate": ("actor/NetworkConfig.lr", "critic/NetworkConfig.lr"),
    "lr": ("actor/NetworkConfig.lr", "critic/NetworkConfig.lr"),
    "buffer_size": ("ReplayConfig.capacity",),
    "learning_starts": ("TrainerConfig.start_steps", "ReplayConfig.min_size"),
    "train_freq": ("TrainerConfig.learn_every",),
    "gradient_steps": ("TrainerConfig.learn_steps",),
    "tau": ("AgentConfig.tau",),
    "gamma": ("AgentConfig.gamma",),
    "batch_size": ("AgentConfig.batch_size",),
    "policy_delay": ("AgentConfig.policy_delay",),
    "target_policy_noise": ("AgentConfig.target_policy_noise",),
    "target_noise_clip": ("AgentConfig.target_noise_clip",),
    "total_timesteps": ("TrainerConfig.max_env_steps",),
    "n_envs": ("TrainerConfig.num_envs",),
    "eval_freq": ("TrainerConfig.eval_interval",),
    "n_eval_episodes": ("TrainerConfig.eval_episodes",),
    "net_arch": ("actor/NetworkConfig.hidden_sizes", "critic/NetworkConfig.hidden_sizes"),
    "device": ("AgentConfig.device",),
}
"""Stable-Baselines3's names of common settings and the polyak bindings they correspond to: an error about an
unknown setting with one of these names points at the real binding, and :func:`polyak.train` takes them as
keyword arguments."""


def describe_bindings(bindings: Sequence[str]) -> str:
    """``NetworkConfig.lr (both networks)`` for an actor/critic pair, else the bindings joined with ``and``."""
    names = [b.split("/", 1)[-1] for b in bindings]
    if len(bindings) == 2 and bindings[0].startswith("actor/") and bindings[1].startswith("critic/") \
            and names[0] == names[1]:
        return f"{names[0]} (both networks; actor/{names[0]} or critic/{names[0]} for one)"
    return " and ".join(bindings)


def _suggest(word: str, options: list[str]) -> str:
    if word in SB3_NAMES and word not in options:
        return f"; polyak's setting for {word!r} is {describe_bindings(SB3_NAMES[word])}"
    close = difflib.get_close_matches(word, options, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _unscoped(bindings: Sequence[str], config_text: str = "") -> str | None:
    """The first binding whose name has no configurable (``learning_rate = 1e-3``), which gin would take silently
    and apply nowhere, worded as an error; a gin macro (a name some binding or the config file uses as ``%name``)
    is not one."""
    used = "\n".join([*bindings, config_text])
    for binding in bindings:
        for line in binding.splitlines():
            name, sep, _ = line.partition("=")
            name = name.strip()
            if not sep or not name or name.startswith(("#", "include", "import")) or "." in name:
                continue
            if re.fullmatch(r"[A-Za-z_]\w*", name) and not re.search(rf"%{name}\b", used):
                hint = (f"polyak's setting for it is {describe_bindings(SB3_NAMES[name])}" if name in SB3_NAMES
                        else "write Configurable.setting, e.g. TrainerConfig.max_env_steps = 5000")
                return f"binding {line.strip()!r} names no configurable; {hint}"
    return None


NETWORK_SCOPES = ("actor", "critic")  # the only scopes build_configs reads, and only for NetworkConfig


def _unread_scope() -> str | None:
    """The first parsed binding under a scope polyak never reads (``actr/NetworkConfig.lr``, ``critic/AgentConfig.
    gamma``), which gin would keep and apply nowhere, worded as an error. Gin has no public listing of what was
    parsed, so this reads its parsed-bindings table."""
    for (scope, selector), values in gin.config._CONFIG.items():
        name = selector.rsplit(".", 1)[-1]
        if not scope or selector == "gin.macro" or (name == "NetworkConfig" and scope in NETWORK_SCOPES):
            continue
        binding = f"{scope}/{name}.{next(iter(values), '...')}"
        if name != "NetworkConfig":
            return (f"binding {binding} has a scope, which polyak reads only for NetworkConfig (actor/ or critic/); "
                    f"write {name}.{next(iter(values), '...')}")
        close = difflib.get_close_matches(scope.rsplit("/", 1)[-1], NETWORK_SCOPES, n=1)
        hint = f"; did you mean {close[0]}/?" if close else ""
        return f"binding {binding} has the scope {scope!r}, which polyak never reads: NetworkConfig takes actor/ or " \
               f"critic/ (neither: both networks){hint}"
    return None


def _not_literal(bindings: Sequence[str]) -> str | None:
    """The first binding whose value is not a Python literal (gin's 'malformed node' error)."""
    for binding in bindings:
        name, sep, value = binding.partition("=")
        value = value.strip()
        if not sep or value.startswith(("@", "%")):
            continue
        try:
            ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return f"{name.strip()} = {value}"
    return None


def _balanced(text: str) -> bool:
    """Whether ``text``'s brackets and quotes close (Python's tokenizer reads it to the end)."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except (tokenize.TokenError, SyntaxError):
        return False
    return True


def _gin_message(error: Exception, bindings: Sequence[str] = (), config_file: Path | None = None) -> str:
    """One line for a gin error: what was wrong, where, and a suggestion for a misspelt name."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    first = lines[0]
    if "malformed node or string" in first:
        culprit = _not_literal(bindings)
        where = f" in {culprit!r}" if culprit else ""
        return (f"a value{where} is not a Python literal; put strings in quotes "
                "(TrainerConfig.env_id = 'Pendulum-v1') and write numbers, tuples, lists, dicts, True/False or None")
    unparsed = "Unable to parse value" in first and any(not _balanced(binding) for binding in bindings)
    if unparsed or "EOF in multi-line statement" in first or "unterminated" in first.lower():
        culprit = next((binding for binding in bindings if not _balanced(binding)), None)
        where = f"in the binding {culprit.strip()!r}" if culprit is not None else (
            f"in {config_file}" if config_file is not None else "in a binding or the config file")
        return f"unbalanced brackets or quotes {where}"
    missing = re.search(r"Configurable '(\w+)' doesn't have a parameter named '(\w+)'", first)
    if missing:
        cls = _configurables().get(missing.group(1))
        fields = [f.name for f in dataclasses.fields(cls)] if cls else []
        first = first.rstrip(".") + _suggest(missing.group(2), fields)
    module = re.match(r"No module named '([\w.]+)'", first)
    statement = next((found for line in lines if (found := re.match(r"(?:import|from) ([\w.]+)", line))), None)
    if module and statement:
        missing, imported = module.group(1), statement.group(1)
        if missing == imported.split(".")[0]:
            first = (f"{first}: a gin file's import finds no {missing}.py on the Python path or in the current "
                     f"directory ({os.getcwd()}); {NOT_FOUND_HINT}")
        elif not f"{imported}.".startswith(f"{missing}."):  # found, but something it imports is not installed
            first = f"{first} (needed by {imported}, which a gin file imports): install it"
    unknown = re.search(r"No configurable matching '([\w/.]+)'", first)
    if unknown:
        name = unknown.group(1).rsplit("/", 1)[-1]
        first = first.rstrip(".") + _suggest(name, list(_configurables()))
    at = next((i for i, line in enumerate(lines) if i and line.startswith("In ") and "configurable" not in line), None)
    if at is None:
        return first
    if lines[at].startswith("In bindings string") and at + 1 < len(lines):  # its line numbers count polyak's own
        return f"{first} (in the binding {lines[at + 1]!r})"
    return f"{first} ({lines[at][0].lower() + lines[at][1:]})"


@contextlib.contextmanager
def _quiet_include_search() -> Iterator[None]:
    """Gin logs 'Path not found' for each search location an ``include`` misses before one holds the file."""

    def keep(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Path not found")

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def parse_gin(config_file: Path | None, bindings: Sequence[str]) -> None:
    """Parse a gin file and extra bindings into gin's global config (cleared first).

    Every configurable, ``ApexConfig`` included, is registered by importing :mod:`polyak.config`.
    """
    gin.clear_config()
    search_current_directory()  # for the file's own `import mymodule`, as for `--env mymodule:EnvId`
    files = []
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"config file {config_file} does not exist")
        files.append(str(config_file))
        gin.add_config_file_search_path(str(config_file.resolve().parent))  # `include` beside the file
    unscoped = _unscoped(bindings, config_file.read_text(errors="replace") if config_file is not None else "")
    if unscoped is not None:
        raise ConfigError(unscoped)
    try:
        with _quiet_include_search():
            gin.parse_config_files_and_bindings(files, list(bindings), finalize_config=False)
    except ConfigError:
        raise
    except Exception as error:  # gin raises ValueError, SyntaxError, TokenError, ... for bad text
        raise ConfigError(f"invalid gin config: {_gin_message(error, bindings, config_file)}") from None
    if (unread := _unread_scope()) is not None:
        raise ConfigError(unread)


def build_configs_from_gin() -> Configs:
    try:
        return build_configs()
    except ConfigError as error:
        raise ConfigError(_gin_message(error)) from None



def configs_from_file(config_file: Path, bindings: Sequence[str] = ()) -> Configs:
    """Parse ``config_file`` (and ``bindings``) and build the configs: gin's state stays at this edge."""
    parse_gin(config_file, bindings)
    return build_configs_from_gin()
