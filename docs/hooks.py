"""MkDocs hooks (``hooks:`` in mkdocs.yml) that let the Markdown read the same on GitHub and on the site.

* The home page is README.md, its repository-relative links made relative to docs/ (``docs/guide.md`` ->
  ``guide.md``); the pages' links to ``../README.md`` lead there.
* The configuration reference is generated from the config dataclasses (``gen_config_reference.py``), in place
  of the stand-in ``configuration-reference.md`` the repository keeps for readers on GitHub.
* Repository files outside docs/ that a page links to (benchmark plots, results files) join the site at their
  repository path, and the pages' ``../benchmarks/...`` links point there.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s#]+)((?:#[^)\s]*)?\))")
EXTERNAL = ("http://", "https://", "mailto:")


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_config_reference", DOCS / "gen_config_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repository_file(target: str, base: Path) -> Path | None:
    """The repository file outside docs/ that a link from a page in ``base`` names, if any."""
    if target.startswith(EXTERNAL):
        return None
    path = (base / target).resolve()
    if not path.is_file() or not path.is_relative_to(ROOT) or path.is_relative_to(DOCS) or path == README:
        return None
    return path


def readme_as_index(text: str) -> str:
    """README.md's Markdown with links relative to docs/, where the site's pages live."""

    def relink(match: re.Match[str]) -> str:
        target = match.group(2)
        if target.startswith("docs/"):
            target = target.removeprefix("docs/")
        return match.group(1) + target + match.group(3)

    return LINK.sub(relink, text)


def on_files(files: Files, config: Any) -> Files:
    """Add the home page, the configuration reference and the repository files the pages link to."""
    generator = _generator()
    stand_in = files.get_file_from_path(generator.PAGE)  # the repository's placeholder for the generated page
    if stand_in is not None:
        files.remove(stand_in)
    files.append(File.generated(config, "index.md", content=readme_as_index(README.read_text())))
    files.append(File.generated(config, generator.PAGE, content=generator.reference()))
    pages = [(README, ROOT)] + [(page, page.parent) for page in sorted(DOCS.rglob("*.md"))]
    linked: set[Path] = set()
    for page, base in pages:
        for match in LINK.finditer(page.read_text()):
            if (path := _repository_file(match.group(2), base)) is not None:
                linked.add(path)
    for path in sorted(linked):
        files.append(File.generated(config, path.relative_to(ROOT).as_posix(), abs_src_path=str(path),
                                    inclusion=InclusionLevel.NOT_IN_NAV))  # a results table: linked, not a chapter
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """A docs/ page's links to repository files (``../benchmarks/...``) point at their copies in the site."""
    if page.file.abs_src_path is None or not Path(page.file.abs_src_path).is_relative_to(DOCS):
        return markdown
    base = Path(page.file.abs_src_path).parent

    up = "../" * len(Path(page.file.src_uri).parent.parts)

    def relink(match: re.Match[str]) -> str:
        target = match.group(2)
        if not target.startswith(EXTERNAL) and (base / target).resolve() == README:  # the home page
            return match.group(1) + up + "index.md" + match.group(3)
        path = _repository_file(target, base)
        if path is None:
            return match.group(0)
        return match.group(1) + up + path.relative_to(ROOT).as_posix() + match.group(3)

    return LINK.sub(relink, markdown)
