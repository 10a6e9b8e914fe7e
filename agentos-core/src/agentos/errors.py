"""Errors that the CLI turns into a one-line message and an exit code."""

from __future__ import annotations


class AgentOSError(Exception):
    """Base class: a problem the user can act on. ``exit_code`` is what the CLI returns."""

    exit_code = 1


class UsageError(AgentOSError):
    """Bad input from the user: an unknown name, a malformed file, a wrong argument."""

    exit_code = 2


class ConfigError(UsageError):
    """A problem in an ``agent.ini`` file, located by file and line."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
        super().__init__(f"{where}{message}")
        self.path, self.line = path, line


class UnknownComponentError(UsageError, LookupError):
    """No component of that kind has that name."""


class ComponentLoadError(AgentOSError):
    """A component exists but could not be imported or built."""


class PublishError(UsageError):
    """A file that cannot be published (malformed, misnamed, or clashing with a published one)."""


class AlreadyPublished(PublishError):
    """A file of that name is published with other contents (versions are immutable)."""
