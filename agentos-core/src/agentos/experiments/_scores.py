"""The test returns of an experiment as score tables for :mod:`agentos.stats`: per agent and environment
over seeds, min-max normalized per environment, and the probability of improvement of one agent over
another (``agentos experiment compare``)."""

from __future__ import annotations

import json
import math

from ..errors import UsageError
from ._trial_data import agent_labels, environment_label, shown_settings

CONFIDENCE = 0.95


def test_scores(trials: list[dict]) -> dict[str, dict[str, list[float]]]:
    """label -> environment -> the test returns of its finished trials (one per seed), in trial order. An
    agent's label is its table name, followed by its settings when it has any (``sarsa {"alpha": 0.1}``)."""
    labels = agent_labels(str(t.get("agent")) for t in trials)
    scores: dict[str, dict[str, list[float]]] = {}
    for trial in trials:
        value = (trial.get("test") or {}).get("mean_return")
        if trial.get("status") != "finished" or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        settings = shown_settings(trial)
        label = labels[str(trial.get("agent"))] + (" " + json.dumps(settings, sort_keys=True) if settings else "")
        scores.setdefault(label, {}).setdefault(environment_label(trial), []).append(float(value))
    return scores


def normalized(scores: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, list[float]]]:
    """The scores min-max normalized per environment over the whole experiment: in each environment the
    lowest test return of any agent and seed is 0 and the highest is 1 (an environment where every run
    scored the same gives 0.5 to all)."""
    bounds: dict[str, tuple[float, float]] = {}
    for by_env in scores.values():
        for env, values in by_env.items():
            low, high = bounds.get(env, (math.inf, -math.inf))
            bounds[env] = (min(low, *values), max(high, *values))

    def scale(env: str, value: float) -> float:
        low, high = bounds[env]
        return 0.5 if high == low else (value - low) / (high - low)

    return {label: {env: [scale(env, v) for v in values] for env, values in by_env.items()}
            for label, by_env in scores.items()}


def resolve_label(name: str, labels: list[str]) -> str:
    """The label that ``name`` means: itself, or an agent's table name when it ran with one setting
    combination; else a one-line ``UsageError`` with the closest label."""
    if name in labels:
        return name
    matches = [label for label in labels if label.startswith(name + " {")]  # the agent's settings follow
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UsageError(f"agent {name!r} ran with {len(matches)} settings; name one of: "
                         + ", ".join(repr(m) for m in matches))
    from ..host import did_you_mean

    names = list(dict.fromkeys(label.split(" {", 1)[0] for label in labels))
    hint = did_you_mean(name, names)
    raise UsageError(f"no agent {name!r} with test returns in this experiment{hint} (agents: {', '.join(names)})"
                     if names else "no finished trial with test returns in this experiment (test-episodes > 0?)")


def compare(trials: list[dict], a: str, b: str, *, reps: int = 2000, seed: int = 0) -> dict:
    """The probability that a seed of ``a`` gets a higher test return than a seed of ``b``, per environment
    both ran and over all of them (the mean over environments, rliable's), each with its 95% interval
    (``None`` with too few seeds): ``{"a", "b", "confidence", "environments": [...], "overall": {...}}``."""
    from ..stats import probability_of_improvement

    scores = test_scores(trials)
    a, b = resolve_label(a, list(scores)), resolve_label(b, list(scores))
    envs = [env for env in scores[a] if env in scores[b]]
    if not envs:
        raise UsageError(f"{a!r} and {b!r} have test returns in no common environment")
    rows = []
    for env in envs:
        estimate = probability_of_improvement(scores[a][env], scores[b][env], confidence=CONFIDENCE, reps=reps,
                                              seed=seed)
        rows.append({"environment": env, **estimate, "seeds_a": len(scores[a][env]), "seeds_b": len(scores[b][env])})
    overall = probability_of_improvement({e: scores[a][e] for e in envs}, {e: scores[b][e] for e in envs},
                                         confidence=CONFIDENCE, reps=reps, seed=seed)
    return {"a": a, "b": b, "confidence": CONFIDENCE, "environments": rows,
            "overall": {**overall, "environments": len(envs)}}
