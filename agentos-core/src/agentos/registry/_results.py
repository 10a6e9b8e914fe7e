"""The results record (``results.json``, format ``agentos-results/1``): validated as another person's data.

A trained-policy package ships one record of how it played: the environment (name, package,
version, and the task for an environment that plays many, e.g. ``CartPole-v1``) and the policy,
the episodes with their seeds, per-episode returns and lengths, and their summary (mean, std, IQM
and its bootstrap interval). :func:`parse_results_record` is the one gate every
record passes (the writer checks what it writes, the index what it receives): at most
:data:`MAX_RECORD` bytes, exactly the allowlisted keys, the exact format string, names that follow
the component-name rules, versions that parse, finite numbers, lists as long as ``episodes`` says,
and a summary that agrees with the returns. Anything else raises :class:`ResultsRecordError`, one
line that names the field.
"""

from __future__ import annotations

import json
import math
import re

from ..errors import PublishError

FORMAT = "agentos-results/1"
MAX_RECORD = 1 << 20  # bytes of results.json
MAX_EPISODES = 100_000
MAX_METRICS = 64
MAX_NAME = 100  # characters of a component or package name
MAX_VERSION = 64
MAX_SEED = 2**32 - 1  # agentos evaluate's seeds (numpy's legacy seeding and Gymnasium accept 32-bit seeds)
MAX_MAGNITUDE = 1e15  # of every number: sums and squares of 100,000 of them stay finite
SUMMARY_TOLERANCE = 1e-6  # relative: mean and IQM must be those of the returns
REQUIRED = (
    "format",
    "environment",
    "policy",
    "episodes",
    "seeds",
    "returns",
    "lengths",
    "mean",
    "std",
    "iqm",
    "interval",
    "confidence",
    "metrics",
    "created",
    "agentos",
)
OPTIONAL = ("replay",)
_PART_KEYS = ("name", "package", "version")
_PACKAGE_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_METRIC_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_. -]{0,63}$")
_CREATED_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
REPLAY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.gif$")


class ResultsRecordError(PublishError):
    """A results record that is not a valid ``agentos-results/1`` record (one line, naming the field)."""


def _refuse(what: str):
    raise ResultsRecordError(f"results record: {what}")


def _loads(data: bytes) -> dict:
    if len(data) > MAX_RECORD:
        _refuse(f"{len(data)} bytes (at most {MAX_RECORD >> 20} MiB)")

    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            _refuse("a key appears twice in one object")
        return dict(items)

    def constant(name):
        _refuse(f"{name} is not a finite number")

    try:
        text = data.decode("utf-8")
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except ResultsRecordError:
        raise
    except UnicodeDecodeError:
        _refuse("not UTF-8")
    except RecursionError:
        _refuse("nested too deeply")
    except ValueError as exc:  # JSONDecodeError, or an integer of more than 4,300 digits
        _refuse(f"not JSON ({str(exc).splitlines()[0][:120]})")


def _number(value, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _refuse(f"{field} must be a number, not {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        _refuse(f"{field} is not a finite number")
    if not math.isfinite(number):
        _refuse(f"{field} is not a finite number")
    if abs(number) > MAX_MAGNITUDE:
        _refuse(f"{field} is {number:.3g}, beyond +-{MAX_MAGNITUDE:.0e}")
    return number


def _integer(value, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _refuse(f"{field} must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        _refuse(f"{field} must be between {low} and {high}")
    return value


def _version(value, field: str) -> str:
    from packaging.version import InvalidVersion, Version

    if not isinstance(value, str) or len(value) > MAX_VERSION:
        _refuse(f"{field} must be a version string of at most {MAX_VERSION} characters")
    try:
        return str(Version(value))
    except InvalidVersion:
        _refuse(f"{field} {value[:MAX_VERSION]!r} is not a valid version")


def _part(value, field: str) -> dict:
    """``environment`` or ``policy``: exactly ``name``, ``package``, ``version`` (an environment may
    add ``task``, a task id: :func:`agentos.core._tasks.task_problem`)."""
    from ..core._tasks import task_problem
    from ..host._names import is_valid_name

    keys = set(value) - {"task"} if isinstance(value, dict) and field == "environment" else value
    if not isinstance(value, dict) or set(keys) != set(_PART_KEYS):
        extra = " (and optionally task)" if field == "environment" else ""
        _refuse(f"{field} must be an object with exactly the keys {', '.join(_PART_KEYS)}{extra}")
    name, package = value["name"], value["package"]
    if not isinstance(name, str) or len(name) > MAX_NAME or not is_valid_name(name) or "\n" in name:
        _refuse(f"{field}.name must be a component name (letters, digits, '.', '_', '-'; at most {MAX_NAME})")
    if not isinstance(package, str) or len(package) > MAX_NAME or not _PACKAGE_RE.fullmatch(package):
        _refuse(f"{field}.package must be a distribution name (at most {MAX_NAME} characters)")
    out = {"name": name, "package": package, "version": _version(value["version"], f"{field}.version")}
    if "task" in value and field == "environment":
        problem = task_problem(value["task"])
        if problem:
            _refuse(f"environment.task {problem}")
        out["task"] = value["task"]
    return out


def _numbers(value, field: str, episodes: int, integer: bool = False) -> list:
    if not isinstance(value, list):
        _refuse(f"{field} must be a list, not {type(value).__name__}")
    if len(value) != episodes:
        _refuse(f"{field} has {len(value)} entries, but episodes is {episodes}")
    if integer:
        high = MAX_SEED if field == "seeds" else 2**62
        return [_integer(v, f"{field}[{i}]", 0, high) for i, v in enumerate(value)]
    return [_number(v, f"{field}[{i}]") for i, v in enumerate(value)]


def interquartile_mean(values: list[float]) -> float:
    """The mean of the middle half (``scipy.stats.trim_mean(values, 0.25)``, as rliable's IQM)."""
    ordered = sorted(values)
    cut = int(0.25 * len(ordered))
    middle = ordered[cut : len(ordered) - cut]
    return math.fsum(middle) / len(middle)


def _agrees(claimed: float, actual: float) -> bool:
    return abs(claimed - actual) <= SUMMARY_TOLERANCE * max(1.0, abs(claimed), abs(actual))


def _check_summary(record: dict) -> None:
    """mean, IQM and std are those of the returns (std: population or sample, either is accepted)."""
    returns = record["returns"]
    n = len(returns)
    mean = math.fsum(returns) / n
    if not _agrees(record["mean"], mean):
        _refuse(f"mean {record['mean']!r} is not the mean of the returns ({mean!r})")
    iqm = interquartile_mean(returns)
    if not _agrees(record["iqm"], iqm):
        _refuse(f"iqm {record['iqm']!r} is not the interquartile mean of the returns ({iqm!r})")
    squares = math.fsum((r - mean) ** 2 for r in returns)
    stds = [math.sqrt(squares / n)] + ([math.sqrt(squares / (n - 1))] if n > 1 else [])
    if not any(_agrees(record["std"], s) for s in stds):
        _refuse(f"std {record['std']!r} is not the standard deviation of the returns ({stds[0]!r})")


def parse_results_record(data: bytes | str | dict) -> dict:
    """A validated copy of the results record ``data`` (its JSON bytes, or the decoded object).

    Raises :class:`ResultsRecordError` (a :class:`~agentos.errors.PublishError`) with one line on
    anything but a valid ``agentos-results/1`` record; see the module docstring for the rules.
    """
    from datetime import datetime

    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if isinstance(data, (bytes, bytearray, memoryview)):
        record = _loads(bytes(data))
    elif isinstance(data, dict):
        try:
            size = len(json.dumps(data, allow_nan=False).encode("utf-8", "surrogatepass"))
        except (TypeError, ValueError, RecursionError) as exc:
            _refuse(f"not representable as JSON ({str(exc)[:120]})")
        if size > MAX_RECORD:
            _refuse(f"{size} bytes as JSON (at most {MAX_RECORD >> 20} MiB)")
        record = data
    else:
        _refuse(f"expected JSON bytes or an object, not {type(data).__name__}")
    if not isinstance(record, dict):
        _refuse("must be a JSON object")
    unknown = sorted(set(record) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        _refuse(f"unknown key {str(unknown[0])[:40]!r} (allowed: {', '.join(REQUIRED + OPTIONAL)})")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        _refuse(f"missing key {missing[0]!r}")
    if record["format"] != FORMAT:
        _refuse(f"format must be exactly {FORMAT!r}")
    out: dict = {"format": FORMAT}
    out["environment"] = _part(record["environment"], "environment")
    out["policy"] = _part(record["policy"], "policy")
    episodes = out["episodes"] = _integer(record["episodes"], "episodes", 1, MAX_EPISODES)
    out["seeds"] = _numbers(record["seeds"], "seeds", episodes, integer=True)
    if len(set(out["seeds"])) != episodes:  # one seed per episode: a repeated lucky seed is not a sample
        _refuse("seeds must be distinct (one seed per episode)")
    out["returns"] = _numbers(record["returns"], "returns", episodes)
    out["lengths"] = _numbers(record["lengths"], "lengths", episodes, integer=True)
    for key in ("mean", "std", "iqm"):
        out[key] = _number(record[key], key)
    interval = record["interval"]
    if interval is not None:
        if not isinstance(interval, list) or len(interval) != 2:
            _refuse("interval must be [low, high] or null")
        low, high = (_number(v, "interval") for v in interval)
        if low > high:
            _refuse("interval: low is above high")
        interval = [low, high]
    out["interval"] = interval
    out["confidence"] = _number(record["confidence"], "confidence")
    if not 0 < out["confidence"] < 1:
        _refuse("confidence must be between 0 and 1 (e.g. 0.95)")
    metrics = record["metrics"]
    if not isinstance(metrics, dict) or len(metrics) > MAX_METRICS:
        _refuse(f"metrics must be an object of at most {MAX_METRICS} numbers")
    for name in metrics:
        if not isinstance(name, str) or not _METRIC_RE.fullmatch(name):
            _refuse(f"metric name {str(name)[:70]!r}: letters, digits, '_', '.', '-', spaces (at most 64)")
    out["metrics"] = {name: _number(value, f"metrics.{name}") for name, value in metrics.items()}
    created = record["created"]
    if not isinstance(created, str) or not _CREATED_RE.fullmatch(created):
        _refuse("created must be a UTC time like 2026-11-24T10:00:00Z")
    try:
        datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        _refuse(f"created {created!r} is not a valid time")
    out["created"] = created
    out["agentos"] = _version(record["agentos"], "agentos")
    replay = record.get("replay")
    if replay is not None:
        if not isinstance(replay, str) or not REPLAY_RE.fullmatch(replay):
            _refuse("replay must be a plain .gif file name in the package's folder (no path)")
        out["replay"] = replay
    _check_summary(out)
    return out
