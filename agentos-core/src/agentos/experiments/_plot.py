"""Learning curves of an experiment: one panel per environment, mean ± std over seeds per agent."""

from __future__ import annotations

import json
import os


def curves(trials: list[dict], column: str = "return") -> dict[str, dict[str, tuple[list, list, list]]]:
    """environment -> label -> (x, mean, std) over seeds of each trial's windowed mean training return
    (:func:`agentos.trackers._curves.window_stats`: windows of 100 episodes, or 1% of a long run, at
    most 300 points, so that a long run draws a smooth band)."""
    import numpy as np

    from ..trackers._curves import window_stats
    from ._trial_data import agent_labels, environment_label, shown_settings, training_returns

    grouped: dict[str, dict[str, list[list[float]]]] = {}
    labels = agent_labels(str(t.get("agent")) for t in trials)
    for trial in trials:
        returns = training_returns(trial, column)
        if trial.get("status") != "finished" or not returns:
            continue
        settings = shown_settings(trial)
        label = labels[str(trial.get("agent"))] + (" " + json.dumps(settings, sort_keys=True) if settings else "")
        grouped.setdefault(environment_label(trial), {}).setdefault(label, []).append(returns)
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
    """Write a PNG of the learning curves (:func:`experiment_figure`) to ``path``."""
    import matplotlib.pyplot as plt

    fig = experiment_figure(trials, x=x)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def experiment_figure(trials: list[dict], *, x: str = "episodes"):
    """The training curves of an experiment: a panel of returns per environment, and below it a panel
    per rate metric of that environment that is ever above 0 (in percent); names are shown as they
    are (``_`` included)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..errors import UsageError
    from ..trackers._curves import plain_ticks
    from ._trial_data import rate_metrics

    data = curves(trials)
    if not data:
        raise UsageError("no finished training trials to plot")
    envs = sorted(data)
    panels = [(env, "return", data[env]) for env in envs]
    for name in rate_metrics(trials):  # an environment's rate metrics: a panel each, when one is ever above 0
        rates = curves(trials, name)
        panels += [(env, name, rates[env]) for env in envs
                   if env in rates and any(any(mean) for _, mean, _ in rates[env].values())]
    rows = 1 + max(sum(1 for env, kind, _ in panels if env == e and kind != "return") for e in envs)
    fig, axes = plt.subplots(rows, len(envs), figsize=(5 * len(envs), 3.6 * rows), squeeze=False)
    used = set()
    for env, kind, by_label in panels:
        column = envs.index(env)
        row = next(r for r in range(rows) if (r, column) not in used)
        used.add((row, column))
        ax = axes[row][column]
        scale = 1 if kind == "return" else 100
        for label, (xs, mean, std) in sorted(by_label.items()):
            line, = ax.plot(xs, [scale * m for m in mean], label=label.replace("$", r"\$"))
            ax.fill_between(xs, [scale * (m - s) for m, s in zip(mean, std, strict=True)],
                            [scale * (m + s) for m, s in zip(mean, std, strict=True)], color=line.get_color(),
                            alpha=0.2)
        ax.set_title(env if kind == "return" else f"{env}: {kind}", usetex=False)
        ax.set_xlabel(x)
        ax.set_ylabel("return (mean of last 100 episodes, or 1%)" if kind == "return" else f"{kind} (% of episodes)")
        if kind != "return":
            ax.set_ylim(0, 100)
        plain_ticks(ax)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for row, column in ((r, c) for r in range(rows) for c in range(len(envs))):
        if (row, column) not in used:
            axes[row][column].set_visible(False)
    fig.tight_layout()
    return fig
