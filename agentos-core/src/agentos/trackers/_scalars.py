"""Named training scalars: a trainer's losses, entropy, learning rate, fps; evaluation returns.

:func:`report_metrics` (public as :func:`agentos.plugin_api.report_metrics`) checks the names and
values and calls the ``agentos_metrics`` hook of the training run in progress: the built-in CSV
tracker appends them to the run folder's ``metrics.csv`` (``step,name,value``, a row per value,
written as they come), the TensorBoard tracker writes them as scalars, the MLflow tracker logs them.
"""

from __future__ import annotations

import contextlib
import math
import re

#: A metric name: letters, digits and ``_ . / -`` (SB3's ``train/entropy_loss``), at most 100.
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,99}\Z")
MAX_VALUES = 256  #: the most values one call reports (the rest are left out)
METRICS_CSV = "metrics.csv"

_active: list = []  # the training runs in progress in this process, innermost last


@contextlib.contextmanager
def reporting_to(run):
    """Within the block, :func:`report_metrics` without ``run=`` reports to ``run`` (``agentos train``)."""
    _active.append(run)
    try:
        yield run
    finally:
        for i in range(len(_active) - 1, -1, -1):  # by identity: runs are dataclasses, equal when alike
            if _active[i] is run:
                del _active[i]
                break


def checked(values) -> dict[str, float]:
    """The finite numbers of ``values`` under valid names (others are left out, never an error)."""
    clean: dict[str, float] = {}
    if not isinstance(values, dict):
        return clean
    for name, value in list(values.items())[:MAX_VALUES]:
        if not isinstance(name, str) or not NAME.match(name) or isinstance(value, bool):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            continue
        if math.isfinite(number):
            clean[name] = number
    return clean


def report_metrics(values: dict, step: int | None = None, *, run=None) -> None:
    """Give the trackers ``values`` (``{name: number}``) at ``step`` (environment steps so far; by
    default the steps of the run's finished episodes) of ``run`` (by default the training run in
    progress). Names are letters, digits and ``_ . / -``; values that are not finite numbers are left
    out. Does nothing outside a run, so a trainer may call it unconditionally."""
    run = run if run is not None else (_active[-1] if _active else None)
    if run is None:
        return
    clean = checked(values)
    if not clean:
        return
    if step is None or isinstance(step, bool) or not isinstance(step, int) or step < 0:
        step = run.steps
    from ..plugins import get_plugin_manager

    hook = get_plugin_manager().hook.agentos_metrics
    if hook.get_hookimpls():
        hook(run=run, step=step, values=clean)
