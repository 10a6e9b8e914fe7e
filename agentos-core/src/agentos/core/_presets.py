"""Presets: named, versioned bundles of components and settings, applied to an environment.

A preset package declares an entry point in ``agentos.preset`` naming a plain dict (reading it
imports only that small module, never torch)::

    PRESET = {
        "summary": "tabular SARSA",
        "components": {"policy": ["q_table", {"key": "auto"}], "trainer": ["sarsa", {"alpha": 0.5}]},
        "environments": {"2048": {"trainer": {"alpha": 0.05}}},   # optional per-environment settings
        "environment": "2048",   # optional: the environment it is for (``install preset --default`` sets it)
    }

:func:`agent_ini_text` turns a preset, an environment and setting overrides into an ``agent.ini``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UsageError
from ..host._names import did_you_mean, normalize

_COMPONENT_KINDS = ("policy", "trainer", "agent")


@dataclass
class Preset:
    name: str
    version: str
    package: str
    summary: str = ""
    components: dict = field(default_factory=dict)  # kind -> (component name, settings)
    environments: dict = field(default_factory=dict)  # environment -> kind -> settings
    environment: str | None = None  # the environment the preset is for, when it names one

    def settings_for(self, environment: str) -> dict[str, dict]:
        """kind -> settings of this preset on ``environment`` (per-environment values win)."""
        merged = {kind: dict(settings) for kind, (_, settings) in self.components.items()}
        extra = {normalize(k): v for k, v in self.environments.items()}.get(normalize(environment), {})
        for kind, settings in extra.items():
            merged.setdefault(kind, {}).update(settings)
        return merged


def _validate(name: str, data) -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("components"), dict):
        raise UsageError(f"preset {name!r} is malformed: it needs a dict with 'components'")
    for kind, value in data["components"].items():
        ok = (kind in _COMPONENT_KINDS and isinstance(value, list | tuple) and len(value) == 2
              and isinstance(value[0], str) and isinstance(value[1], dict))
        if not ok:
            raise UsageError(f"preset {name!r}: components.{kind} must be [name, {{settings}}] (policy/trainer/agent)")
    environment = data.get("environment")
    if environment is not None and not (isinstance(environment, str) and environment.strip()):
        raise UsageError(f"preset {name!r}: environment must be the name of an environment component")
    for env, kinds in (data.get("environments") or {}).items():
        if not isinstance(kinds, dict) or any(k not in data["components"] and k != "environment" for k in kinds):
            raise UsageError(f"preset {name!r}: environments.{env} names a kind the preset has no component for")
    return data


def load_preset(name: str, host=None) -> Preset:
    """The installed preset ``name``, found and imported by the component host like any other kind.

    The host's rules hold: a name two packages declare is the first one's (the other is reported as
    a duplicate), ``AGENTOS_DISABLE_PLUGINS`` keeps a package's module from being imported, and a
    preset that fails to import is a one-line error of its own. ``host`` defaults to a new one.

    A preset may be a family: ``{"summary": ..., "variants": {"sac_pendulum_v1": {preset}, ...}}`` under
    one entry point ``zoo`` gives the presets ``zoo_sac_pendulum_v1``... (the family's name, a separator,
    the variant's), each a preset as above.
    """
    from ..errors import ComponentLoadError
    from ..host import ComponentHost

    host = host or ComponentHost()
    names = host.names("preset")
    spec, variant = host.find("preset", name), None
    if spec is None and (family := family_of(name, names)) is not None:
        spec, variant = host.find("preset", family), normalize(name)[len(normalize(family)) + 1:]
    if spec is None:
        listed = ", ".join(sorted(names)) or "none installed"
        raise UsageError(f"no preset named {name!r}{did_you_mean(name, names)} "
                         f"(presets: {listed}; agentos install preset NAME)")
    try:
        data = host.load("preset", spec.name)
    except ComponentLoadError as exc:  # disabled, a duplicate, or its module failed: one line
        raise UsageError(str(exc)) from None
    label = spec.name
    if isinstance(data, dict) and isinstance(data.get("variants"), dict):
        variants = {normalize(str(k)): (str(k), v) for k, v in data["variants"].items()}
        if variant is None or variant not in variants:
            example = f"{spec.name}_{sorted(k for k, _ in variants.values())[0]}" if variants else spec.name
            wanted = [f"{spec.name}_{k}" for k, _ in variants.values()]
            hint = did_you_mean(name, wanted) if variant is not None else ""
            raise UsageError(f"preset {spec.name!r} is a family of {len(variants)} presets; "
                             f"{'no ' + repr(name) + hint if variant is not None else 'name one'} "
                             f"(e.g. {example}; {data.get('listing') or 'see its package README'})")
        label = f"{spec.name}_{variants[variant][0]}"
        data = variants[variant][1]
    elif variant is not None:
        raise UsageError(f"no preset named {name!r}{did_you_mean(name, names)} ({spec.name} is not a family)")
    data = _validate(label, data)
    components = {kind: (value[0], dict(value[1])) for kind, value in data["components"].items()}
    return Preset(label, spec.version, spec.package, str(data.get("summary", "")), components,
                  dict(data.get("environments") or {}), data.get("environment"))


def family_of(name: str, names) -> str | None:
    """The longest of ``names`` that ``name`` starts with, followed by a separator (``zoo`` for
    ``zoo_sac_pendulum_v1``), or None."""
    wanted = normalize(name)
    found = [n for n in names if wanted.startswith(normalize(n) + "-")]
    return max(found, key=len) if found else None


def apply_settings(preset: Preset, environment: str, overrides: dict) -> dict[str, dict]:
    """The preset's settings on ``environment`` with ``overrides`` (``"trainer.alpha": 0.1``) applied.

    An override must name a setting the preset declares (``kind.key``, or ``key`` when only one
    component has it); anything else is an error with a suggestion, as in agent.ini.
    """
    merged = preset.settings_for(environment)
    known = [f"{kind}.{key}" for kind, settings in merged.items() for key in settings]
    for raw_key, value in overrides.items():
        if message := setting_problem(raw_key):
            raise UsageError(f"preset {preset.name!r}: {message}")
        key = raw_key if "." in raw_key else next((k for k in known if k.split(".", 1)[1] == raw_key), raw_key)
        if key not in known and not key.startswith("environment."):  # checked by the environment itself
            bare = {k.split(".", 1)[1]: k for k in known}
            close = did_you_mean(raw_key.rpartition(".")[2], bare)
            hint = f"; did you mean {bare[close.split(chr(39))[1]]!r}?" if close else did_you_mean(key, known)
            raise UsageError(f"unknown setting {raw_key!r} for preset {preset.name!r}{hint}"
                             f" (settings: {', '.join(known)})")
        kind, name = key.split(".", 1)
        merged.setdefault(kind, {})[name] = value
    return merged


def agent_ini_text(preset: Preset, environment: str, overrides: dict, *, runs: str = "runs") -> str:
    """An agent.ini for ``preset`` on ``environment`` (the environment with its installed defaults)."""
    from ..config import format_value

    settings = apply_settings(preset, environment, overrides)
    lines = [f"; preset {preset.name} {preset.version} on {environment}", "[agentos]", f"runs = {runs}", "",
             "[environment]", f"default = {environment}", ""]
    for kind, (name, _) in preset.components.items():
        lines += [f"[{kind}]", f"default = {name}", ""]
    sections = [("environment", environment)] + [(kind, name) for kind, (name, _) in preset.components.items()]
    for kind, name in sections:
        if kind == "environment" and not settings.get("environment"):
            continue
        lines.append(f"[{kind}.{name}]")
        lines += [f"{key} = {format_value(value)}" for key, value in settings.get(kind, {}).items()]
        lines.append("")
    return "\n".join(lines)


def defaults_in_the_way(config, name: str) -> list[tuple[str, str, str]]:
    """(kind, agent.ini's default, the preset's component) for each kind where agent.ini's own
    default would win over preset ``name``'s component (see :func:`expand_preset`); [] when the
    preset cannot be loaded (its own error is reported when it is used)."""
    import importlib

    importlib.invalidate_caches()  # the preset may have been installed by this very process
    try:
        preset = load_preset(name)
    except UsageError:
        return []
    clashes = []
    for kind, (comp, _) in preset.components.items():
        current = config.default(kind)
        if current is not None and normalize(current) != normalize(comp):
            clashes.append((kind, current, comp))
    return clashes


def environment_in_the_way(config, name: str) -> tuple[str | None, str] | None:
    """(agent.ini's default environment, the preset's) when preset ``name`` is for one environment
    (its ``environment``) and agent.ini's is another; None otherwise or when it cannot be loaded."""
    import importlib

    importlib.invalidate_caches()
    try:
        preset = load_preset(name)
    except UsageError:
        return None
    current = config.default("environment")
    if preset.environment is None or normalize(current or "") == normalize(preset.environment):
        return None
    return current, preset.environment


def expand_preset(config):
    """Fill an agent.ini's missing components from its ``[preset] default = NAME`` (in memory only).

    What agent.ini states itself wins; ``[preset.NAME]`` keys are overrides checked like
    experiment settings (unknown ones are errors with a suggestion).
    """
    from ..config import format_value
    from ..errors import ConfigError

    name = config.default("preset")
    preset = load_preset(name)
    environment = config.default("environment")
    if not environment:  # the environment the preset is for, when it names one
        environment = preset.environment
        if not environment:
            raise ConfigError(f"[preset] default = {name} needs an environment ([environment] default = NAME)",
                              config.path)
        config.document.set("environment", "default", environment)
        config._validate()
    section = config.component("preset", name)
    settings = apply_settings(preset, environment, section.kwargs() if section else {})
    wanted = [("environment", environment)] + [(kind, comp) for kind, (comp, _) in preset.components.items()]
    for kind, comp in wanted:
        if kind != "environment" and config.default(kind) is None:
            config.document.set(kind, "default", comp)
            config._validate()  # re-read: config.default(kind) below must see the default just set
        if config.default(kind) != comp:
            continue  # agent.ini names another component for this kind: the preset's settings do not apply
        existing = config.component(kind, comp)
        for key, value in settings.get(kind, {}).items():
            if existing is None or key not in existing.settings:
                config.document.set(f"{kind}.{existing.name if existing else comp}", key, format_value(value))
    config._validate()
    return config


def setting_problem(key) -> str | None:
    """Why ``key`` may not be a setting (``kind.setting``) of an experiment or an override, or None:
    a setting is a constructor argument, never ``source`` (which names code to import)."""
    if str(key).strip().rpartition(".")[2].strip().lower() == "source":
        return (f"setting {key!r} is not allowed: settings may not set 'source' "
                "(the code a component runs comes from the agent folder, never from settings)")
    return None
