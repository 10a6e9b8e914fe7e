"""Learning curves of an experiment: one panel per environment, mean ± std over seeds per agent."""

from __future__ import annotations

import json
import os


def curves(trials: list[dict]) -> dict[str, dict[str, tuple[list, list, list]]]:
    """environment -> label -> (x, mean, std) over seeds of each trial's windowed mean training return
    (:func:`agentos.learning._curves.window_stats`: windows of 100 episodes, or 1% of a long run, at
    most 300 points, so that a long run draws a smooth band)."""
    import numpy as np

    from ..learning._curves import window_stats
    from ._summary import agent_labels, training_returns

    grouped: dict[str, dict[str, list[list[float]]]] = {}
    labels = agent_labels(str(t.get("agent")) for t in trials)
    for trial in trials:
        returns = training_returns(trial)
        if trial.get("status") != "finished" or not returns:
            continue
        settings = trial.get("settings") or {}
        label = labels[str(trial.get("agent"))] + (" " + json.dumps(settings, sort_keys=True) if settings else "")
        grouped.setdefault(trial["environment"], {}).setdefault(label, []).append(returns)
    result: dict = {}
    for env, by_label in grouped.items():
        for label, runs in by_label.items():
            n = min(len(r) for r in runs)
            windows = [window_stats(r[:n]) for r in runs]
            data = np.array([mean for _, mean, _, _ in windows])
            xs = (windows[0][0] + 1).tolist()
            result.setdefault(env, {})[label] = (xs, data.mean(0).tolist(), data.std(0).tolist())
    return result


def plot_experiment(trials: list[dict], path: str, *, x: str = "episodes") -> str:
    """Write a PNG of the learning curves to ``path``; names are shown as they are (``_`` included)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..errors import UsageError
    from ..learning._curves import plain_ticks

    data = curves(trials)
    if not data:
        raise UsageError("no finished training trials to plot")
    fig, axes = plt.subplots(1, len(data), figsize=(5 * len(data), 3.6), squeeze=False)
    for ax, (env, by_label) in zip(axes[0], sorted(data.items()), strict=True):
        for label, (xs, mean, std) in sorted(by_label.items()):
            line, = ax.plot(xs, mean, label=label.replace("$", r"\$"))
            ax.fill_between(xs, [m - s for m, s in zip(mean, std, strict=True)],
                            [m + s for m, s in zip(mean, std, strict=True)], color=line.get_color(), alpha=0.2)
        ax.set_title(env, usetex=False)
        ax.set_xlabel(x)
        ax.set_ylabel("return (mean of last 100 episodes, or 1%)")
        plain_ticks(ax)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return path
