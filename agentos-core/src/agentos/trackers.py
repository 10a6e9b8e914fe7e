"""Built-in run trackers: pluggy hook implementations, registered like any other tracker.

* :class:`CsvPlotTracker` writes ``returns.csv``, ``returns100.csv`` and ``returns.png`` into the run
  record (``run.extra["record"]``); it does nothing for runs without a record.
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

from .plugins import hookimpl

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
    """returns.csv (every episode), returns100.csv (every 100 episodes) and a PNG learning curve."""

    @hookimpl
    def agentos_run_start(self, run):
        record = run.extra.get("record")
        if record is None:
            return
        f = open(record.path(RETURNS_CSV), "w", encoding="utf-8", buffering=1 << 16)
        f.write("episode,frame,return,length,seconds\n")
        run.extra["csv"] = {"file": f, "frame": 0, "last100": deque(maxlen=100), "started": time.perf_counter()}

    @hookimpl
    def agentos_episode_end(self, run, episode, episode_return, length, info):
        state = run.extra.get("csv")
        if state is None:
            return
        state["frame"] += length
        last100 = state["last100"]
        last100.append(episode_return)
        n = len(run.episodes)
        state["file"].write(
            f"{n},{state['frame']},{episode_return!r},{length},{time.perf_counter() - state['started']:.3f}\n"
        )
        if n % 100 == 0:
            mean, std, high, low = _stats(last100)
            with open(run.extra["record"].path(RETURNS100_CSV), "a", encoding="utf-8") as f100:
                f100.write(f"{state['frame']},{mean!r},{std!r},{high!r},{low!r}\n")

    @hookimpl
    def agentos_run_end(self, run, summary):
        state = run.extra.pop("csv", None)
        if state is None:
            return
        state["file"].close()
        record = run.extra["record"]
        if not os.path.exists(record.path(RETURNS100_CSV)):
            open(record.path(RETURNS100_CSV), "w").close()
        if os.environ.get("AGENTOS_RUN_PLOT") == "0":  # experiments draw one plot for all their trials
            return
        try:
            plot_returns(record.directory, title=_title(record))
        except Exception as exc:  # a missing matplotlib must not lose the run
            record.meta["plot_error"] = f"{type(exc).__name__}: {exc}"


def _title(record) -> str:
    comps = record.meta.get("components", {})
    parts = [comps.get(k) for k in ("environment", "policy", "trainer") if comps.get(k)]
    return f"{record.meta.get('mode', 'run')} {record.id}: " + " / ".join(parts)


def read_returns(directory: str) -> tuple[list[int], list[float]]:
    """(frames, returns) from a run's returns.csv."""
    frames, returns = [], []
    with open(os.path.join(directory, RETURNS_CSV), encoding="utf-8") as f:
        next(f, None)
        for line in f:
            cells = line.rstrip("\n").split(",")
            if len(cells) >= 3:
                frames.append(int(cells[1]))
                returns.append(float(cells[2]))
    return frames, returns


def plot_returns(directory: str, *, title: str = "", out: str | None = None) -> str:
    """Draw a run's learning curve (episode returns and their 100-episode mean) to a PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    frames, returns = read_returns(directory)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    if frames:
        ax.plot(frames, returns, color="tab:blue", alpha=0.25, linewidth=0.8, label="episode return")
        window, total, means = deque(maxlen=100), 0.0, []
        for r in returns:
            if len(window) == window.maxlen:
                total -= window[0]
            window.append(r)
            total += r
            means.append(total / len(window))
        ax.plot(frames, means, color="tab:blue", linewidth=2, label="mean of last 100")
    ax.set_xlabel("steps")
    ax.set_ylabel("return")
    if title:
        ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if frames:  # (a run with no episode has nothing to label)
        ax.legend(loc="lower right", fontsize=8)  # "best" searches every plotted point: slow on long runs
    fig.tight_layout()
    out = out or os.path.join(directory, PLOT_PNG)
    fig.savefig(out)
    plt.close(fig)
    return out


class TensorBoardTracker:
    """Episode return and length as TensorBoard scalars, in ``<record>/tensorboard/``.

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
        state["pending"].append((time.time(), state["frame"], episode_return, length))
        now = time.perf_counter()
        if now - state["flushed"] >= self.flush_seconds:
            self._flush(state)
            state["flushed"] = now

    @staticmethod
    def _flush(state) -> None:
        event_pb2, summary_pb2, writer = state["event"], state["summary"], state["writer"]
        value = summary_pb2.Summary.Value
        for wall, frame, episode_return, length in state["pending"]:
            values = [
                value(tag="returns/episode", simple_value=float(episode_return)),
                value(tag="episode/length", simple_value=float(length)),
            ]
            writer.add_event(event_pb2.Event(wall_time=wall, step=frame, summary=summary_pb2.Summary(value=values)))
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

    from .plugins import get_plugin_manager

    pm = pm or get_plugin_manager()
    if not pm.has_plugin("agentos-record"):
        pm.register(RecordAttacher(), name="agentos-record")
    if not pm.has_plugin("csv") and not _disabled("csv"):
        pm.register(CsvPlotTracker(), name="csv")
    if not pm.has_plugin("tensorboard") and not _disabled("tensorboard"):
        if importlib.util.find_spec("tensorboard") is not None:
            pm.register(TensorBoardTracker(), name="tensorboard")


def _disabled(name: str) -> bool:
    from .host import DISABLE_ENV

    return name in {p.strip().lower() for p in os.environ.get(DISABLE_ENV, "").split(",")}
