"""The active agent context: an ``agent.ini`` (if any), the host, and the components built from them.

``acr`` and ``Agent`` read components from here, so ``acr.policy.random`` inside an agent's code is
the very object the agent holds as ``self.policy``.
"""

from __future__ import annotations

import inspect

from ..config import AgentConfig
from ..errors import ComponentLoadError, ConfigError, UsageError
from ..host import KINDS, ComponentHost, canonical_kind, normalize
from ._paths import find_agent_ini


class AgentContext:
    """Components of one agent: which are defaults, their settings, and the built instances."""

    def __init__(self, config: AgentConfig | None = None, host: ComponentHost | None = None):
        if config is not None and config.default("preset"):  # components and settings from a preset
            from ._presets import expand_preset

            config = expand_preset(config)
        self.config = config
        self.host = host or ComponentHost()
        self.instances: dict[tuple[str, str], object] = {}
        if config is not None:
            from ._paths import runs_dir

            runs = runs_dir(config)
            for (kind, _), comp in config.components.items():
                if comp.source:  # refused before anything is imported (agentos.host._sources)
                    spec = self.host.add_local(kind, comp.name, comp.source, config.directory, runs)
                    if spec.problem:
                        raise ConfigError(f"{kind}.{comp.name}: {spec.problem}", config.path, comp.line or None)

    @classmethod
    def from_path(cls, path: str | None) -> AgentContext:
        return cls(AgentConfig.load(path) if path else None)

    # -- names --------------------------------------------------------------------------------------
    def default_name(self, kind: str) -> str | None:
        """The default of a kind: agent.ini's when there is one, else the only one installed."""
        kind = canonical_kind(kind)
        if self.config is not None:
            return self.config.default(kind)
        names = self.host.names(kind)
        return names[0] if len(names) == 1 else None

    def names(self, kind: str) -> list[str]:
        return self.host.names(kind)

    # -- building -----------------------------------------------------------------------------------
    def get(self, kind: str, name: str | None = None):
        """The shared instance of a component (the default one when ``name`` is None)."""
        kind = canonical_kind(kind)
        if name is None:
            name = self.default_name(kind)
            if name is None:
                raise UsageError(f"no default {kind}: set one in agent.ini ([{kind}] default = NAME)")
        spec = self.host.spec(kind, name)
        if spec.key not in self.instances:
            self.instances[spec.key] = self.create(kind, spec.name)
        return self.instances[spec.key]

    def create(self, kind: str, name: str, *, seat: str | None = None, **overrides):
        """A new instance built with agent.ini's settings (``overrides`` win); a policy or trainer for
        the ``seat`` of a multi-agent environment gets that agent's spaces."""
        kind = canonical_kind(kind)
        spec = self.host.spec(kind, name)
        factory = self.host.load(kind, spec.name)
        if kind == "policy" and seat is None:  # a trained policy plays the environment and task it was trained on
            from ._tasks import check_fits

            check_fits(self, spec.name, spec.package)
        comp = self.config.component(kind, spec.name) if self.config else None
        settings = comp.kwargs() if comp else {}
        settings.update(overrides)
        return build(
            factory,
            settings,
            self._injected(kind, seat),
            label=f"{kind}.{spec.name}",
            config=self.config,
            lines={k: s.line for k, s in comp.settings.items()} if comp else {},
        )

    def _injected(self, kind: str, seat: str | None = None) -> dict:
        """Objects offered to constructors that name them as parameters (built only if asked for)."""
        if kind in ("policy", "trainer"):
            return {
                "observation_space": lambda: self._space("observation_space", seat),
                "action_space": lambda: self._space("action_space", seat),
            }
        if kind == "agent":
            return {
                other: (lambda other=other: self.get(other) if self.default_name(other) else None)
                for other in ("environment", "policy", "trainer")
            }
        return {}

    def _space(self, which: str, seat: str | None):
        """The environment's space; of a multi-agent one, ``seat``'s (by default the first agent's)."""
        env = self.get("environment")
        if not hasattr(env, "possible_agents"):
            return getattr(env, which)
        return getattr(env, which)(seat if seat is not None else env.possible_agents[0])

    def build_agent(self):
        """The agent of this context, with its default components (a :class:`MultiAgent`, with a
        policy per seat, when the environment is a PettingZoo one)."""
        if self.default_name("agent") is None and self.default_name("environment") is not None:
            from ._multiagent import as_aec

            env = self.get("environment")
            if hasattr(env, "possible_agents"):
                spec = self.host.spec("environment", self.default_name("environment"))
                self.instances[spec.key] = as_aec(env)  # a Parallel environment becomes an AEC one
                return self._build_multiagent()
        if self.default_name("agent") is None:
            from ._agent import Agent

            return build(Agent, {}, self._injected("agent"), label="agent")
        return self.get("agent")

    def _build_multiagent(self):
        from ._multiagent import MultiAgent

        env = self.get("environment")
        seats = dict(self.config.seats) if self.config is not None else {}
        unknown = [agent for agent in seats if agent not in env.possible_agents]
        if unknown:
            raise ConfigError(
                f"[seats] names agent {unknown[0]!r}, which this environment does not have "
                f"(agents: {', '.join(map(str, env.possible_agents))})",
                self.config.path,
                seats[unknown[0]].line,
            )
        default = self.default_name("policy")
        policies, by_name = {}, {}
        for agent in env.possible_agents:
            name = self.config.seat_policy(agent) if self.config is not None else None
            name = name or default
            if name is None:
                raise UsageError(f"no policy for agent {agent}: add [policy] default = NAME, or [seats] {agent} = NAME")
            key = self.host.spec("policy", name).key
            if key not in by_name:
                if name == default:
                    by_name[key] = self.get("policy")
                else:  # one instance per policy, built with the spaces of the first seat it plays
                    if key not in self.instances:
                        self.instances[key] = self.create("policy", name, seat=agent)
                    by_name[key] = self.instances[key]
            policies[agent] = by_name[key]
        trainer = self.get("trainer") if self.default_name("trainer") else None
        own = self.get("policy") if default else None
        return MultiAgent(env, policies, policy=own, trainer=trainer)

    def close(self) -> None:
        for obj in self.instances.values():
            close = getattr(obj, "close", None)
            if callable(close) and not isinstance(obj, type):
                try:
                    close()
                except Exception:
                    pass
        self.instances.clear()


def build(factory, settings: dict, injected: dict, *, label: str, config=None, lines=None):
    """Call ``factory`` with the settings, plus the injected objects it names as parameters."""
    if not callable(factory):
        if settings:
            raise ConfigError(f"{label} is an object, not a class: it takes no settings", config and config.path)
        return factory
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    named = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for key in settings:
        if key not in params and not accepts_any:
            from ..host import did_you_mean

            accepted = [n for n in named if n not in injected]
            raise ConfigError(
                f"unknown setting {key!r} for {label}{did_you_mean(key, accepted)} "
                f"(accepted: {', '.join(accepted) or 'none'})",
                config.path if config else None,
                (lines or {}).get(key),
            )
    kwargs = {k: make() for k, make in injected.items() if k in params and k not in settings}
    kwargs.update(settings)
    try:
        return factory(**kwargs)
    except (UsageError, ComponentLoadError):
        raise
    except Exception as exc:
        where = f" (settings from {config.path})" if config is not None and settings else ""
        raise ComponentLoadError(f"{label} could not be created{where}: {type(exc).__name__}: {exc}") from exc


_active: AgentContext | None = None


def active_context() -> AgentContext:
    """The process-wide context, made from the agent.ini found at first use."""
    global _active
    if _active is None:
        _active = AgentContext.from_path(find_agent_ini())
    return _active


def use(path_or_context) -> AgentContext:
    """Make an ``agent.ini`` (or a context) the active one, for ``acr`` and new agents."""
    global _active
    context = path_or_context if isinstance(path_or_context, AgentContext) else AgentContext.from_path(path_or_context)
    _active = context
    return context


def reset_active() -> None:
    global _active
    if _active is not None:
        _active.close()
    _active = None


__all__ = ["KINDS", "AgentContext", "active_context", "build", "find_agent_ini", "normalize", "use"]
