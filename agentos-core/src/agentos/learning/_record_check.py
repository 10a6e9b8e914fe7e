"""A ``run.json`` is data that anyone with the folder wrote: read it bounded, check every field used.

A record that fails is refused with one reason (:class:`MalformedRecord`); ``agentos runs`` skips it
with one warning line naming the file, and the other runs still list and work.
"""

from __future__ import annotations

import json
import numbers
import os

#: The most of a run.json that is read, and the deepest nesting of its JSON.
MAX_RECORD_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 32

_TEXT_FIELDS = ("id", "mode", "status", "started", "finished", "agent_dir", "agent_ini", "checkpoint",
                "trainer_state", "parent", "error", "checkpoint_sha256", "trainer_state_sha256", "best_checkpoint",
                "best_checkpoint_sha256", "host")
_SUMMARY_NUMBERS = ("episodes", "steps", "steps_taken", "mean_return", "last100_mean", "min_return", "max_return",
                    "steps_per_second", "seconds")


class MalformedRecord(ValueError):
    """A run.json that cannot be used (the message says why)."""


def _depth_ok(value, depth: int = 0) -> bool:
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return all(_depth_ok(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return all(_depth_ok(v, depth + 1) for v in value)
    return True


def _number(value) -> bool:
    return value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool))


def read_record(path: str) -> dict:
    """The checked content of the run.json at ``path``; :class:`MalformedRecord` when it is not one."""
    meta = read_json(path)
    check_record(meta)
    return meta


def read_json(path: str):
    """The JSON value in ``path``, read bounded in size and nesting (:class:`MalformedRecord` if not)."""
    with open(path, "rb") as f:
        data = f.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise MalformedRecord(f"larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRecord("not UTF-8") from None
    try:
        value = json.loads(text)
    except RecursionError:  # the parser stops at the interpreter's recursion limit
        raise MalformedRecord(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise MalformedRecord(f"not JSON ({str(exc).splitlines()[0][:80]})") from None
    if not _depth_ok(value):
        raise MalformedRecord(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def check_record(meta) -> None:
    """Raise :class:`MalformedRecord` unless the fields that are used have their types."""
    if not isinstance(meta, dict):
        raise MalformedRecord(f"not a JSON object but {type(meta).__name__}")
    if not _depth_ok(meta):
        raise MalformedRecord(f"JSON nested deeper than {MAX_DEPTH} levels")
    if not isinstance(meta.get("id"), str) or not meta["id"]:
        raise MalformedRecord("'id' must be a non-empty string")
    for key in _TEXT_FIELDS:
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise MalformedRecord(f"{key!r} must be a string, not {type(meta[key]).__name__}")
    for key in ("seed", "pid"):
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise MalformedRecord(f"{key!r} must be an integer")
    for key in ("request", "summary", "components"):
        if meta.get(key) is not None and not isinstance(meta[key], dict):
            raise MalformedRecord(f"{key!r} must be an object, not {type(meta[key]).__name__}")
    components = meta.get("components") or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in components.items()):
        raise MalformedRecord("'components' must map kinds to component names")
    summary = meta.get("summary") or {}
    for key in _SUMMARY_NUMBERS:
        if not _number(summary.get(key)):
            raise MalformedRecord(f"summary {key!r} must be a number")
    metrics = summary.get("metrics")
    if metrics is not None and not isinstance(metrics, dict):
        raise MalformedRecord("summary 'metrics' must be an object")
    for where, evaluation in (("", meta.get("evaluation")), ("summary ", summary.get("evaluation"))):
        if evaluation is not None:
            _check_evaluation(evaluation, f"{where}'evaluation'")


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_evaluation(evaluation, label: str) -> None:
    """The fields of an ``evaluation`` (``[train]`` evaluation during training) that are shown and used."""
    if not isinstance(evaluation, dict):
        raise MalformedRecord(f"{label} must be an object")
    seeds = evaluation.get("seeds")
    if not isinstance(seeds, list) or not seeds or not all(_whole(s) for s in seeds):
        raise MalformedRecord(f"{label} 'seeds' must be a list of integers")
    if not _whole(evaluation.get("evaluations", 0)) or not _number(evaluation.get("reward_threshold")):
        raise MalformedRecord(f"{label} 'evaluations' must be an integer and 'reward_threshold' a number")
    for key in ("best", "stopped"):
        entry = evaluation.get(key)
        if entry is None:
            continue
        if (not isinstance(entry, dict) or not _whole(entry.get("steps")) or not _number(entry.get("mean_return"))
                or not isinstance(entry.get("checkpoint") or "", str)):
            raise MalformedRecord(f"{label} {key!r} must have integer 'steps' and a number 'mean_return'")


def warn_skipped(path: str, reason: str) -> None:
    """One warning line naming the record that is skipped."""
    import sys

    from .._safe_text import printable

    print(printable(f"agentos: warning: skipping malformed run record {os.path.abspath(path)}: {reason}"),
          file=sys.stderr)
