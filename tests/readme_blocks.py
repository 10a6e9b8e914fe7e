"""The command blocks of the README and of ``docs/*.md`` as a user copies them: one source for
``nox -s demo`` and the tests.

A block is a fenced code block under a heading. :func:`script` returns its lines exactly as written
(a ``console`` block's ``$ `` prompts removed, nothing else), ready for ``bash -e -x -c``. Every helper
reads the README unless it is given another file (``path``), e.g. ``ROOT / "docs" / "registry.md"``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# the languages a user runs; every other fenced block is a file's content (ini, toml) or, without a
# language, an illustration (placeholders to adapt)
RUN_LANGUAGES = ("console", "bash", "python")
OTHER_LANGUAGES = ("", "ini", "toml")


def doc_files() -> list[Path]:
    """The README and every page of the documentation site, in a stable order."""
    return [README, *sorted(DOCS.glob("*.md"))]


def name_of(path: Path) -> str:
    """How a file is named in block names: its path from the repository's root (``docs/learning.md``)."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def section(heading: str, text: str | None = None, path: Path = README) -> str:
    """The text under ``heading`` (a whole heading line), up to the next heading of its level or higher."""
    text = path.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines(keepends=True)
    level = len(heading) - len(heading.lstrip("#"))
    fenced = _fenced(lines)
    start = next((i for i, line in enumerate(lines) if line.rstrip("\n") == heading and not fenced[i]), None)
    if start is None:
        raise LookupError(f"no heading {heading!r} in {name_of(path)}")
    end = len(lines)
    for i in range(start + 1, len(lines)):
        m = re.match(r"(#+) ", lines[i])
        if m and not fenced[i] and len(m.group(1)) <= level:
            end = i
            break
    return "".join(lines[start + 1 : end])


def _fenced(lines: list[str]) -> list[bool]:
    """For each line, whether it is inside a fenced block (a ``# comment`` there is no heading)."""
    inside, marks = False, []
    for line in lines:
        fence = line.startswith("```")
        marks.append(inside or fence)
        inside = inside != fence
    return marks


def headings(text: str) -> list[str]:
    """Every heading line of a Markdown text, outside fenced blocks."""
    lines = text.splitlines()
    return [line for line, fenced in zip(lines, _fenced(lines), strict=True) if not fenced and re.match(r"#+ ", line)]


def blocks(heading: str, text: str | None = None, path: Path = README) -> list[tuple[str, str]]:
    """(language, body) of every fenced block of a section."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(section(heading, text, path))]


def script(body: str, language: str = "console") -> str:
    """The commands of a block, as written: in a console block, the lines that start with ``$ ``."""
    if language != "console":
        return body
    lines = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    return "\n".join(lines) + "\n"


def all_blocks(language: str, text: str | None = None, path: Path = README) -> list[tuple[str, str]]:
    """(heading, body) of every fenced block of ``language`` in one file, in order; a heading that
    holds several gets `` #2``, `` #3``... so that every block has its own name."""
    text = path.read_text(encoding="utf-8") if text is None else text
    found: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    heading = "(top)"
    position = 0
    for match in FENCE.finditer(text):
        for line in text[position : match.start()].splitlines():
            if re.match(r"#+ ", line):
                heading = line
        position = match.end()
        if match.group(1) == language:
            seen[heading] = seen.get(heading, 0) + 1
            found.append((heading if seen[heading] == 1 else f"{heading} #{seen[heading]}", match.group(2)))
    return found


def every_block(language: str, texts: dict[Path, str] | None = None) -> list[tuple[str, str]]:
    """(name, body) of every fenced block of ``language`` in the README and ``docs/*.md``; a name is the
    file and the heading (``docs/services.md # Agents as services #2``). ``texts`` replaces files' text."""
    texts = texts or {}
    files = [*doc_files(), *(p for p in texts if p not in doc_files())]
    return [
        (f"{name_of(path)} {heading}", body)
        for path in files
        for heading, body in all_blocks(language, texts.get(path), path)
    ]


def languages(text: str) -> set[str]:
    """The language of every fenced block of a text (``""`` for a block without one)."""
    return {m.group(1) for m in FENCE.finditer(text)}


QUICK_START = "## Quick start (what `nox -s demo` runs, line by line)"
