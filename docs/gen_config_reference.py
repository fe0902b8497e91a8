"""The configuration reference page, generated from the gin-configurable dataclasses of ``polyak.config``, so it
never goes stale: every class with its docstring, every field with its type and default.

    python docs/gen_config_reference.py [OUT]   # print the page, or write it to OUT

``make docs`` builds it into the site (``docs/hooks.py``); it is never committed.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import sys
from pathlib import Path
from typing import Any

PAGE = "configuration-reference.md"
FIRST = ("TrainerConfig", "AgentConfig", "NetworkConfig", "ReplayConfig", "NoiseConfig")  # the rest in source order
_ROLE = re.compile(r":(?:class|func|mod|meth|attr|data):`~?(?:[\w.]+\.)?([\w]+)`")


def config_classes() -> list[type]:
    """Every dataclass of ``polyak.config`` that gin can bind (``@gin.configurable``), most used first."""
    import gin.config

    from polyak import config

    classes = [value for value in vars(config).values() if isinstance(value, type) and dataclasses.is_dataclass(value)
               and value.__module__ == config.__name__
               and gin.config._REGISTRY.get_match(f"{config.__name__}.{value.__name__}") is not None]
    classes.sort(key=lambda cls: inspect.getsourcelines(cls)[1])
    return sorted(classes, key=lambda cls: FIRST.index(cls.__name__) if cls.__name__ in FIRST else len(FIRST))


def markdown_of_docstring(text: str) -> str:
    """A reStructuredText-flavoured docstring as Markdown: ````x```` and Sphinx roles become code spans."""
    text = _ROLE.sub(r"`\1`", inspect.cleandoc(text))
    return text.replace("``", "`")


def _default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        value: Any = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "(required)"
    if isinstance(value, enum.Enum):
        value = value.value
    return f"`{value!r}`"


def _type(field: dataclasses.Field) -> str:
    """The annotation as written, with an enum's choices."""
    from polyak import config

    annotation = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", str(field.type))
    text = " or ".join(f"`{part.strip()}`" for part in annotation.split("|"))  # no pipe in a table cell
    kind = getattr(config, annotation, None)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        text += ": " + ", ".join(f"`{member.value!r}`" for member in kind)
    return text


def reference() -> str:
    """The whole page, in Markdown."""
    lines = [
        "# Configuration reference",
        "",
        "Every setting polyak reads, by class: bind one in a gin file (`AgentConfig.gamma = 0.98`) or on the command "
        "line (`--gin-param 'AgentConfig.gamma = 0.98'`). `NetworkConfig` is bound per network with the `actor/` and "
        "`critic/` scopes (an unscoped binding applies to both). A value outside its range is refused in one line "
        "before anything runs. [Configuration](configuration.md) explains how configs are put together.",
        "",
        "This page is generated from the dataclasses in `src/polyak/config.py` by `docs/gen_config_reference.py` "
        "each time the site is built.",
        "",
    ]
    classes = config_classes()
    lines += ["Classes: " + ", ".join(f"[`{cls.__name__}`](#{cls.__name__.lower()})" for cls in classes) + ".", ""]
    for cls in classes:
        lines += [f"## {cls.__name__}", ""]
        if cls.__doc__:
            lines += [markdown_of_docstring(cls.__doc__), ""]
        lines += ["| field | type | default |", "| --- | --- | --- |"]
        for field in dataclasses.fields(cls):
            lines.append(f"| `{cls.__name__}.{field.name}` | {_type(field)} | {_default(field)} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    page = reference()
    if argv:
        Path(argv[0]).write_text(page)
    else:
        print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
