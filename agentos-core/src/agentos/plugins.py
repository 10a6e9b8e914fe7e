"""The pluggy plugin manager: components' modules and ``agentos.plugins`` entry points join it.

Public API: :data:`hookimpl` marks a hook implementation (hooks: :mod:`agentos.hookspecs`);
:func:`get_plugin_manager` is the process-wide manager (hook-only plugins load the first time it is
asked for); :func:`register_module` adds a module's hookimpls; :func:`direct_caller` is a fast way
to call a hook once per episode; :data:`load_errors` maps a plugin's name to the error that kept it
out; :data:`PLUGIN_GROUP` is the entry point group of hook-only plugins. The manager is part of the
component host (:mod:`agentos.host`), which registers each component's module as it loads it.
"""

from __future__ import annotations

from .host._hooks import PLUGIN_GROUP, direct_caller, get_plugin_manager, hookimpl, load_errors, register_module

__all__ = ["PLUGIN_GROUP", "direct_caller", "get_plugin_manager", "hookimpl", "load_errors", "register_module"]
