"""``agentos tune FILE | show FOLDER | export FOLDER --agent-ini OUT``: Optuna is imported only in a handler."""

from __future__ import annotations

import json

from ._experiment_commands import _cluster_arguments, _cluster_options


def add_commands(sub) -> None:
    p = sub.add_parser("tune", help="hyperparameter search of an experiment file's [search] space (Optuna)",
                       description="agentos tune FILE (run or resume a study) | tune show FOLDER | "
                       "tune export FOLDER --agent-ini OUT")
    p.add_argument("target", nargs="+", metavar="FILE | show FOLDER | export FOLDER",
                   help="an experiment file with a [search] section, or show/export and a tune folder")
    p.add_argument("--storage", metavar="URL", help="a database shared by several drivers (postgresql+psycopg2://...); "
                   "default: study.journal in the experiment folder")
    p.add_argument("--trials", type=int, help="finished trials to reach (default: [tune] trials, else 20)")
    p.add_argument("--timeout", type=float, help="seconds after which no new trial starts")
    p.add_argument("--workers", "-j", type=int, help="worker processes (default: the cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786) or 'local'")
    _cluster_arguments(p)
    p.add_argument("--top", type=int, default=5, help="show: how many of the best trials (default 5)")
    p.add_argument("--json", action="store_true", help="show: machine-readable output")
    p.add_argument("--agent-ini", metavar="OUT", help="export: the agent.ini to write")
    p.add_argument("--enqueue", metavar="JSON", help="a JSON file: a list of settings objects to try first, "
                   "in order ({\"trainer.gamma\": 0.99}; a setting left out is sampled)")
    p.add_argument("--quiet", "-q", action="store_true", help="no line per finished trial")
    p.set_defaults(handler=_tune)


def _tune(args) -> int:
    from ..errors import UsageError

    action, rest = args.target[0], args.target[1:]
    if action in ("show", "export") and len(rest) == 1:
        return (_show if action == "show" else _export)(args, rest[0])
    if rest:
        raise UsageError("usage: agentos tune FILE | tune show FOLDER | tune export FOLDER --agent-ini OUT")
    import sys

    from ..experiments import read_experiment
    from ..experiments._lifetime import Stopped, stop_signals_interrupt
    from ..tuning import best_trials, tune

    cluster_options = _cluster_options(args, read_experiment(action)) if args.cluster else None
    enqueue = _read_enqueue(args.enqueue) if args.enqueue else None
    try:
        with stop_signals_interrupt():  # SIGTERM/SIGHUP: as Ctrl-C (running trials stopped, the study kept)
            study = tune(action, storage=args.storage, trials=args.trials, timeout=args.timeout,
                         workers=args.workers, scheduler=args.scheduler, cluster=args.cluster,
                         cluster_options=cluster_options, quiet=args.quiet, enqueue=enqueue)
    except KeyboardInterrupt as exc:
        stopped = isinstance(exc, Stopped)
        how = f"stopped by signal {exc.signum}" if stopped else "interrupted"
        print(f"agentos: {how}; finished trials are kept (run again to resume)", file=sys.stderr)
        return 128 + exc.signum if stopped else 130
    folder = read_experiment(action)["folder"]
    _print_best(best_trials(folder, args.storage, top=args.top), study.study_name)
    return 0


MAX_ENQUEUE_BYTES = 1 << 20


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number a setting can take")


def _read_enqueue(path: str) -> list:
    """The ``--enqueue`` file: a JSON list (at most 1 MiB; its objects are checked by ``tune``)."""
    from ..errors import UsageError

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_ENQUEUE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--enqueue {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_ENQUEUE_BYTES:
        raise UsageError(f"--enqueue {path}: larger than {MAX_ENQUEUE_BYTES:,} bytes")
    try:
        values = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"--enqueue {path}: not JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(values, list):
        raise UsageError(f"--enqueue {path}: give a JSON list of settings objects")
    return values


def _print_best(report: dict, name: str) -> None:
    from .._safe_text import printable
    from ._output import number

    counts = ", ".join(f"{n} {state}" for state, n in sorted(report["counts"].items()))
    print(f"study {printable(name)} ({report['direction']}): {counts or 'no trials'}")
    for row in report["best"]:
        interval = ("[" + ", ".join(number(v) for v in row["interval"]) + "]") if row["interval"] else "(too few seeds)"
        params = " ".join(f"{k}={v}" for k, v in sorted(row["params"].items()))
        print(printable(f"  #{row['number']}: {number(row['value'])}  IQM {number(row['iqm'])} {interval} "
                        f"over {row['seeds']} seeds  {params}"))
    if report["importances"]:
        print("importance: " + ", ".join(f"{printable(k)} {v:.2f}" for k, v in report["importances"].items()))


def _show(args, folder: str) -> int:
    from ..tuning import best_trials, plot_study

    report = best_trials(folder, args.storage, top=args.top)
    report["plots"] = plot_study(folder, args.storage)
    if args.json:
        print(json.dumps(report, indent=1, default=str))
        return 0
    from ..tuning._storage import read_record

    _print_best(report, read_record(folder)["study"])
    for path in report["plots"]:
        print(f"plot: {path}")
    return 0


def _export(args, folder: str) -> int:
    from ..errors import UsageError
    from ..tuning import export_agent_ini

    if not args.agent_ini:
        raise UsageError("tune export needs --agent-ini OUT")
    settings = export_agent_ini(folder, args.agent_ini, args.storage)
    print(f"wrote {args.agent_ini}: " + " ".join(f"{k}={v}" for k, v in sorted(settings.items())))
    return 0
