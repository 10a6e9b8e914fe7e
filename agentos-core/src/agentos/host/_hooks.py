"""The pluggy plugin manager: components' modules and ``agentos.plugins`` entry points join it.

Part of the host (which registers each component's module as it loads it); public as :mod:`agentos.plugins`.
"""

from __future__ import annotations

import pluggy

from .. import hookspecs
from ._boundary import DISABLE_ENV, passes_through, stdout_to_stderr
from ._names import normalize

hookimpl = pluggy.HookimplMarker("agentos")
PLUGIN_GROUP = "agentos.plugins"

_manager: pluggy.PluginManager | None = None
load_errors: dict[str, str] = {}


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide manager; hook-only plugins are loaded the first time it is asked for."""
    global _manager
    if _manager is None:
        _manager = pluggy.PluginManager("agentos")
        _manager.add_hookspecs(hookspecs)
        _load_hook_plugins(_manager)
    return _manager


def _load_hook_plugins(pm: pluggy.PluginManager) -> None:
    import os
    from importlib.metadata import entry_points

    disabled = {normalize(p) for p in os.environ.get(DISABLE_ENV, "").split(",") if p.strip()}
    for ep in entry_points(group=PLUGIN_GROUP):
        dist = normalize(ep.dist.name) if ep.dist else ""
        if dist in disabled or normalize(ep.name) in disabled or pm.has_plugin(ep.name):
            continue
        try:
            with stdout_to_stderr():
                plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except BaseException as exc:  # a broken tracker must not stop a run, even with SystemExit
            if passes_through(exc):
                raise
            load_errors[ep.name] = f"{type(exc).__name__}: {exc}"


def register_module(module, name: str) -> None:
    """Register a component's module so that any hookimpls in it are called."""
    pm = get_plugin_manager()
    if not pm.is_registered(module) and not pm.has_plugin(name):
        try:
            pm.register(module, name=name)
        except ValueError as exc:  # a bad hookimpl in the plugin: keep the component usable
            load_errors[name] = str(exc)


def direct_caller(hook):
    """A faster stand-in for calling ``hook`` once per episode: ``None`` when nobody implements it;
    when every implementation is plain (no wrappers) a function that calls them as pluggy would (last
    registered first, each with the arguments it names) without pluggy's per-call bookkeeping;
    otherwise the hook itself. Take it after the run's plugins are registered."""
    impls = hook.get_hookimpls()
    if not impls:
        return None
    if any(impl.hookwrapper or getattr(impl, "wrapper", False) for impl in impls):
        return hook
    calls = [(impl.function, impl.argnames) for impl in reversed(impls)]

    def call(**kwargs) -> None:
        for function, names in calls:
            function(*[kwargs[name] for name in names])

    return call
