"""Built-in run trackers: pluggy hook implementations, registered like any other tracker.

* :class:`CsvPlotTracker` writes ``returns.csv``, ``returns100.csv`` and ``returns.png`` into the run
  record (``run.extra["record"]``); it does nothing for runs without a record.
* Both write the named scalars of :func:`agentos.plugin_api.report_metrics` (``metrics.csv``; TensorBoard
  scalars).
* :class:`TensorBoardTracker` writes episode returns and lengths as TensorBoard scalars into
  ``<record>/tensorboard/`` when the ``tensorboard`` package is installed (disable it with
  ``AGENTOS_DISABLE_PLUGINS=tensorboard``).

Third-party trackers implement the same hooks (see :mod:`agentos.hookspecs`) and join through the
``agentos.plugins`` entry point group.
"""

from __future__ import annotations

import math
import os
import time
from collections import deque

from ..plugins import hookimpl
from ._scalars import METRICS_CSV

RETURNS_CSV = "returns.csv"
RETURNS100_CSV = "returns100.csv"
PLOT_PNG = "returns.png"


def _stats(values) -> tuple[float, float, float, float]:
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    return mean, std, max(values), min(values)


_pending: dict = {}


def attach_to_next_run(**extra) -> None:
    """Put ``extra`` (e.g. ``record=``) into ``run.extra`` of the next run that starts.

    ``agentos run`` uses this to hand its run record to the trackers through ``run_agent``.
    """
    _pending.update(extra)


class RecordAttacher:
    """Runs first at ``run_start``: moves what :func:`attach_to_next_run` was given into the run."""

    @hookimpl(tryfirst=True)
    def agentos_run_start(self, run):
        if _pending:
            for key, value in _pending.items():
                run.extra.setdefault(key, value)
            _pending.clear()


class CsvPlotTracker:
    """returns.csv (every episode), returns100.csv (every 100 episodes) and a PNG learning curve.

    Each row reaches the file as its episode ends, in one ``write`` of the whole line to a file opened
    for appending: a running run, one stopped by Ctrl-C and one killed outright (SIGKILL, a power cut
    aside) all have every finished episode's row, and never a row cut in two by the writer's buffer.
    ``frame`` is the run's cumulative step count at the end of the episode (the curve by timesteps).
    """

    @hookimpl
    def agentos_run_start(self, run):
        record = run.extra.get("record")
        if record is None:
            return
        f = RowFile(record.path(RETURNS_CSV))
        metrics = run.extra.get("metrics")  # the environment's declared episode metrics, as extra columns
        names = metrics.names if metrics is not None else []
        agents = seat_ids(run.agent)  # a multi-agent run: one return column per agent
        columns = [*names, *(f"return_{_column_safe(a)}" for a in agents)]
        f.write(",".join(["episode", "frame", "return", "length", "seconds", *columns]) + "\n")
        run.extra["csv"] = {"file": f, "frame": 0, "last100": deque(maxlen=100), "started": time.perf_counter(),
                            "metrics": metrics, "agents": agents}

    @hookimpl
    def agentos_episode_end(self, run, episode, episode_return, length, info):
        state = run.extra.get("csv")
        if state is None:
            return
        state["frame"] += length
        last100 = state["last100"]
        last100.append(episode_return)
        n = len(run.episodes)
        line = f"{n},{state['frame']},{episode_return!r},{length},{time.perf_counter() - state['started']:.3f}"
        metrics = state["metrics"]
        if metrics is not None:
            last = metrics.last
            line += "".join("," if last.get(k) is None else f",{_cell(last[k])}" for k in metrics.names)
        if state["agents"]:
            returns = (run.episodes[-1].returns if run.episodes else None) or {}
            line += "".join("," if returns.get(a) is None else f",{float(returns[a])!r}" for a in state["agents"])
        state["file"].write(line + "\n")
        if n % 100 == 0:
            mean, std, high, low = _stats(last100)
            with open(run.extra["record"].path(RETURNS100_CSV), "a", encoding="utf-8") as f100:
                f100.write(f"{state['frame']},{mean!r},{std!r},{high!r},{low!r}\n")

    @hookimpl
    def agentos_metrics(self, run, step, values):
        state = run.extra.get("csv")
        if state is None:
            return
        if state.get("metrics_file") is None:
            state["metrics_file"] = RowFile(run.extra["record"].path(METRICS_CSV))
            state["metrics_file"].write("step,name,value\n")
        state["metrics_file"].write("".join(f"{step},{name},{value!r}\n" for name, value in values.items()))

    @hookimpl
    def agentos_run_end(self, run, summary):
        state = run.extra.pop("csv", None)
        if state is None:
            return
        state["file"].close()
        if state.get("metrics_file") is not None:
            state["metrics_file"].close()
        record = run.extra["record"]
        if not os.path.exists(record.path(RETURNS100_CSV)):
            open(record.path(RETURNS100_CSV), "w").close()
        if os.environ.get("AGENTOS_RUN_PLOT") == "0":  # experiments draw one plot for all their trials
            return
        metrics = summary.get("metrics") if isinstance(summary, dict) else None
        rates = [name for name, entry in (metrics or {}).items()
                 if isinstance(entry, dict) and entry.get("kind") == "rate"]
        try:
            plot_returns(record.directory, title=_title(record), rates=rates)
        except Exception as exc:  # a missing matplotlib must not lose the run
            record.meta["plot_error"] = f"{type(exc).__name__}: {exc}"


class RowFile:
    """A CSV file whose every ``write`` (whole lines) goes to the disk at once, appended."""

    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        while data:  # a regular file takes it in one write; a short write goes on where it stopped
            data = data[os.write(self.fd, data):]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def complete_lines(text: str) -> str:
    """``text`` without a last line that has no newline (a row a killed writer may have cut short)."""
    return text if text.endswith("\n") else text[: text.rfind("\n") + 1]


def seat_ids(agent) -> list:
    """The agent ids of a multi-agent run's environment (``[]`` for a single-agent run)."""
    environment = getattr(agent, "environment", None)
    if not hasattr(environment, "agent_iter"):
        return []
    return list(getattr(environment, "possible_agents", []) or [])


def _column_safe(agent) -> str:
    """An agent id as a CSV column name: letters, digits and ``_ . -`` only."""
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in str(agent))[:64]


def _cell(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def _title(record) -> str:
    comps = record.meta.get("components", {})
    parts = [comps.get(k) for k in ("environment", "policy", "trainer") if comps.get(k)]
    return f"{record.meta.get('mode', 'run')} {record.id}: " + " / ".join(parts)


#: The longest row of returns.csv that is read (its episode metrics included); a longer one ends the reading.
MAX_ROW_CHARS = 64 * 1024


def open_run_file(path: str, *, binary: bool = False):
    """A run folder's file for reading (as text, or bytes with ``binary``): a regular file itself, never a
    link, a FIFO or a device (a run folder may come from someone else); ``ValueError`` otherwise."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if os.path.islink(path):
            raise ValueError(f"{path} is a link, not a file") from None
        raise exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{path} is not a regular file")
    return open(fd, "rb") if binary else open(fd, encoding="utf-8", errors="replace")


def iter_returns(directory: str):
    """``(frame, return)`` of each whole row of a run's returns.csv, streamed (memory stays small)."""
    with open_run_file(os.path.join(directory, RETURNS_CSV)) as f:
        f.readline(MAX_ROW_CHARS)
        while True:
            line = f.readline(MAX_ROW_CHARS)
            if not line.endswith("\n"):  # the end, a row being written or cut by a killed run, or too long
                return
            cells = line.rstrip("\n").split(",")
            if len(cells) >= 3:
                yield int(cells[1]), float(cells[2])


def read_returns(directory: str) -> tuple[list[int], list[float]]:
    """(frames, returns) from a run's returns.csv."""
    frames, returns = [], []
    for frame, value in iter_returns(directory):
        frames.append(frame)
        returns.append(value)
    return frames, returns


def read_metric_columns(directory: str, names) -> dict[str, list[float]]:
    """Per-episode values of the episode-metric columns ``names`` of a run's returns.csv (NaN where empty)."""
    import csv
    import io

    columns: dict[str, list[float]] = {name: [] for name in names}
    with open_run_file(os.path.join(directory, RETURNS_CSV)) as f:
        for row in csv.DictReader(io.StringIO(complete_lines(f.read()))):
            for name, values in columns.items():
                cell = row.get(name)
                try:
                    values.append(float(cell) if cell not in (None, "") else math.nan)
                except ValueError:
                    values.append(math.nan)
    return {name: values for name, values in columns.items() if values}


def plot_returns(directory: str, *, title: str = "", out: str | None = None, rates=()) -> str:
    """Draw a run's learning curve (:func:`returns_figure`) to a PNG, by default ``returns.png``."""
    import matplotlib.pyplot as plt

    fig = returns_figure(directory, title=title, rates=rates)
    out = out or os.path.join(directory, PLOT_PNG)
    fig.savefig(out)
    plt.close(fig)
    return out


def returns_figure(directory: str, *, title: str = "", rates=()):
    """A run's learning curve: the mean return of windows of 100 episodes (1% of a long run) with the
    middle half of their returns as a band (:mod:`agentos.trackers._curves`), and the rate metrics
    ``rates`` (columns of returns.csv, e.g. ``reached_2048``) in percent on a second axis."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    from ._curves import plain_ticks, window_stats, window_width

    frames, returns = read_returns(directory)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    handles = []
    if frames:
        ends, mean, low, high = window_stats(returns)
        xs = np.asarray(frames)[ends]
        width = window_width(len(returns))
        handles.append(ax.fill_between(xs, low, high, color="tab:blue", alpha=0.2, linewidth=0,
                                       label=f"middle half of {width:,} episodes"))
        handles += ax.plot(xs, mean, color="tab:blue", linewidth=2, label=f"mean of last {width:,}")
        rate_columns = read_metric_columns(directory, rates) if rates else {}
        if rate_columns:
            rate_axis = ax.twinx()
            for (name, values), color in zip(rate_columns.items(), ("tab:red", "tab:orange", "tab:green",
                                                                     "tab:purple", "tab:brown"), strict=False):
                kept = np.asarray(values, dtype=float)
                seen = ~np.isnan(kept)
                if not seen.any():
                    continue
                rate_ends, rate, _, _ = window_stats(kept[seen])
                positions = np.flatnonzero(seen)[rate_ends]
                handles += rate_axis.plot(np.asarray(frames)[positions], 100 * rate, color=color, linewidth=1.2,
                                          label=f"{name} (%)")
            rate_axis.set_ylim(0, 100)
            rate_axis.set_ylabel("episodes (%)")
    ax.set_xlabel("steps")
    ax.set_ylabel("return")
    plain_ticks(ax)
    if title:
        ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize=8)  # "best" searches every point: slow
    fig.tight_layout()
    return fig


class TensorBoardTracker:
    """Episode return and length as TensorBoard scalars, in ``<record>/tensorboard/``: by timesteps
    (``returns/episode``, ``episode/length``: the step of a point is the run's step count) and by
    episodes (``returns/by_episode``: the step is the episode number).

    Episodes are buffered and written every ``flush_seconds`` (and at the end of the run): building
    and queueing one event per episode as it ends costs more than many fast episodes themselves.
    """

    flush_seconds = 5.0

    @hookimpl
    def agentos_run_start(self, run):
        record = run.extra.get("record")
        if record is None:
            return
        try:
            from tensorboard.compat.proto import event_pb2, summary_pb2
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
        except Exception:  # tensorboard is optional
            return
        writer = EventFileWriter(record.path("tensorboard"))
        run.extra["tensorboard"] = {
            "writer": writer,
            "event": event_pb2,
            "summary": summary_pb2,
            "frame": 0,
            "pending": [],
            "flushed": time.perf_counter(),
        }

    @hookimpl
    def agentos_episode_end(self, run, episode, episode_return, length, info):
        state = run.extra.get("tensorboard")
        if state is None:
            return
        state["frame"] += length
        wall = time.time()
        pending = state["pending"]
        pending.append((wall, state["frame"], (("returns/episode", episode_return), ("episode/length", length))))
        pending.append((wall, len(run.episodes), (("returns/by_episode", episode_return),)))
        now = time.perf_counter()
        if now - state["flushed"] >= self.flush_seconds:
            self._flush(state)
            state["flushed"] = now

    @hookimpl
    def agentos_metrics(self, run, step, values):
        state = run.extra.get("tensorboard")
        if state is not None:
            state["pending"].append((time.time(), step, tuple(values.items())))

    @staticmethod
    def _flush(state) -> None:
        event_pb2, summary_pb2, writer = state["event"], state["summary"], state["writer"]
        value = summary_pb2.Summary.Value
        for wall, step, scalars in state["pending"]:
            summary = summary_pb2.Summary(value=[value(tag=tag, simple_value=float(v)) for tag, v in scalars])
            writer.add_event(event_pb2.Event(wall_time=wall, step=step, summary=summary))
        state["pending"].clear()

    @hookimpl
    def agentos_run_end(self, run, summary):
        state = run.extra.pop("tensorboard", None)
        if state is not None:
            self._flush(state)
            state["writer"].close()


def register_builtin_trackers(pm=None) -> None:
    """Register the built-in trackers once (the TensorBoard one only when tensorboard is installed)."""
    import importlib.util

    from ..plugins import get_plugin_manager

    pm = pm or get_plugin_manager()
    if not pm.has_plugin("agentos-record"):
        pm.register(RecordAttacher(), name="agentos-record")
    if not pm.has_plugin("episode-metrics"):
        from ._metrics import EpisodeMetricsTracker

        pm.register(EpisodeMetricsTracker(), name="episode-metrics")
    if not pm.has_plugin("csv") and not _disabled("csv"):
        pm.register(CsvPlotTracker(), name="csv")
    if not pm.has_plugin("tensorboard") and not _disabled("tensorboard"):
        if importlib.util.find_spec("tensorboard") is not None:
            pm.register(TensorBoardTracker(), name="tensorboard")


def _disabled(name: str) -> bool:
    from ..host import DISABLE_ENV

    return name in {p.strip().lower() for p in os.environ.get(DISABLE_ENV, "").split(",")}
