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
def agentos_metrics(run, step, values):
    """Named scalars of a run at ``step`` (the run's environment steps so far): ``values`` is
    ``{name: float}``, e.g. a trainer's ``train/loss`` or ``train/entropy_loss``, or ``eval/mean_return``.
    Reported through :func:`agentos.plugin_api.report_metrics` (names and values already checked)."""


@hookspec
def agentos_run_end(run, summary):
    """The run ended (also after Ctrl-C or an error: see ``summary["status"]``)."""


@hookspec
def agentos_experiment_start(experiment):
    """An experiment is about to submit its trials (in the client process).

    ``experiment`` has ``name``, ``folder``, ``trials`` (every :class:`agentos.experiments.Trial` of the
    grid), ``pending`` (the ids of the trials that run now; the others finished earlier) and
    ``context``: a dict that a plugin may fill with JSON-able values under its own name. The context
    travels with every trial to its worker (process pool or Dask), where ``agentos_trial_start`` gets it.
    ``agentos tune`` calls it too: once for the study (``kind`` ``study``) and once per Optuna trial
    (``kind`` ``tune-trial``, ``parent`` the study's context, ``params`` its settings); the trial's seeds
    then run with the tune-trial's context (see :class:`agentos.experiments.ExperimentInfo`).
    """


@hookspec
def agentos_experiment_end(experiment, result):
    """The experiment ended (in the client; also after Ctrl-C): ``result`` is its ExperimentResult,
    or None when it was interrupted before a summary could be made. For a tune's study and trials,
    ``result.trials`` are dicts with ``status`` (finished, pruned, failed, interrupted); a tune-trial's
    result has ``value`` (its score, or None) and ``state`` (complete, pruned, fail...) too."""


@hookspec
def agentos_trial_start(trial, context, folder):
    """One trial starts in its worker, before its training and test runs: ``trial`` is the trial's
    dict (``id``, ``agent``, ``environment``, ``seed``, ``settings``...), ``context`` the experiment's,
    ``folder`` the trial's scratch folder (its files go back to ``trials/<id>/`` of the experiment)."""


@hookspec
def agentos_trial_end(trial, outcome):
    """The trial ended in its worker: ``outcome`` has ``status`` (finished, failed, interrupted),
    ``error``, and the ``train`` and ``test`` summaries."""


@hookspec
def agentos_register_commands(subparsers):
    """Add subcommands to ``agentos`` (``subparsers.add_parser(...)``, ``set_defaults(handler=f)``).

    Declare each command name as an entry point in the group ``agentos.commands`` pointing at the
    module that implements this hook: the module is imported only when that command is invoked.
    """
