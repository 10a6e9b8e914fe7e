"""The README's command blocks as a user copies them: one source for ``nox -s demo`` and the tests.

A block is a fenced code block under a heading. :func:`script` returns its lines exactly as written
(a ``console`` block's ``$ `` prompts removed, nothing else), ready for ``bash -e -x -c``.
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def section(heading: str, text: str | None = None) -> str:
    """The text under ``heading`` (a whole heading line), up to the next heading of its level or higher."""
    text = README.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines(keepends=True)
    level = len(heading) - len(heading.lstrip("#"))
    start = next((i for i, line in enumerate(lines) if line.rstrip("\n") == heading), None)
    if start is None:
        raise LookupError(f"no heading {heading!r} in the README")
    end = len(lines)
    for i in range(start + 1, len(lines)):
        m = re.match(r"(#+) ", lines[i])
        if m and len(m.group(1)) <= level:
            end = i
            break
    return "".join(lines[start + 1 : end])


def blocks(heading: str, text: str | None = None) -> list[tuple[str, str]]:
    """(language, body) of every fenced block of a section."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(section(heading, text))]


def script(body: str, language: str = "console") -> str:
    """The commands of a block, as written: in a console block, the lines that start with ``$ ``."""
    if language != "console":
        return body
    lines = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    return "\n".join(lines) + "\n"


def all_blocks(language: str, text: str | None = None) -> list[tuple[str, str]]:
    """(heading, body) of every fenced block of ``language`` in the README, in order; a heading that
    holds several gets `` #2``, `` #3``... so that every block has its own name."""
    text = README.read_text(encoding="utf-8") if text is None else text
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


QUICK_START = "## Quick start (what `nox -s demo` runs, line by line)"
