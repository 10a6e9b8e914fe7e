"""The model card: the trained package's README.md (and its long description on the index's page).

Front matter in the Hugging Face model-card style (tags, a ``model-index`` with the mean return),
then: what it is, how it was trained (components and versions, budget, seed, settings), the results
table (mean, std, IQM with its interval, the environment's metrics, episodes and seeds), how to use
it and how to reproduce it. Every value comes from the run record, its lock and the results record.
"""

from __future__ import annotations


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def _clean(text) -> str:
    """One line of plain text for a Markdown table or heading (no pipes, no HTML, no newlines)."""
    from .._safe_text import printable

    return printable(str(text)).replace("|", "/").replace("<", "(").replace(">", ")").replace("\n", " ")[:200]


def _scheme(quantized: dict) -> str:
    schemes = sorted({entry["scheme"] for entry in quantized.values()})
    from ._weights import INT8_BLOCK

    names = {"float16": "float16", "int8": f"int8 with one float32 scale per {INT8_BLOCK:,} weights"}
    return "".join(f", {names[s]}" for s in schemes)


def model_card(*, name: str, version: str, record: dict, training: dict, components: list[dict],
               settings: dict, quantized: dict, replay: bool) -> str:
    """The README.md of a trained package (see the module docstring for what it holds)."""
    env, policy = record["environment"], record["policy"]
    task = env.get("task")
    played = f"{env['name']} task {task}" if task else env["name"]  # what it was trained and evaluated on
    interval = record["interval"]
    iv = f"[{_number(interval[0])}, {_number(interval[1])}]" if interval else "too few episodes"
    seeds = record["seeds"]
    lines = [
        "---",
        "tags:",
        "- reinforcement-learning",
        "- agentos",
        f"- {_clean(env['name'])}",
        *([f"- {_clean(task)}"] if task else []),
        "model-index:",
        f"- name: {_clean(name)}",
        "  results:",
        "  - task:",
        "      type: reinforcement-learning",
        "    dataset:",
        f"      name: {_clean(task or env['name'])}",
        f"      type: {_clean(env['package'])}",
        "    metrics:",
        "    - type: mean_reward",
        f"      value: {record['mean']:.6g} +/- {record['std']:.6g}",
        "---",
        "",
        f"# {_clean(name)}: a trained {_clean(training['policy'])} policy for {_clean(played)}",
        "",
        f"`{_clean(policy['package'])}` {_clean(version)} plays the environment `{_clean(env['name'])}` "
        f"({_clean(env['package'])} {_clean(env['version'])})"
        + (f", task `{_clean(task)}`," if task else "") + " with the weights it ships "
        f"(`weights.safetensors`{_scheme(quantized)}). Made by `agentos publish --run` "
        f"from run `{_clean(training['run'])}`.",
        "",
        "## Results",
        "",
        f"{record['episodes']} test episodes with training off, episode *i* seeded {seeds[0]} + *i* "
        f"(seeds {seeds[0]}-{seeds[-1]}), played with exactly the shipped weights:",
        "",
        "| statistic | value |",
        "|---|---|",
        f"| mean return | {_number(record['mean'])} |",
        f"| std | {_number(record['std'])} |",
        f"| IQM | {_number(record['iqm'])} |",
        f"| {round(record['confidence'] * 100)}% interval of the IQM (bootstrap) | {iv} |",
        f"| mean episode length | {_number(sum(record['lengths']) / len(record['lengths']))} |",
        *(f"| {_clean(k)} | {_number(v)} |" for k, v in record["metrics"].items()),
        "",
        "Per-episode returns, lengths and seeds: `results.json`. Learning curve: `returns.csv`, `returns.png`."
        + (" One test episode: `replay.gif`." if replay else ""),
        "",
        "## How it was trained",
        "",
        f"- trainer: {_clean(training.get('trainer') or '-')}, budget: {_clean(training.get('budget') or '-')}, "
        f"seed: {_clean(training.get('seed'))}, training episodes: {_clean(training.get('episodes'))}, "
        f"steps: {_clean(training.get('steps'))}",
        f"- last-100 mean return while training: {_number(training.get('last100_mean'))}",
        "",
        "| kind | component | package | version |",
        "|---|---|---|---|",
        *(f"| {_clean(c.get('kind'))} | {_clean(c.get('name'))} | {_clean(c.get('package') or 'local')} "
          f"| {_clean(c.get('version') or '-')} |" for c in components),
        "",
        "Policy settings: " + (", ".join(f"`{_clean(k)} = {_clean(v)}`" for k, v in sorted(settings.items()))
                               or "the defaults") + ". The whole agent.ini and lock are in the package.",
    ]
    if quantized:
        lines += ["", f"Weights quantized{_scheme(quantized)} ({', '.join(_clean(k) for k in sorted(quantized))}); "
                      "the results above are of the quantized weights."]
    lines += [
        "",
        "## Use it",
        "",
        "```",
        f"agentos install policy {_clean(name)} --default",
        "agentos run -n 100" + (f"  # in an agent whose {_clean(env['name'])} plays {_clean(task)}" if task else ""),
        f"agentos evaluate {_clean(name)} --episodes 100 --seed 1000 --json",
        "```",
        "",
        f"`agentos evaluate` plays the environment{' and task' if task else ''} it was trained on "
        f"({_clean(played)}); an agent of another one refuses it in one line.",
        "",
        "## Reproduce it",
        "",
        *_reproduce_lines(training),
        "",
    ]
    return "\n".join(lines)


def _reproduce_lines(training: dict) -> list[str]:
    """How to reproduce: one command for a run trained from scratch; the chain of runs otherwise."""
    seed = _clean(training.get("seed"))
    if training.get("parents"):
        chain = " <- ".join(f"`{_clean(p)}`" for p in training["parents"])
        return ["The package carries the run's `lock.json`, `agent.ini` and `training.json` (seed, budget and the "
                f"chain of runs it continued from: {chain}). The run started from an earlier run's weights, so "
                "`agentos reproduce --package` (which retrains a run from scratch) cannot retrain it in one command: "
                "retrain each run of the chain in order with its seed and budget."]
    return ["The package carries the run's `lock.json` (exact packages and versions), `agent.ini` and "
            f"`training.json` (seed {seed}, budget, trainer): `agentos reproduce --package "
            f"{_clean(training.get('package_spec') or '')}` builds a fresh venv from them, retrains with the same seed "
            "and budget, and compares the new learning curve with `returns.csv`."]
