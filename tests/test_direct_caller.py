"""direct_caller: the per-episode hook call without pluggy's bookkeeping, with pluggy's semantics."""

from __future__ import annotations

import pluggy
from agentos import hookspecs
from agentos.plugins import direct_caller, hookimpl


def _manager(*plugins) -> pluggy.PluginManager:
    pm = pluggy.PluginManager("agentos")
    pm.add_hookspecs(hookspecs)
    for plugin in plugins:
        pm.register(plugin)
    return pm


def test_plain_implementations_are_called_in_pluggys_order_with_the_arguments_they_name():
    calls = []

    class First:
        @hookimpl(tryfirst=True)
        def agentos_episode_end(self, episode_return):
            calls.append(("first", episode_return))

    class Plain:
        @hookimpl
        def agentos_episode_end(self, run, episode, length):
            calls.append(("plain", run, episode, length))

    class Later:
        @hookimpl
        def agentos_episode_end(self, episode):
            calls.append(("later", episode))

    pm = _manager(First(), Plain(), Later())
    args = {"run": "r", "episode": 3, "episode_return": -9.0, "length": 9, "info": {}}
    pm.hook.agentos_episode_end(**args)
    through_pluggy, calls[:] = list(calls), []
    direct = direct_caller(pm.hook.agentos_episode_end)
    assert direct is not pm.hook.agentos_episode_end
    direct(**args)
    assert calls == through_pluggy == [("first", -9.0), ("later", 3), ("plain", "r", 3, 9)]
    assert direct_caller(_manager().hook.agentos_episode_end) is None


def test_a_wrapper_keeps_pluggy():
    class Wrapper:
        @hookimpl(wrapper=True)
        def agentos_episode_end(self):
            return (yield)

    pm = _manager(Wrapper())
    assert direct_caller(pm.hook.agentos_episode_end) is pm.hook.agentos_episode_end
