"""The progress of an experiment as the CLI shows it: a rich bar over trials with one row per running
trial on a terminal; elsewhere one line every few seconds. ``run_experiment(..., progress=True)`` uses it."""

from __future__ import annotations

import sys
import time


def _trial_status(row: dict) -> str:
    """``train ep 1,200 return100 -9.12`` once the worker reported, else ``started``."""
    if "return" not in row:
        return "started"
    return f"{row['phase']} ep {row['episodes']:,} return100 {_number(row['return'])}"


def _number(value: float | None) -> str:
    """As the CLI prints numbers: thousands separators and two decimals; ``-`` when missing."""
    return "-" if value is None or value != value else f"{value:,.2f}"


class ProgressDisplay:
    """A rich bar over trials (done/total, ETA) with one row per running trial and its latest return on
    a terminal; elsewhere one line every ``interval`` seconds (and when the experiment ends)."""

    def __init__(self, quiet: bool, interval: float = 5.0):
        self.quiet, self.interval, self.last, self.bar, self.task = quiet, interval, 0.0, None, None
        self.rows: dict[str, object] = {}
        self.started = time.monotonic()
        if not quiet and sys.stderr.isatty():
            from rich.console import Console, Group
            from rich.live import Live
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
            self.running = Progress(TextColumn("  {task.description}"), TextColumn("{task.fields[status]}"))
            self.live = Live(Group(self.bar, self.running), console=Console(stderr=True), transient=True,
                             refresh_per_second=4)
            self.live.start()

    def __call__(self, done: int, total: int, running: list[dict]) -> None:
        if self.quiet:
            return
        if self.bar is not None:
            self._draw(done, total, running)
        elif time.monotonic() - self.last >= self.interval or done == total:
            self.last = time.monotonic()
            print(self._line(done, total, running), file=sys.stderr, flush=True)

    def _line(self, done: int, total: int, running: list[dict]) -> str:
        elapsed = time.monotonic() - self.started
        eta = f", ETA {_clock(elapsed / done * (total - done))}" if 0 < done < total else ""
        text = "; ".join(f"{row['label']} ({_trial_status(row)})" for row in running[:4])
        more = f" (+{len(running) - 4})" if len(running) > 4 else ""
        return f"trials {done}/{total}{eta}" + (f"; running: {text}{more}" if text else "")

    def _draw(self, done: int, total: int, running: list[dict]) -> None:
        if self.task is None:
            self.task = self.bar.add_task("trials", total=total)
        self.bar.update(self.task, completed=done)
        now = {row["label"]: row for row in running}
        for label in [label for label in self.rows if label not in now]:
            self.running.remove_task(self.rows.pop(label))
        for label, row in now.items():
            if label not in self.rows:
                self.rows[label] = self.running.add_task(label, total=None, start=False, status="")
            self.running.update(self.rows[label], status=_trial_status(row))

    def close(self) -> None:
        if self.bar is not None:
            self.live.stop()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
