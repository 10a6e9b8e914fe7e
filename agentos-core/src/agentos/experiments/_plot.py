"""Learning curves of an experiment: one panel per environment, mean ± std over seeds per agent."""

from __future__ import annotations

import json
import os


def _smoothed(returns: list[float], window: int = 100) -> list[float]:
    out, total = [], 0.0
    for i, value in enumerate(returns):
        total += value
        if i >= window:
            total -= returns[i - window]
        out.append(total / min(i + 1, window))
    return out


def curves(trials: list[dict]) -> dict[str, dict[str, tuple[list, list, list]]]:
    """environment -> label -> (x, mean, std) of the last-100 training return over seeds."""
    import numpy as np

    from ._summary import training_returns

    grouped: dict[str, dict[str, list[list[float]]]] = {}
    for trial in trials:
        returns = training_returns(trial)
        if trial.get("status") != "finished" or not returns:
            continue
        settings = trial.get("settings") or {}
        label = trial["agent"] + (" " + json.dumps(settings, sort_keys=True) if settings else "")
        grouped.setdefault(trial["environment"], {}).setdefault(label, []).append(_smoothed(returns))
    result: dict = {}
    for env, by_label in grouped.items():
        for label, runs in by_label.items():
            n = min(len(r) for r in runs)
            data = np.array([r[:n] for r in runs])
            result.setdefault(env, {})[label] = (list(range(1, n + 1)), data.mean(0).tolist(), data.std(0).tolist())
    return result


def plot_experiment(trials: list[dict], path: str, *, x: str = "episodes") -> str:
    """Write a PNG of the learning curves to ``path``; names are shown as they are (``_`` included)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..errors import UsageError

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
        ax.set_ylabel("return (last 100 episodes)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return path
