"""The ``[cluster]`` section of an experiment file: the batch jobs' resources, checked as data.

    [cluster]                    ; used by `agentos experiment run FILE --cluster slurm|pbs|sge|lsf`
    partition = short            ; the queue (Slurm -p, PBS/SGE/LSF -q)
    account = my-lab             ; charged for the jobs (-A, -P)
    cores = 1                    ; CPUs per job: trials at once in each job
    memory = 4GB                 ; per job
    walltime = 01:00:00          ; [D-]HH:MM[:SS], at most 31 days
    max-jobs = 20                ; jobs at once (at most one per trial)
    directives = [--qos=normal, --gres=gpu:1]   ; more job directives, from an allowlist of options
    setup = [module load python/3.12]           ; lines run before the worker starts (restricted forms)
    venv = /home/me/envs/rl      ; the workers' Python: VENV/bin/python (or: python = PATH)
    interface = ib0              ; the network interface the scheduler and workers use

An experiment file may come from someone else, so nothing here reaches the job script unchecked:
keys come from an allowlist, numbers and sizes are bounded, and directives and setup lines are refused
unless they match forms that cannot run a command (see docs/security.md). Setup lines of another form
are the user's own to give (``--setup`` on the command line, ``setup=`` in Python). Nothing here
submits a job: only ``--cluster`` (or ``cluster=``) does.
"""

from __future__ import annotations

import re

SYSTEMS = ("slurm", "pbs", "sge", "lsf")
KEYS = ("partition", "account", "cores", "memory", "walltime", "max-jobs", "directives", "setup", "venv", "python",
        "interface")
MAX_CORES, MAX_JOBS, MAX_DAYS, MAX_LINES = 256, 1000, 31, 32
MIN_MEMORY, MAX_MEMORY = 16 * 2**20, 16 * 2**40
#: The options a directive may set (any of the four systems): resources, queues, accounting, mail.
#: Not: output or error files, the working folder, the environment, arrays, dependencies, file staging.
DIRECTIVE_OPTIONS = frozenset({
    "gres", "gpus", "gpus-per-node", "gpus-per-task", "cpus-per-gpu", "mem-per-gpu", "mem-per-cpu", "constraint",
    "C", "qos", "reservation", "exclusive", "tmp", "hint", "licenses", "L", "nice", "comment", "mail-type",
    "mail-user", "time-min", "signal", "requeue", "no-requeue", "partition", "account", "l", "q", "A", "P", "pe",
    "R", "gpu", "n", "M", "m", "N", "x",
})
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}")
_PATH = re.compile(r"[A-Za-z0-9_./~+-]{1,512}")
_INTERFACE = re.compile(r"[A-Za-z0-9_.:-]{1,32}")
_DIRECTIVE = re.compile(r"(-{1,2})([A-Za-z][A-Za-z-]*)(?:[ =]([A-Za-z0-9_.,:=/@+%*\[\]-]{1,256}))?")
_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B)", re.IGNORECASE)
_WALLTIME = re.compile(r"(?:(\d{1,2})-)?(\d{1,4}):(\d{2})(?::(\d{2}))?")
#: The setup lines a file may hold: none can run anything but the named command.
_SETUP_FORMS = (
    re.compile(r"module (?:load|add|purge|use|swap|unload)(?: [A-Za-z0-9_./+-]{1,128}){0,16}"),
    re.compile(r"(?:source|\.) [A-Za-z0-9_./~+-]{1,512}"),
    re.compile(r"conda activate [A-Za-z0-9_./~+-]{1,512}"),
    re.compile(r"export [A-Za-z_][A-Za-z0-9_]{0,63}=[A-Za-z0-9_./:,@+=%-]{0,512}"),
)


def memory_bytes(text: str) -> int | None:
    match = _MEMORY.fullmatch(text.strip()) if isinstance(text, str) else None
    if not match:
        return None
    unit = match.group(2).upper()
    return int(float(match.group(1)) * (1024 if "I" in unit else 1000) ** "KMGT".index(unit[0]) * (
        1024 if "I" in unit else 1000))


def walltime_seconds(text: str) -> int | None:
    match = _WALLTIME.fullmatch(text.strip()) if isinstance(text, str) else None
    if not match:
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    if minutes > 59 or seconds > 59:
        return None
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _integer(value, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _lines(value) -> list | None:
    value = [value] if isinstance(value, str) else value
    return value if isinstance(value, list) and len(value) <= MAX_LINES and all(isinstance(v, str) for v in value) \
        else None


def problem(key: str, value, *, own: bool = False) -> str | None:
    """What is wrong with ``value`` for the ``[cluster]`` key ``key``, or None. ``own``: the value is the
    user's (a command-line option, a Python argument), so a setup line may be any single line."""
    key = key.replace("_", "-")
    if key not in KEYS:
        from ..host._names import did_you_mean

        return f"unknown key {key!r} in [cluster]{did_you_mean(key, KEYS)}; keys are {', '.join(KEYS)}"
    if key in ("partition", "account"):
        return None if isinstance(value, str) and _NAME.fullmatch(value) else (
            f"{key} must be a plain name (letters, digits, '.', '_', '-', '@', '+'), not {value!r}")
    if key == "cores":
        return None if _integer(value, 1, MAX_CORES) else (
            f"cores must be an integer from 1 to {MAX_CORES}, not {value!r}")
    if key == "max-jobs":
        return None if _integer(value, 1, MAX_JOBS) else (
            f"max-jobs must be an integer from 1 to {MAX_JOBS:,}, not {value!r}")
    if key == "memory":
        size = memory_bytes(value)
        return None if size is not None and MIN_MEMORY <= size <= MAX_MEMORY else (
            f"memory must be a size such as 4GB or 500MiB, from 16MiB to 16TiB, not {value!r}")
    if key == "walltime":
        seconds = walltime_seconds(value)
        return None if seconds and seconds <= MAX_DAYS * 86400 else (
            f"walltime must be [D-]HH:MM[:SS], more than 0 and at most {MAX_DAYS} days, not {value!r}")
    if key in ("venv", "python"):
        return None if isinstance(value, str) and _PATH.fullmatch(value) and ".." not in value.split("/") else (
            f"{key} must be a plain path (letters, digits, '_', '.', '/', '~', '+', '-'), not {value!r}")
    if key == "interface":
        return None if isinstance(value, str) and _INTERFACE.fullmatch(value) else (
            f"interface must be a network interface name such as ib0 or eth0, not {value!r}")
    lines = _lines(value)
    if lines is None:
        return f"{key} must be a line or a list of at most {MAX_LINES} lines, not {value!r}"
    for line in lines:
        if key == "directives":
            match = _DIRECTIVE.fullmatch(line)
            if not match or match.group(2) not in DIRECTIVE_OPTIONS:
                return (f"directive {line!r} is not allowed: give -x or --option[=value] with one of the options "
                        f"{', '.join(sorted(DIRECTIVE_OPTIONS))} and a plain value")
        elif own:
            if not line.strip() or any(c in line for c in "\n\r\0"):
                return f"setup line {line!r} must be one non-empty line"
        elif not any(form.fullmatch(line) for form in _SETUP_FORMS):
            return (f"setup line {line!r} is not allowed in a file: use 'module load NAME...', 'source PATH', "
                    f"'conda activate NAME' or 'export NAME=VALUE' with plain words (give other lines yourself "
                    f"with --setup)")
    return None


def check(options: dict, *, own: bool = True) -> dict:
    """``options`` with ``-`` keys, every value checked (a ``UsageError`` names the first problem)."""
    from ..errors import UsageError

    out = {}
    for key, value in (options or {}).items():
        if value is None:
            continue
        if message := problem(key, value, own=own):
            raise UsageError(message)
        out[key.replace("_", "-")] = value
    return out


def check_cluster(system: str, options: dict | None) -> dict:
    """:func:`check` for ``--cluster system``: the system is one of :data:`SYSTEMS`, options the user's own."""
    from ..errors import UsageError

    if system not in SYSTEMS:
        raise UsageError(f"--cluster must be one of {', '.join(SYSTEMS)}, not {system!r}")
    return check(options or {}, own=True)
