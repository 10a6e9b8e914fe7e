"""Plain-text tables and numbers for the CLI (rich is imported only for progress bars)."""

from __future__ import annotations

import json
import sys


def table(rows: list[dict], columns: list[tuple[str, str]], out=None) -> None:
    """Print ``rows`` as aligned columns; ``columns`` are (key, heading) pairs."""
    out = out or sys.stdout
    cells = [[heading for _, heading in columns]] + [[str(row.get(key, "")) for key, _ in columns] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    for r in cells:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")


def dump_json(value) -> None:
    json.dump(value, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def number(value: float | None) -> str:
    """The one style of every number the CLI prints: thousands separators and two decimals."""
    if value is None or value != value:  # missing or NaN
        return "-"
    return f"{value:,.2f}"


def count(value: int | None) -> str:
    """Counts (episodes, steps): thousands separators, no decimals."""
    return "-" if value is None else f"{int(value):,}"


def _metric_number(value: float) -> str:
    return count(value) if float(value).is_integer() else number(value)


def metrics_line(metrics) -> str:
    """A summary's episode metrics on one line: ``best_tile mean 1,843.20, max 4,096; reached_2048 94.7%``
    (rates as percentages; '' when the environment declares none)."""
    if not isinstance(metrics, dict):
        return ""
    parts = []
    for name, entry in metrics.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("mean"), (int, float)):
            parts.append(f"{name} -")
        elif entry.get("kind") == "rate":
            parts.append(f"{name} {100 * entry['mean']:.1f}%")
        else:
            high = entry.get("max")
            parts.append(f"{name} mean {_metric_number(entry['mean'])}"
                         + (f", max {_metric_number(high)}" if isinstance(high, (int, float)) else ""))
    return "; ".join(parts)


def agents_line(agents) -> str:
    """A multi-agent run's per-agent tallies (``summary["agents"]``) on one line; "" when there are
    none or they are not what a run writes (a received run.json is data)."""
    from .._safe_text import printable

    if not isinstance(agents, dict):
        return ""
    parts = []
    for agent, entry in list(agents.items())[:16]:
        if not isinstance(entry, dict):
            continue
        tally = [entry.get(k) for k in ("wins", "draws", "losses")]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in tally):
            continue
        mean = entry.get("mean_return")
        mean = number(mean) if isinstance(mean, int | float) and not isinstance(mean, bool) else "-"
        parts.append(f"{str(agent)[:64]} {count(tally[0])} wins, {count(tally[1])} draws, "
                     f"{count(tally[2])} losses (mean return {mean})")
    return printable("; ".join(parts))


def add_threads_option(parser) -> None:
    """``--threads N``: torch's CPU threads for train, run and evaluate."""
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="torch's CPU threads (default: [agentos] threads, else $OMP_NUM_THREADS, else 1)")
