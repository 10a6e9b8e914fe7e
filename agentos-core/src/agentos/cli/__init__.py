"""The ``agentos`` command: a thin layer over :mod:`agentos.api`."""

from __future__ import annotations

import argparse
import sys

from .._version import __version__

KIND_CHOICES = ["environment", "policy", "trainer", "agent", "preset", "env"]
#: Modules (in this package) with ``add_commands(subparsers)``; they must import nothing heavy.
COMMAND_MODULES: tuple[str, ...] = ("._learning_commands", "._registry_commands", "._authoring_commands",
                                   "._experiment_commands")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentos",
        description="Build, share and run reinforcement-learning agents made of pip-installable components.",
    )
    parser.add_argument("--version", action="version", version=f"agentos {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("init", help="create a minimal agent (agent.ini, agent.py, requirements.txt)")
    p.add_argument("directory", nargs="?", default=".", help="folder to create the agent in (default: here)")
    p.set_defaults(handler=_init)

    p = sub.add_parser("run", help="run an agent and summarise its episodes")
    p.add_argument("agent_ini", nargs="?", help="the agent.ini (default: ./agent.ini)")
    p.add_argument("--episodes", "-n", type=int, default=10, help="episodes to run (default 10)")
    p.add_argument("--seed", type=int, default=None, help="seed of the first reset and the policy")
    p.add_argument(
        "--from-run", metavar="RUN", help="reuse a recorded run: its agent.ini and checkpoint (see: agentos runs)"
    )
    p.add_argument("--checkpoint", metavar="PATH", help="load the policy from a checkpoint file")
    p.add_argument("--force", action="store_true", help="with --from-run: run even if installed components differ")
    p.add_argument("--fresh", action="store_true", help="an untrained policy, not the one of the last agentos train")
    p.set_defaults(handler=_run)

    p = sub.add_parser("list", help="installed components: kind, name, version, package, status")
    p.add_argument("--kind", choices=KIND_CHOICES, help="only this kind")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--check", action="store_true", help="import every component to find errors")
    p.set_defaults(handler=_list)

    import importlib

    for module in COMMAND_MODULES:
        importlib.import_module(module, __name__).add_commands(sub)
    return parser


def _init(args) -> int:
    from ..api import init_agent

    result = init_agent(args.directory)
    print(f"created agent in {result['directory']}: {', '.join(result['written'])}")
    for missing in result["missing"]:
        print(f"note: {missing} is not installed yet", file=sys.stderr)
    return 0


def _run(args) -> int:
    from ..api import run
    from ._output import number

    def on_episode(run_state, result):
        n = len(run_state.episodes)
        if n <= 20 or n % max(1, args.episodes // 10) == 0:
            print(f"episode {n:>4}: return {number(result.episode_return):>9}  steps {result.length}")

    summary = run(
        args.agent_ini,
        episodes=args.episodes,
        seed=args.seed,
        on_episode=on_episode,
        from_run=args.from_run,
        checkpoint=args.checkpoint,
        force=args.force,
        fresh=args.fresh,
    )
    print(
        f"{summary['status']}: {summary['episodes']} episodes, {summary['steps']} steps, "
        f"mean return {number(summary['mean_return'])} ± {number(summary['std_return'])} "
        f"(min {number(summary['min_return'])}, max {number(summary['max_return'])}), "
        f"{number(summary['steps_per_second'])} steps/s"
    )
    if summary.get("trained_by"):
        print(f"policy trained by run {summary['trained_by']} (--fresh for an untrained one)")
    if summary.get("run"):
        print(f"run {summary['run']}: {summary['run_dir']}")
    return 130 if summary["status"] == "interrupted" else 0


def _list(args) -> int:
    from ..api import list_components
    from ._output import dump_json, table

    rows = list_components(args.kind, check=args.check)
    if args.json:
        dump_json(rows)
        return 0
    if not rows:
        print("no components installed (pip install agentos-env-2048, or: agentos install KIND NAME)")
        return 0
    for row in rows:
        row["mark"] = f"{row['name']}*" if row["default"] else row["name"]
    columns = [("kind", "KIND"), ("mark", "NAME"), ("version", "VERSION"), ("package", "PACKAGE"), ("status", "STATUS")]
    table(rows, columns)
    if any(r["default"] for r in rows):
        print("* default in agent.ini")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``agentos`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from ..errors import AgentOSError

    try:
        from ..registry._venv import reexec_in_agent_venv  # agents with their own venv run there

        reexec_in_agent_venv(args, sys.argv[1:] if argv is None else list(argv))
        return args.handler(args)
    except AgentOSError as exc:
        print(f"agentos: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("agentos: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug or a plugin's own error: still one line, unless debugging
        import os

        if os.environ.get("AGENTOS_DEBUG"):
            raise
        print(f"agentos: error: {type(exc).__name__}: {exc} (AGENTOS_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
