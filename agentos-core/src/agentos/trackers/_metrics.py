"""Episode metrics: numbers an environment declares, read from each episode's final ``info``.

The convention needs no import of agentos: an environment names its metrics in its Gymnasium
``metadata`` under ``"episode_metrics"``, each as the ``info`` key it is read from::

    metadata = {"render_modes": [], "episode_metrics": {
        "best_tile": "max_tile",                # a number: summarized by its mean and maximum
        "reached_2048": "max_tile >= 2048",     # a test: summarized as a rate (share of episodes)
    }}

At the end of every episode (the step that returns ``terminated`` or ``truncated``) the final
``info`` is read once: nothing is done per step. A key missing from that ``info`` leaves the
episode out of that metric. The built-in :class:`EpisodeMetricsTracker` (a pluggy hook
implementation, registered with the run-record trackers) puts the summary into the run's summary as
``summary["metrics"]``: ``{name: {"kind": "value"|"rate", "episodes", "mean", "min", "max"}}``.
"""

from __future__ import annotations

import math
import operator
import re
import sys

from ..plugins import hookimpl

METADATA_KEY = "episode_metrics"
MAX_METRICS = 16
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}\Z")
_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]{0,63})\s*(?:(>=|<=|==|>|<)\s*([-+]?[0-9][0-9_]*(?:\.[0-9]+)?))?\s*\Z")
_TESTS = {">=": operator.ge, "<=": operator.le, "==": operator.eq, ">": operator.gt, "<": operator.lt}


def parse_metrics(declared) -> list[tuple[str, str, object, float | None]]:
    """``(name, info key, test or None, threshold)`` for each declared metric; ValueError when malformed."""
    if not isinstance(declared, dict):
        raise ValueError(f"metadata[{METADATA_KEY!r}] must be a dict of name -> 'info_key' or 'info_key >= N'")
    if len(declared) > MAX_METRICS:
        raise ValueError(f"at most {MAX_METRICS} episode metrics, not {len(declared)}")
    parsed = []
    for name, spec in declared.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"episode metric name {str(name)[:40]!r}: letters, digits and _ (at most 40)")
        match = _SPEC.match(spec) if isinstance(spec, str) else None
        if match is None:
            raise ValueError(f"episode metric {name}: {str(spec)[:60]!r} is not 'info_key' or 'info_key >= N'")
        key, test, threshold = match.groups()
        parsed.append((name, key, _TESTS[test] if test else None, float(threshold.replace("_", "")) if test else None))
    return parsed


class EpisodeMetrics:
    """Running sums of an environment's declared metrics over a run's episodes."""

    def __init__(self, declared):
        self.specs = parse_metrics(declared)
        self.names = [spec[0] for spec in self.specs]
        self.sums = {name: [0, 0.0, math.inf, -math.inf] for name in self.names}  # n, total, min, max
        self.last: dict[str, float | None] = {}

    def add(self, info) -> None:
        """Read one episode's final ``info``."""
        last = self.last = {}
        get = info.get if isinstance(info, dict) else None
        for name, key, test, threshold in self.specs:
            raw = get(key) if get is not None else None
            try:
                value = float(raw) if raw is not None else None
            except (TypeError, ValueError):
                value = None
            if value is None or value != value:
                last[name] = None
                continue
            if test is not None:
                value = 1.0 if test(value, threshold) else 0.0
            last[name] = value
            sums = self.sums[name]
            sums[0] += 1
            sums[1] += value
            sums[2] = min(sums[2], value)
            sums[3] = max(sums[3], value)

    def summary(self) -> dict:
        out = {}
        for name, _key, test, _threshold in self.specs:
            n, total, low, high = self.sums[name]
            out[name] = {"kind": "rate" if test is not None else "value", "episodes": n,
                         "mean": total / n if n else None, "min": low if n else None, "max": high if n else None}
        return out


def declared_metrics(environment) -> dict | None:
    """The ``episode_metrics`` an environment (or a wrapper around it) declares, if any."""
    try:
        metadata = getattr(environment, "metadata", None)
    except Exception:
        return None
    declared = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    return declared or None


class EpisodeMetricsTracker:
    """Collects the environment's declared metrics and adds them to the run's summary."""

    @hookimpl(tryfirst=True)  # before the CSV tracker, which writes this episode's values
    def agentos_run_start(self, run):
        declared = declared_metrics(getattr(run.agent, "environment", None))
        if declared is None:
            return
        try:
            run.extra["metrics"] = EpisodeMetrics(declared)
        except ValueError as exc:  # the environment's mistake: say it once, run without metrics
            print(f"agentos: warning: episode metrics ignored: {exc}", file=sys.stderr)

    @hookimpl(tryfirst=True)
    def agentos_episode_end(self, run, episode, episode_return, length, info):
        metrics = run.extra.get("metrics")
        if metrics is not None:
            metrics.add(info)

    @hookimpl(tryfirst=True)  # before the CSV tracker, whose plot shows the rates
    def agentos_run_end(self, run, summary):
        metrics = run.extra.get("metrics")
        if metrics is not None and isinstance(summary, dict):
            summary["metrics"] = metrics.summary()

