"""Two learning curves (``returns.csv``) compared, with a verdict and an overlay plot.

A deterministic trainer (``deterministic = True`` on its class) must give the very same curve: every
episode's return and length. Another trainer is *reproduced within tolerance* when the mean return
of its last 100 episodes is within :data:`TOLERANCE` of the recorded one (relative, with
:data:`ABSOLUTE_FLOOR` for means near zero): seeds fix the environments and the sampling, so what
remains is floating-point order (threads, BLAS, GPU kernels), which moves single episodes but a
working trainer's final mean by a few percent; 10% tolerates that and still catches a trainer,
version or setting that learns differently.
"""

from __future__ import annotations

import csv
import io
import math
import os

TOLERANCE = 0.10
ABSOLUTE_FLOOR = 1.0
MAX_CURVE_BYTES = 256 * 1024 * 1024  #: the most of a returns.csv that is read
WINDOW = 100


class CurveError(ValueError):
    """A returns.csv that cannot be read as a curve (the message says why)."""


def read_curve(path: str) -> list[tuple[float, int]]:
    """``(return, length)`` per episode from a run's returns.csv, read bounded and checked."""
    from ..trackers import open_run_file

    try:
        handle = open_run_file(path, binary=True)
    except (OSError, ValueError):
        raise CurveError(f"{path} is not a file") from None
    with handle:
        data = handle.read(MAX_CURVE_BYTES + 1)
    if len(data) > MAX_CURVE_BYTES:
        raise CurveError(f"{path} is larger than {MAX_CURVE_BYTES // 2**20} MiB")
    data = data[: data.rfind(b"\n") + 1] if not data.endswith(b"\n") else data  # a row cut by a killed run
    reader = csv.DictReader(io.StringIO(data.decode("utf-8", "replace")))
    try:
        fields = reader.fieldnames
    except csv.Error as exc:
        raise CurveError(f"{path} line 1: {exc}") from None
    if not fields or not {"return", "length"} <= set(fields):
        raise CurveError(f"{path} has no return and length columns")
    curve = []
    rows = enumerate(reader, start=2)
    while True:
        try:
            number, row = next(rows)
        except StopIteration:
            break
        except csv.Error as exc:  # a field over csv's limit, a NUL...
            raise CurveError(f"{path} line {len(curve) + 2}: {exc}") from None
        try:
            value, length = float(row["return"]), int(row["length"])
        except (TypeError, ValueError):
            raise CurveError(f"{path} line {number}: not a return and a length") from None
        if not math.isfinite(value) or length < 0:
            raise CurveError(f"{path} line {number}: return {value}, length {length}")
        curve.append((value, length))
    if not curve:
        raise CurveError(f"{path} holds no episode")
    return curve


def last_mean(curve: list[tuple[float, int]], window: int = WINDOW) -> float:
    tail = curve[-window:]
    return sum(r for r, _ in tail) / len(tail)


def compare(recorded: list[tuple[float, int]], new: list[tuple[float, int]], *, deterministic: bool) -> dict:
    """``{"reproduced", "identical", "verdict", "recorded_last100", "new_last100", ...}``."""
    old_mean, new_mean = last_mean(recorded), last_mean(new)
    result = {"identical": recorded == new, "deterministic": deterministic, "episodes": [len(recorded), len(new)],
              "recorded_last100": old_mean, "new_last100": new_mean}
    if result["identical"]:
        return {**result, "reproduced": True, "verdict": "reproduced: identical"}
    if deterministic:
        shorter = min(len(recorded), len(new))
        first = next((i for i, (a, b) in enumerate(zip(recorded, new, strict=False)) if a != b), shorter)
        where = (f"episode {first + 1} returned {_num(recorded[first][0])} in the run, {_num(new[first][0])} now"
                 if first < shorter else f"{len(recorded)} episodes in the run, {len(new)} now")
        return {**result, "reproduced": False,
                "verdict": f"NOT reproduced: the trainer is deterministic but the curves differ ({where})"}
    allowed = max(TOLERANCE * abs(old_mean), ABSOLUTE_FLOOR)
    gap = abs(new_mean - old_mean)
    said = (f"last-100 mean {_num(new_mean)} vs {_num(old_mean)} recorded "
            f"(|difference| {_num(gap)}, tolerance {_num(allowed)} = {TOLERANCE:.0%})")
    if gap <= allowed:
        return {**result, "reproduced": True, "verdict": f"reproduced within tolerance: {said}"}
    return {**result, "reproduced": False, "verdict": f"NOT reproduced: {said}"}


def _num(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value):,}"


def _rolling(values: list[float], window: int = WINDOW) -> list[float]:
    out, total = [], 0.0
    for index, value in enumerate(values):
        total += value
        if index >= window:
            total -= values[index - window]
        out.append(total / min(index + 1, window))
    return out


def overlay_plot(recorded, new, path: str, title: str) -> str:
    """The two curves (each episode faint, the mean of the last 100 bold) in one PNG, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(8, 4.5))
    for curve, colour, label in ((recorded, "tab:blue", "recorded"), (new, "tab:orange", "reproduced")):
        returns = [r for r, _ in curve]
        episodes = range(1, len(returns) + 1)
        axis.plot(episodes, returns, color=colour, alpha=0.25, linewidth=0.6)
        axis.plot(episodes, _rolling(returns), color=colour, linewidth=2.0,
                  linestyle="-" if label == "recorded" else "--", label=f"{label} (mean of last {WINDOW})")
    axis.set_xlabel("episode")
    axis.set_ylabel("return")
    axis.set_title(title)
    axis.legend()
    figure.tight_layout()
    tmp = f"{path}.partial{os.getpid()}.png"
    figure.savefig(tmp, dpi=100)
    plt.close(figure)
    os.replace(tmp, path)
    return path
