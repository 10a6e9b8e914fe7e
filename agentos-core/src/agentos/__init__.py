"""AgentOS: reinforcement-learning components shared as pip packages.

Core abstractions: :class:`Environment` (Gymnasium's ``Env``), :class:`Policy`, :class:`Trainer`,
:class:`Agent` and :func:`run_agent`. Everything is imported on first use, so that ``import
agentos`` stays fast and never imports torch, Gymnasium or a plugin.
"""

from ._version import __version__

_LAZY = {
    "Agent": ("._agent", "Agent"),
    "Policy": ("._policy", "Policy"),
    "Trainer": ("._trainer", "Trainer"),
    "run_agent": ("._runner", "run_agent"),
    "Run": ("._runner", "Run"),
    "hookimpl": (".plugins", "hookimpl"),
    "get_plugin_manager": (".plugins", "get_plugin_manager"),
    "AgentConfig": (".config", "AgentConfig"),
    "AgentContext": ("._context", "AgentContext"),
    "use": ("._context", "use"),
    "AgentOSError": (".errors", "AgentOSError"),
}

__all__ = ["Environment", "__version__", *_LAZY]


def __getattr__(name: str):
    if name == "Environment":
        import gymnasium

        return gymnasium.Env
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agentos' has no attribute {name!r}")
