"""Tasks: the one game an environment component plays when it can play many (a Gymnasium id).

An environment factory that takes a task names the setting with a ``task_setting`` attribute
(``agentos-env-gymnasium``'s ``make.task_setting = "id"``). A task id is data from a stranger
wherever it is read (a results record, a package's files, a command line): :func:`task_problem`
accepts only Gymnasium's ``[namespace/]Name-vN`` shape (no ``:``: Gymnasium's ``module:Env`` form
imports a module), at most :data:`MAX_TASK` characters. A trained policy's package ships the
record of how it played (``results.json``); :func:`check_fits` refuses, in one line, to build it
into an agent of another environment or task, before any weight is loaded.
"""

from __future__ import annotations

import configparser
import inspect
import json
import re

from ..errors import UsageError
from ..host._names import normalize

MAX_TASK = 80
#: ``[namespace/]Name-vN``: letters, digits, ``_`` and single ``-`` (never ``--``, ``.``, ``:`` or a second ``/``).
TASK_RE = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9_]|-(?!-))*/)?[A-Za-z0-9](?:[A-Za-z0-9_]|-(?!-))*-v[0-9]{1,6}")
MAX_SHIPPED = 1 << 20  # bytes of a shipped results.json or agent.ini read here


def task_problem(value) -> str | None:
    """Why ``value`` is not a task id (None when it is one)."""
    if not isinstance(value, str):
        return f"must be a string, not {type(value).__name__}"
    if len(value) > MAX_TASK:
        return f"is longer than {MAX_TASK} characters"
    if not TASK_RE.fullmatch(value):
        return f"{value[:MAX_TASK]!r} is not a task id of the form [namespace/]Name-vN (letters, digits, '_', '-')"
    return None


def check_task(value, what: str = "--task") -> str:
    """``value`` if it is a task id, else one :class:`UsageError` line."""
    problem = task_problem(value)
    if problem:
        raise UsageError(f"{what} {problem}")
    return value


def task_setting(factory) -> str | None:
    """The setting that names the task of an environment factory (its ``task_setting``), or None."""
    setting = getattr(factory, "task_setting", None)
    return setting if isinstance(setting, str) and setting.isidentifier() else None


def _default(factory, setting: str):
    try:
        parameter = inspect.signature(factory).parameters.get(setting)
    except (TypeError, ValueError):
        return None
    return None if parameter is None or parameter.default is inspect.Parameter.empty else parameter.default


def configured_task(context, name: str | None = None) -> str | None:
    """The task the environment ``name`` (default: the context's) is set to play, or None if it has none."""
    name = name or context.default_name("environment")
    if name is None:
        return None
    factory = context.host.load("environment", name)
    setting = task_setting(factory)
    if setting is None:
        return None
    comp = context.config.component("environment", name) if context.config else None
    value = (comp.kwargs() if comp else {}).get(setting, _default(factory, setting))
    return check_task(value, f"[environment.{name}] {setting}")


def task_from_agent_ini(text: str, environment: str, setting: str = "id") -> str | None:
    """The task a shipped agent.ini sets for ``environment`` (records made before tasks carry none)."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text[:MAX_SHIPPED])
    except configparser.Error:
        return None
    for section in parser.sections():
        kind, _, name = section.partition(".")
        if kind == "environment" and normalize(name) == normalize(environment):
            value = parser[section].get(setting)
            return value if value is not None and task_problem(value) is None else None
    return None


def _shipped(package: str, member: str) -> str | None:
    """The text of ``agentos_policy_<name>/<member>`` in the installed distribution ``package``, or None."""
    from importlib import metadata

    try:
        dist = metadata.distribution(package)
    except (metadata.PackageNotFoundError, ValueError):
        return None
    folder = "agentos_policy_" + normalize(package).removeprefix("agentos-policy-").replace("-", "_")
    path = dist.locate_file(f"{folder}/{member}")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SHIPPED + 1)
    except OSError:
        return None
    return data.decode("utf-8", "replace") if len(data) <= MAX_SHIPPED else None


def trained_for(package: str | None) -> dict | None:
    """``{"name", "task"}`` of the environment a trained-policy distribution was evaluated on (from its
    shipped results.json; a record without a task: the ``id`` its shipped agent.ini sets), or None."""
    if not package or not normalize(package).startswith("agentos-policy-"):
        return None
    text = _shipped(package, "results.json")
    if text is None:
        return None
    try:
        env = json.loads(text)["environment"]
        name = env["name"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(name, str):
        return None
    task = env.get("task")
    if task is None:
        task = task_from_agent_ini(_shipped(package, "agent.ini") or "", name)
    return {"name": name, "task": task if task_problem(task) is None else None}


def describe(name: str, task: str | None) -> str:
    return f"{name} (task {task})" if task else name


def check_fits(context, policy: str, package: str | None) -> None:
    """Refuse, in one line, a trained policy built into an agent of another environment or task."""
    trained = trained_for(package)
    environment = context.default_name("environment")
    if trained is None or environment is None:
        return
    same_env = normalize(trained["name"]) == normalize(environment)
    task = configured_task(context, environment) if same_env else None
    if same_env and (trained["task"] is None or task is None or task == trained["task"]):
        return
    fix = f"make {trained['name']} the default environment ([environment] default = {trained['name']})"
    if same_env:
        setting = task_setting(context.host.load("environment", environment))
        fix = f"set {setting} = {trained['task']} under [environment.{environment}] in agent.ini"
    raise UsageError(
        f"policy {policy!r} was trained on {describe(trained['name'], trained['task'])}, but this agent plays "
        f"{describe(environment, task)}: {fix} (agentos evaluate {policy} plays its own task)"
    )


__all__ = ["MAX_TASK", "TASK_RE", "check_fits", "check_task", "configured_task", "task_problem", "task_setting",
           "trained_for"]
