"""A driver that died: its trials left running are failed, and the settings they drew queued again."""

from __future__ import annotations

import os
import socket

from ._storage import _optuna


def _driver_id() -> str:
    """This process: host, pid and start time (so a reused pid is not taken for a live driver)."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return ""


def _driver_dead(driver: str) -> bool:
    host, _, rest = str(driver).partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's driver: left alone
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _start_time(int(pid)) != started


def recover(study) -> list[int]:
    """Trials left running by a dead driver of this machine: failed, and their settings queued again.

    A trial killed before any setting was drawn is only failed: the next trial draws afresh anyway (one
    killed halfway through drawing is queued with what it drew; the rest is drawn again).
    """
    optuna = _optuna()
    requeued = []
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        if _driver_dead(trial.user_attrs.get("driver", "")):
            study._storage.set_trial_state_values(trial._trial_id, optuna.trial.TrialState.FAIL)
            if trial.params:
                study.enqueue_trial(dict(trial.params), user_attrs={"retry_of": trial.number})
                requeued.append(trial.number)
    return requeued
