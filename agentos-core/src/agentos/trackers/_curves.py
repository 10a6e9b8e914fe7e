"""Learning curves drawn the same way everywhere: a smooth band, a mean line, plain tick labels.

A run of 100,000 games has far more episodes than a plot has pixels: drawing each return makes a
jagged band, and matplotlib writes large step counts with an offset (``1e8``). Here a curve is at
most ``points`` windows of consecutive episodes (100 of them, or 1% of a long run): the line is each
window's mean, the band its middle half (25th to 75th percentile); ticks read ``150M``, ``250k``.
"""

from __future__ import annotations

POINTS = 300
WINDOW = 100


def window_stats(values, points: int = POINTS, window: int = WINDOW):
    """(ends, mean, low, high) over windows of the last :func:`window_width` values that end at
    ``points`` evenly spaced episodes (``ends`` are 0-based indices of those episodes)."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    n = len(values)
    if n == 0:
        return np.zeros(0, int), np.zeros(0), np.zeros(0), np.zeros(0)
    count = min(n, points)
    ends = np.unique(np.linspace(n / count, n, count).round().astype(int)) - 1
    width = window_width(n, window)
    mean, low, high = (np.empty(len(ends)) for _ in range(3))
    for i, end in enumerate(ends.tolist()):
        chunk = values[max(0, end + 1 - width): end + 1]
        mean[i] = chunk.mean()
        low[i], high[i] = np.percentile(chunk, (25, 75))
    return ends, mean, low, high


def window_width(n: int, window: int = WINDOW) -> int:
    """Episodes per window: ``window``, or 1% of a longer run (windows then overlap: a smooth curve)."""
    return max(window, n // 100)


def compact(value: float, _position=None) -> str:
    """A tick label without an offset: ``950``, ``2.5k``, ``150M``, ``2G``."""
    size = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if size >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def plain_ticks(ax) -> None:
    """Compact tick labels on both axes of ``ax`` (no ``1e8`` offset text)."""
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(compact))
    ax.yaxis.set_major_formatter(FuncFormatter(compact))
