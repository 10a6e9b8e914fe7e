"""``agentos experiment run|show|plot``: nothing heavy is imported until a handler runs."""

from __future__ import annotations

import os
import sys


def add_commands(sub) -> None:
    p = sub.add_parser("experiment", help="agents × environments × seeds × settings: run, show, plot, compare")
    es = p.add_subparsers(dest="experiment_command", metavar="run|show|plot|compare", required=True)
    r = es.add_parser("run", help="run every trial of an experiment file (finished trials are skipped)")
    r.add_argument("file", help="the experiment file (INI: [experiment], [settings])")
    r.add_argument("--workers", "-j", type=int, default=None, help="worker processes (default: the cores)")
    r.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786) or 'local'")
    r.add_argument("--retries", type=int, default=2, help="retries of a trial whose worker dies (default 2)")
    _cluster_arguments(r)
    r.add_argument("--quiet", "-q", action="store_true", help="print only the table")
    r.set_defaults(handler=_run)
    for name, text in (("show", "the table of an experiment: mean ± std, IQM and its 95%% interval over seeds"),
                       ("plot", "learning curves, the IQM per agent and performance profiles (PNG)")):
        s = es.add_parser(name, help=text)
        s.add_argument("experiment", help="an experiment folder, or the name under ./experiments/")
        if name == "show":
            s.add_argument("--json", action="store_true", help="machine-readable output")
            s.set_defaults(handler=_show)
        else:
            s.add_argument("--output", "-o", help="the curves' PNG (default: <experiment>/returns100.png; the IQM "
                           "and profile plots go beside it: <name>-iqm.png, <name>-profiles.png)")
            s.set_defaults(handler=_plot)
    c = es.add_parser("compare", help="the probability that agent A beats agent B over seeds, per environment")
    c.add_argument("experiment", help="an experiment folder, or the name under ./experiments/")
    c.add_argument("a", metavar="A", help="an agent of the experiment, as its table names it")
    c.add_argument("b", metavar="B", help="another agent of the experiment")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(handler=_compare)


def _cluster_arguments(r) -> None:
    """``--cluster`` and the jobs' resources; each overrides the experiment file's ``[cluster]`` key."""
    g = r.add_argument_group("batch cluster (dask-jobqueue: pip install 'agentos-core[cluster]')")
    g.add_argument("--cluster", choices=["slurm", "pbs", "sge", "lsf"],
                   help="submit the workers as batch jobs (one per trial, up to --max-jobs); "
                   "all are cancelled at the end")
    for flag, kind, text in (("--partition", str, "the partition or queue"), ("--account", str, "the account charged"),
                             ("--cores", int, "CPUs per job: trials at once in each job (default 1)"),
                             ("--memory", str, "memory per job, e.g. 4GB (default 2GB)"),
                             ("--walltime", str, "time per job, [D-]HH:MM[:SS] (default 01:00:00)"),
                             ("--max-jobs", int, "jobs at once (default 100)"),
                             ("--venv", str, "the workers' virtual environment (default: this Python)"),
                             ("--interface", str, "the network interface of the scheduler and workers (e.g. ib0)")):
        g.add_argument(flag, type=kind, help=text)
    g.add_argument("--directive", action="append", default=[], help="one more job directive, e.g. --qos=normal")
    g.add_argument("--setup", action="append", default=[], help="a line the job runs before its worker, e.g. "
                   "'source ~/rl/bin/activate' (repeatable; yours, so any one line)")


def _cluster_options(args, options: dict) -> dict:
    """The file's ``[cluster]`` keys (checked when read), then the command line's (the user's own)."""
    mine = {key: getattr(args, key.replace("-", "_")) for key in ("partition", "account", "cores", "memory",
                                                                  "walltime", "max-jobs", "venv", "interface")}
    merged = dict(options.get("cluster_options") or {}) | {k: v for k, v in mine.items() if v is not None}
    setup = merged.get("setup") or []
    merged["setup"] = [*([setup] if isinstance(setup, str) else setup), *args.setup]
    directives = merged.get("directives") or []
    merged["directives"] = [*([directives] if isinstance(directives, str) else directives), *args.directive]
    return merged


def _fmt(mean, std) -> str:
    from ._output import number

    return "-" if mean is None else f"{number(mean)} ± {number(std or 0.0)}"


def _fmt_metric(entry: dict | None) -> str:
    """An episode metric over seeds: a rate as ``94.7% ± 1.2``, a value as ``1,843.20 ± 80.00``."""
    if not entry or entry.get("mean") is None:
        return "-"
    if entry.get("kind") == "rate":
        return f"{100 * entry['mean']:.1f}% ± {100 * (entry.get('std') or 0.0):.1f}"
    return _fmt(entry["mean"], entry.get("std"))


def _fmt_iqm(row: dict) -> str:
    """The IQM of the test returns and its interval: ``-7.25 [-8.00, -6.50]``, or ``-7.25 (too few seeds)``."""
    from ._output import number

    if row.get("test_return_iqm") is None:
        return "-"
    low, high = row.get("test_return_ci_low"), row.get("test_return_ci_high")
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return f"{number(row['test_return_iqm'])} ({low})"
    return f"{number(row['test_return_iqm'])} [{number(low)}, {number(high)}]"


def print_table(result) -> None:
    from .._safe_text import printable, printable_row
    from ._output import number, table

    rows = [printable_row(row) for row in result.table()]  # records are data: no escape sequence is printed
    names = list(dict.fromkeys(name for row in rows for name in (row.get("metrics") or {})))
    rows = [{**row, "train": _fmt(row["train_return_mean"], row["train_return_std"]),
             "test": _fmt(row["test_return_mean"], row["test_return_std"]), "iqm": _fmt_iqm(row),
             "sps": "-" if row["steps_per_second"] is None else number(row["steps_per_second"]),
             "wall": f"{row['wall_seconds']:.1f}s", "settings": "" if row["settings"] == "{}" else row["settings"],
             **{f"metric:{name}": _fmt_metric((row.get("metrics") or {}).get(name)) for name in names}}
            for row in rows]
    arena = [("win_rate", "win rate"), ("elo", "Elo")] if any("elo_mean" in row for row in rows) else []
    for row in rows:  # multi-agent trials against a panel: win rate and Elo (mean ± std over seeds)
        if row.get("elo_mean") is not None:
            row["win_rate"] = f"{100 * row['win_rate_mean']:.1f}% ± {100 * (row['win_rate_std'] or 0.0):.1f}"
            row["elo"] = f"{row['elo_mean']:.0f} ± {row['elo_std'] or 0.0:.0f}"
    table(rows, [("agent", "agent"), ("environment", "environment"), ("settings", "settings"), ("seeds", "seeds"),
                 ("train", "train return (last 100)"), ("test", "test return"), ("iqm", "test IQM [95% CI]"), *arena,
                 *((f"metric:{name}", printable(name)) for name in names), ("sps", "steps/s"), ("wall", "wall")])
    for trial in result.failed():
        line = f"failed: {trial['agent']} {trial['environment']} seed={trial['seed']}: {trial.get('error', '')}"
        print(printable(line))


def _folder(ref: str) -> str:
    return ref if os.path.isdir(ref) else os.path.join("experiments", ref)


def _run(args) -> int:
    from ..experiments import read_experiment, run_experiment
    from ..experiments._display import ProgressDisplay
    from ..experiments._lifetime import Stopped, stop_signals_interrupt

    options = read_experiment(args.file)
    progress = ProgressDisplay(args.quiet)
    try:
        with stop_signals_interrupt():  # SIGTERM/SIGHUP: as Ctrl-C (summary written, workers stopped)
            result = run_experiment(
                options["agents"], options["environments"], seeds=options["seeds"], episodes=options.get("episodes"),
                steps=options.get("steps"), test_episodes=options.get("test_episodes", 10),
                opponents=options.get("opponents"), arena_games=options.get("arena_games"),
                settings=options["settings"], agent_settings=options["agent_settings"], folder=options["folder"],
                workers=args.workers or options.get("workers"), scheduler=args.scheduler or options.get("scheduler"),
                retries=args.retries, on_progress=progress, cluster=args.cluster,
                cluster_options=_cluster_options(args, options) if args.cluster else None)
    except KeyboardInterrupt as exc:
        progress.close()
        stopped = isinstance(exc, Stopped)
        how = f"stopped by signal {exc.signum}" if stopped else "interrupted"
        print(f"agentos: {how}; finished trials are kept in {options['folder']} (run again to resume)",
              file=sys.stderr)
        return 128 + exc.signum if stopped else 130
    progress.close()
    print_table(result)
    print(f"summary: {os.path.join(result.folder, 'summary.csv')} ({result.seconds:.1f}s)")
    return 1 if result.failed() else 0


def _show(args) -> int:
    from ..experiments._summary import load_experiment
    from ._output import dump_json

    result, skipped = load_experiment(_folder(args.experiment))  # a malformed record: one line, left out
    if args.json:
        dump_json({"table": result.table(), "failed": result.failed()})
    else:
        print_table(result)
    return 1 if skipped else 0


def _plot(args) -> int:
    from ..errors import UsageError
    from ..experiments._aggregate_plot import plot_aggregates
    from ..experiments._folder import unlinked
    from ..experiments._summary import load_experiment

    result, skipped = load_experiment(_folder(args.experiment))
    if args.output:
        curves, stem = args.output, os.path.splitext(args.output)[0] + "-"
    else:
        curves, stem = os.path.join(result.folder, "returns100.png"), os.path.join(result.folder, "")
    written, problems = [], []
    try:
        written.append(result.plot(curves if args.output else unlinked(curves)))
    except UsageError as exc:  # no training (a preset without a trainer): the aggregates may still be drawn
        problems.append(exc)
    try:
        paths = (stem + "iqm.png", stem + "profiles.png")
        written += plot_aggregates(result.trials, *(p if args.output else unlinked(p) for p in paths))
    except UsageError as exc:
        problems.append(exc)
    if not written:
        raise problems[0]
    for path in written:
        print(path)
    return 1 if skipped else 0


def _compare(args) -> int:
    from ..experiments._scores import compare
    from ..experiments._summary import load_experiment
    from ._output import dump_json

    result, skipped = load_experiment(_folder(args.experiment))
    found = compare(result.trials, args.a, args.b)
    if args.json:
        dump_json(found)
    else:
        print_comparison(found)
    return 1 if skipped else 0


def print_comparison(found: dict) -> None:
    """One line per environment and one over all: P(A > B) and its interval, or why there is none."""
    from .._safe_text import printable
    from ._output import number, table

    def interval(estimate: dict) -> str:
        low_high = estimate["interval"]
        return "too few seeds" if low_high is None else f"[{number(low_high[0])}, {number(low_high[1])}]"

    rows = [{"where": row["environment"], "p": number(row["probability"]), "ci": interval(row),
             "seeds": f"{row['seeds_a']} vs {row['seeds_b']}"} for row in found["environments"]]
    overall = found["overall"]
    rows.append({"where": "overall", "p": number(overall["probability"]), "ci": interval(overall),
                 "seeds": f"{overall['environments']} environment(s)"})
    a, b = printable(found["a"]), printable(found["b"])
    print(f"probability of improvement: P({a} > {b}), the chance that a seed of {a} gets a higher test return "
          f"than a seed of {b}")
    table([{k: printable(v) for k, v in row.items()} for row in rows],
          [("where", "environment"), ("p", "P(A > B)"), ("ci", f"{found['confidence']:.0%} CI"), ("seeds", "seeds")])
