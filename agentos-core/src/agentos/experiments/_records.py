"""Trial records (``trials/<id>/trial.json``) read from an experiment folder and checked before use.

A record is data that anyone able to write the folder may have changed: it is read without
following links (``_folder``), checked field by field against what the summary and plots use,
and its ``run_dir`` is always the folder it was found in. A malformed record is one warning line
naming the file; resume then runs that trial again, and ``show`` leaves it out.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re

from ._folder import is_plain_path, read_file, warn

STATUSES = ("finished", "failed", "interrupted", "pruned")
TRIAL_ID = re.compile(r"^[0-9a-f]{16}$")
_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_PART_NUMBERS = ("episodes", "steps", "mean_return", "std_return", "last100_mean", "seconds", "steps_per_second")


class BadRecord(ValueError):
    """What is wrong with a record, in a few words."""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isinf(value)


def _check_part(name: str, part) -> None:
    """``train`` / ``test``: None or the brief summary a worker returned."""
    if part is None:
        return
    if not isinstance(part, dict):
        raise BadRecord(f"{name} is not an object")
    for key in _PART_NUMBERS:
        if part.get(key) is not None and not _number(part[key]):
            raise BadRecord(f"{name}.{key} is not a finite number")
    if part.get("status") is not None and not isinstance(part["status"], str):
        raise BadRecord(f"{name}.status is not a string")
    if part.get("run") is not None and not (isinstance(part["run"], str) and _RUN_NAME.match(part["run"])):
        raise BadRecord(f"{name}.run is not a run name")


def _check_arena(part) -> None:
    """``arena``: None or what ``_panel.play_panel`` returned (the numbers the table shows)."""
    if part is None:
        return
    if not isinstance(part, dict):
        raise BadRecord("arena is not an object")
    for key in ("games", "wins", "draws", "losses"):
        if not isinstance(part.get(key), int) or isinstance(part[key], bool) or part[key] < 0:
            raise BadRecord(f"arena.{key} is not a count")
    if part["wins"] + part["draws"] + part["losses"] != part["games"]:
        raise BadRecord("arena: wins, draws and losses do not add up to its games")
    if not _number(part.get("win_rate")) or not 0 <= part["win_rate"] <= 1 or not _number(part.get("elo")):
        raise BadRecord("arena.win_rate or arena.elo is not a finite number (win_rate from 0 to 1)")
    interval = part.get("elo_interval")
    if interval is not None and not (isinstance(interval, list) and len(interval) == 2 and all(map(_number, interval))):
        raise BadRecord("arena.elo_interval is not two numbers")


def check_record(data, trial_id: str) -> dict:
    """``data`` if it is a well-formed record of trial ``trial_id``; else :class:`BadRecord`."""
    if not isinstance(data, dict):
        raise BadRecord("not a JSON object")
    if data.get("id") != trial_id:
        raise BadRecord(f"its id is not {trial_id}")
    for key in ("agent", "environment", "status"):
        if not isinstance(data.get(key), str):
            raise BadRecord(f"{key} is missing or not a string")
    if data["status"] not in STATUSES:
        raise BadRecord(f"status is not one of {', '.join(STATUSES)}")
    if not isinstance(data.get("seed"), int) or isinstance(data["seed"], bool):
        raise BadRecord("seed is missing or not an integer")
    if not isinstance(data.get("settings", {}), dict):
        raise BadRecord("settings is not an object")
    if not isinstance(data.get("error", ""), str) or not isinstance(data.get("host") or "", str):
        raise BadRecord("error or host is not a string")
    attempts = data.get("attempts", 1)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
        raise BadRecord("attempts is not a count")
    for key in ("seconds", "pid"):
        if data.get(key) is not None and not _number(data[key]):
            raise BadRecord(f"{key} is not a finite number")
    for part in ("train", "test"):
        _check_part(part, data.get(part))
    _check_arena(data.get("arena"))
    return data


def read_record(folder: str, trial_id: str, *, then: str) -> dict | None:
    """The checked record of ``trial_id`` in ``folder``, or None when there is none or it is malformed
    (one warning line naming the file and ending with ``then``)."""
    rel = f"trials/{trial_id}/trial.json"
    path = os.path.join(folder, "trials", trial_id, "trial.json")
    try:
        data = check_record(json.loads(read_file(folder, rel)), trial_id)
    except FileNotFoundError:
        return None
    except OSError as exc:
        linked = exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EINVAL)
        reason = "a symbolic link or not a regular file (not followed)" if linked else (exc.strerror or str(exc))
        warn(f"{path}: unreadable trial record: {reason}; {then}")
        return None
    except (ValueError, RecursionError) as exc:  # JSON errors, BadRecord, an undecodable byte
        warn(f"{path}: malformed trial record: {str(exc).splitlines()[0][:200]}; {then}")
        return None
    data["run_dir"] = os.path.join(folder, "trials", trial_id)  # never a path the record names
    for part in ("train", "test"):
        run = (data.get(part) or {}).get("run")
        if run and not is_plain_path(folder, f"trials/{trial_id}/runs/{run}"):
            data[part] = dict(data[part], run=None)  # its files are missing or behind a link: not read
    return data


def load_trials(folder: str) -> tuple[list[dict], int]:
    """Every well-formed record in ``folder/trials`` (sorted by id) and how many were left out."""
    trials, skipped = [], 0
    try:
        names = sorted(os.listdir(os.path.join(folder, "trials")))
    except OSError:
        return [], 0
    for name in names:
        if not TRIAL_ID.match(name):
            continue  # not a trial folder (a temporary file, a note)
        path = os.path.join(folder, "trials", name)
        if not os.path.lexists(os.path.join(path, "trial.json")) and not os.path.islink(path):
            continue  # a trial that never finished
        record = read_record(folder, name, then="left out")
        if record is None:
            skipped += 1
        else:
            trials.append(record)
    return trials, skipped
