"""Hooks that plugins (trackers, components) implement with ``@agentos.hookimpl``."""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("agentos")


@hookspec
def agentos_run_start(run):
    """A run (``mode`` "run" or "train") is about to start; ``run.agent`` is built."""


@hookspec
def agentos_episode_start(run, episode):
    """Episode number ``episode`` (from 0) is about to start."""


@hookspec
def agentos_step(run, reward, done, info):
    """One step was taken. Called only when some plugin implements it: it costs time per step."""


@hookspec
def agentos_episode_end(run, episode, episode_return, length, info):
    """An episode ended with the given return and number of steps."""


@hookspec
def agentos_run_end(run, summary):
    """The run ended (also after Ctrl-C or an error: see ``summary["status"]``)."""


@hookspec
def agentos_register_commands(subparsers):
    """Add subcommands to ``agentos`` (``subparsers.add_parser(...)``, ``set_defaults(handler=f)``).

    Declare each command name as an entry point in the group ``agentos.commands`` pointing at the
    module that implements this hook: the module is imported only when that command is invoked.
    """
