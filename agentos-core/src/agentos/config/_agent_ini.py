"""``agent.ini``: which components an agent uses, their packages and their settings.

    [agentos]                  ; optional: files and folders of this agent
    requirements = requirements.txt

    [environment]              ; one section per kind: the default component
    default = corridor

    [environment.corridor]     ; one section per component
    package = agentos-env-corridor
    version = 1.0.0
    length = 10                ; everything else is a constructor setting

    [train]                    ; optional: evaluation during training (agentos.learning._evaluation)
    eval_every_steps = 10000

    [seats]                    ; multi-agent environments: a policy per agent id (else [policy] plays all)
    player_2 = random

A component section with ``source = file.py:Class`` (or ``module:Class``) uses local code.
"""

from __future__ import annotations

import os
import re

from ..errors import ConfigError
from ..host._names import KINDS, canonical_kind, normalize
from ._ini import IniDocument
from ._values import format_value, parse_value

META_SECTION = "agentos"
#: ``[tracker.<name>]``: the settings of a tracker plugin (e.g. ``[tracker.mlflow] tracking_uri = ...``).
TRACKER_SECTION = "tracker"
META_KEYS = {"name", "requirements", "venv", "index-url", "runs", "seed", "threads"}
KIND_KEYS = {"default"}
#: ``[train]``: evaluation during ``agentos train`` (read by :mod:`agentos.learning._evaluation`).
TRAIN_SECTION = "train"
TRAIN_KEYS = {"eval_every_steps", "eval_every_episodes", "eval_episodes", "eval_seed", "reward_threshold",
              "keep_best"}
RESERVED_KEYS = {"package", "version", "source"}
SEATS_SECTION = "seats"
#: An agent id of a multi-agent environment as agent.ini may name it (PettingZoo's: ``player_1``).
_AGENT_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class Setting:
    """A typed value and the line it came from."""

    __slots__ = ("value", "line")

    def __init__(self, value, line: int):
        self.value, self.line = value, line

    def __repr__(self) -> str:
        return f"Setting({self.value!r}, line={self.line})"


class ComponentConfig:
    """One ``[kind.name]`` section: package, version, source and constructor settings."""

    def __init__(self, kind: str, name: str, line: int = 0):
        self.kind, self.name, self.line = kind, name, line
        self.package = self.version = self.source = ""
        self.settings: dict[str, Setting] = {}

    def kwargs(self) -> dict:
        return {key: s.value for key, s in self.settings.items()}


class AgentConfig:
    """A parsed, validated ``agent.ini`` that can also be edited and saved atomically."""

    def __init__(self, document: IniDocument):
        self.document = document
        self.path = document.path
        self.directory = os.path.dirname(os.path.abspath(document.path or "agent.ini"))
        self.meta: dict[str, Setting] = {}
        self.defaults: dict[str, Setting] = {}
        self.components: dict[tuple[str, str], ComponentConfig] = {}
        self.seats: dict[str, Setting] = {}
        self.trackers: dict[str, dict[str, Setting]] = {}
        self.train: dict[str, Setting] = {}
        self._validate()

    @classmethod
    def load(cls, path: str) -> AgentConfig:
        if os.path.isdir(path):
            path = os.path.join(path, "agent.ini")
        return cls(IniDocument.read(path))

    @classmethod
    def from_text(cls, text: str, path: str = "agent.ini") -> AgentConfig:
        return cls(IniDocument(text, path))

    def _error(self, message: str, line: int | None = None) -> ConfigError:
        return ConfigError(message, self.path, line)

    def _validate(self) -> None:
        self.meta, self.defaults, self.components, self.seats, self.trackers = {}, {}, {}, {}, {}
        self.train = {}
        for name, section in self.document.sections.items():
            kind, dot, comp = name.partition(".")
            if name == META_SECTION:
                self.meta = self._typed(section, META_KEYS, "[agentos]")
            elif name == TRAIN_SECTION:
                self.train = self._typed(section, TRAIN_KEYS, "[train]")
            elif name == SEATS_SECTION:
                self.seats = self._seats(section)
            elif not dot and kind in KINDS:
                typed = self._typed(section, KIND_KEYS, f"[{kind}]")
                if "default" not in typed:
                    raise self._error(f"[{kind}] needs 'default = <name>'", section.line)
                self.defaults[kind] = typed["default"]
            elif dot and kind in KINDS and comp:
                self.components[(kind, normalize(comp))] = self._component(kind, comp, section)
            elif dot and kind == TRACKER_SECTION and comp:  # a tracker plugin's settings, read by the plugin
                entries = section.entries.items()
                self.trackers[normalize(comp)] = {k: Setting(self._parse(e), e.line) for k, e in entries}
            else:
                hint = (f"; sections are [agentos], [train], [{'], ['.join(KINDS)}], [seats], [<kind>.<name>] "
                        "and [tracker.<name>]")
                raise self._error(f"unknown section [{name}]{hint}", section.line)

    def _typed(self, section, allowed: set[str], label: str) -> dict[str, Setting]:
        result = {}
        for key, entry in section.entries.items():
            if key not in allowed:
                from ..host import did_you_mean

                hint = did_you_mean(key, allowed)
                allowed_list = ", ".join(sorted(allowed))
                raise self._error(f"unknown key {key!r} in {label}{hint} (allowed: {allowed_list})", entry.line)
            result[key] = Setting(self._parse(entry), entry.line)
        return result

    def _seats(self, section) -> dict[str, Setting]:
        """``[seats]``: ``<agent id> = <policy component name>``, both checked against an allowlist."""
        from ..host._names import is_valid_name

        seats = {}
        for key, entry in section.entries.items():
            value = entry.raw.strip().strip("\"'")
            if not _AGENT_ID.match(key):
                raise self._error(f"[seats]: {key[:64]!r} is not an agent id (letters, digits, _ . -)", entry.line)
            if not is_valid_name(value):
                raise self._error(f"[seats] {key}: {value[:64]!r} is not a policy name", entry.line)
            seats[key] = Setting(value, entry.line)
        return seats

    def _parse(self, entry):
        try:
            return parse_value(entry.raw)
        except ValueError as exc:
            raise self._error(f"malformed value for {entry.key!r}: {exc}", entry.line) from None

    def _component(self, kind: str, name: str, section) -> ComponentConfig:
        comp = ComponentConfig(kind, name, line=section.line)
        for key, entry in section.entries.items():
            if key in RESERVED_KEYS:
                setattr(comp, key, entry.raw.strip().strip("\"'"))
            else:
                comp.settings[key] = Setting(self._parse(entry), entry.line)
        return comp

    # -- queries ------------------------------------------------------------------------------------
    def default(self, kind: str) -> str | None:
        setting = self.defaults.get(canonical_kind(kind))
        return None if setting is None or setting.value is None else str(setting.value)

    def component(self, kind: str, name: str) -> ComponentConfig | None:
        return self.components.get((canonical_kind(kind), normalize(str(name))))

    def seat_policy(self, agent: str) -> str | None:
        """The policy that ``[seats]`` binds to ``agent`` (None: the default policy plays it)."""
        setting = self.seats.get(agent)
        return None if setting is None else setting.value

    def component_names(self, kind: str) -> list[str]:
        kind = canonical_kind(kind)
        return [c.name for (k, _), c in self.components.items() if k == kind]

    def resolve_path(self, value: str) -> str:
        return value if os.path.isabs(value) else os.path.join(self.directory, value)

    def tracker_settings(self, name: str) -> dict:
        """The values of a ``[tracker.<name>]`` section (a tracker plugin's own settings; {} when absent)."""
        return {key: setting.value for key, setting in self.trackers.get(normalize(name), {}).items()}

    def meta_value(self, key: str, default=None):
        setting = self.meta.get(key)
        return default if setting is None else setting.value

    # -- edits (saved with save()) ---------------------------------------------------------------
    def set_default(self, kind: str, name: str | None) -> None:
        kind = canonical_kind(kind)
        if name is None:
            self.document.remove_section(kind)
        else:
            self.document.set(kind, "default", name)
        self._validate()

    def add_component(
        self,
        kind: str,
        name: str,
        *,
        package: str = "",
        version: str = "",
        source: str = "",
        settings: dict | None = None,
    ) -> None:
        """Add or update a ``[kind.name]`` section; existing settings are kept."""
        kind = canonical_kind(kind)
        existing = self.component(kind, name)
        section = f"{kind}.{existing.name if existing else name}"
        for key, value in (("package", package), ("version", version), ("source", source)):
            if value:
                self.document.set(section, key, value)
        for key, value in (settings or {}).items():
            self.document.set(section, key, format_value(value))
        if section not in self.document.sections:
            self.document.set(section, "package", package)
        self._validate()

    def remove_component(self, kind: str, name: str) -> None:
        existing = self.component(kind, name)
        if existing is not None:
            self.document.remove_section(f"{existing.kind}.{existing.name}")
            self._validate()

    def save(self) -> None:
        self.document.save()
