"""A small INI document that keeps comments and layout when edited, and is saved atomically.

``configparser`` drops comments on write; an ``agent.ini`` is edited by people and by tools, so
edits here touch only the lines they change. The file is kept as people write it: a UTF-8 byte
order mark and the line endings (``\n``, ``\r\n`` or ``\r``) survive an edit, lines are counted
as editors count them (``str.splitlines`` would also split at U+2028, form feeds and other
separators), and a symlinked file is written through to its target.
"""

from __future__ import annotations

import os
import re

from ..errors import ConfigError

_SECTION_RE = re.compile(r"^\[\s*([^\]]+?)\s*\]\s*([;#].*)?$")
_KEY_RE = re.compile(r"^([A-Za-z_][\w.\-]*)\s*[=:]\s?(.*)$")
_NEWLINE_RE = re.compile(r"\r\n|\n|\r")
BOM = "\ufeff"


def split_lines(text: str) -> tuple[list[str], str]:
    """Lines as editors count them (``\\n``, ``\\r\\n``, ``\\r``) and the first line ending found."""
    found = _NEWLINE_RE.search(text)
    lines = _NEWLINE_RE.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # the final line ending does not start another line
    return lines, found.group(0) if found else "\n"


class Entry:
    """``key = raw`` at a 1-based ``line`` (the value text has its inline comment removed)."""

    __slots__ = ("key", "raw", "line")

    def __init__(self, key: str, raw: str, line: int):
        self.key, self.raw, self.line = key, raw, line


class Section:
    """``[name]`` at ``line`` and its entries."""

    __slots__ = ("name", "line", "entries")

    def __init__(self, name: str, line: int):
        self.name, self.line = name, line
        self.entries: dict[str, Entry] = {}


class IniDocument:
    """Lines of an INI file plus an index of sections and keys."""

    def __init__(self, text: str = "", path: str | None = None):
        self.path = path
        self.bom = text.startswith(BOM)
        self.lines, self.newline = split_lines(text[1:] if self.bom else text)
        self.sections: dict[str, Section] = {}
        self._parse()

    @classmethod
    def read(cls, path: str) -> IniDocument:
        try:
            with open(path, encoding="utf-8", newline="") as f:  # newline="": keep the line endings
                return cls(f.read(), path)
        except FileNotFoundError:
            raise ConfigError("file not found", path) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read: {exc}", path) from None

    def _parse(self) -> None:
        self.sections = {}
        current: Section | None = None
        for number, text in enumerate(self.lines, start=1):
            text = text.lstrip("\f")  # a form feed (page break) at the start of a line is not indentation
            stripped = text.strip()
            if not stripped or stripped[0] in "#;":
                continue
            if text[0].isspace():
                raise ConfigError("unexpected indented line (values must fit on one line)", self.path, number)
            match = _SECTION_RE.match(stripped)
            if match:
                name = match.group(1)
                if name in self.sections:
                    raise ConfigError(f"duplicate section [{name}]", self.path, number)
                current = self.sections[name] = Section(name, number)
                continue
            match = _KEY_RE.match(stripped)
            if not match:
                raise ConfigError(f"cannot parse line: {stripped!r} (expected 'key = value')", self.path, number)
            if current is None:
                raise ConfigError("setting outside of any [section]", self.path, number)
            key = match.group(1)
            if key in current.entries:
                raise ConfigError(f"duplicate key {key!r} in [{current.name}]", self.path, number)
            current.entries[key] = Entry(key, strip_comment(match.group(2)), number)

    # -- reading ------------------------------------------------------------------------------------
    def get(self, section: str, key: str) -> Entry | None:
        sec = self.sections.get(section)
        return sec.entries.get(key) if sec else None

    # -- editing (line-based, comments preserved) -------------------------------------------------
    def set(self, section: str, key: str, value: str) -> None:
        """Set ``key = value`` in ``section``, adding the section at the end when missing."""
        line = f"{key} = {value}"
        if section not in self.sections:
            if self.lines and self.lines[-1].strip():
                self.lines.append("")
            self.lines += [f"[{section}]", line]
        else:
            entry = self.sections[section].entries.get(key)
            if entry is not None:
                self.lines[entry.line - 1] = line
            else:
                self.lines.insert(self._section_end(section), line)
        self._parse()

    def remove_key(self, section: str, key: str) -> None:
        entry = self.get(section, key)
        if entry is not None:
            del self.lines[entry.line - 1]
            self._parse()

    def remove_section(self, section: str) -> None:
        """Remove a section with its keys (and the blank lines that trail it)."""
        sec = self.sections.get(section)
        if sec is None:
            return
        start, end = sec.line - 1, self._section_end(section)
        while end < len(self.lines) and not self.lines[end].strip():
            end += 1
        del self.lines[start:end]
        while self.lines and not self.lines[-1].strip():
            self.lines.pop()
        self._parse()

    def _section_end(self, section: str) -> int:
        """Index just after the section's last key line."""
        sec = self.sections[section]
        last = max([sec.line] + [e.line for e in sec.entries.values()])
        return last

    # -- writing ------------------------------------------------------------------------------------
    def text(self) -> str:
        """The document with its byte order mark (if it had one) and its own line endings."""
        return (BOM if self.bom else "") + "".join(line + self.newline for line in self.lines)

    def save(self, path: str | None = None) -> None:
        atomic_write(path or self.path, self.text())


def strip_comment(raw: str) -> str:
    """Drop an inline ``# ...`` or ``; ...`` comment (preceded by whitespace, outside quotes)."""
    quote = None
    for i, ch in enumerate(raw):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "#;" and (i == 0 or raw[i - 1].isspace()):
            return raw[:i].strip()
    return raw.strip()


def atomic_write(path: str, text: str) -> None:
    """Write a file so that readers see the old or the new content, never a mix.

    ``text`` is written as it is (no newline translation). A symlink is written through: its
    target is replaced (atomically, in the target's folder) and the link stays a link.
    """
    import tempfile

    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
