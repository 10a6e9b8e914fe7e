"""The ``agentos`` command: a thin layer over :mod:`agentos.api`."""

from __future__ import annotations

import argparse
import sys

from .._version import __version__
from ._output import add_threads_option
from ._suggest import SuggestingParser

KIND_CHOICES = ["environment", "policy", "trainer", "agent", "preset", "env"]
#: Modules (in this package) with ``add_commands(subparsers)``; they must import nothing heavy.
COMMAND_MODULES: tuple[str, ...] = ("._learning_commands", "._registry_commands", "._authoring_commands",
                                   "._experiment_commands", "._arena_commands", "._results_commands",
                                   "._reproduce_commands", "._tune_commands")


def build_parser(load_command: str | None = None) -> argparse.ArgumentParser:
    """The parser; plugin commands are listed from metadata, and only ``load_command``'s is imported."""
    parser = SuggestingParser(
        prog="agentos",
        description="Build, share and run reinforcement-learning agents made of pip-installable components.",
    )
    parser.add_argument("--version", action="version", version=f"agentos {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("init", help="create a minimal agent (agent.ini, agent.py, requirements.txt)")
    p.add_argument("directory", nargs="?", default=".", help="folder to create the agent in (default: here)")
    p.add_argument(
        "--no-install", action="store_true", help="do not install the starter components (corridor, random)"
    )
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
    p.add_argument("--n-envs", type=int, default=1, metavar="N", help="step N environments at once (batched decisions)")
    p.add_argument("--async-envs", action="store_true", help="with --n-envs: one process per environment copy")
    p.add_argument(
        "--max-episode-steps", type=int, default=None, metavar="N",
        help="end an episode after N steps (default: the environment's limit, else 100,000)",
    )
    p.add_argument(
        "--record", metavar="FILE", help="write the episodes as an animated GIF (FILE.gif) or video (FILE.mp4)"
    )
    add_threads_option(p)
    p.set_defaults(handler=_run)

    p = sub.add_parser("list", help="installed components: kind, name, version, package, status")
    p.add_argument("--kind", choices=KIND_CHOICES, help="only this kind")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--check", action="store_true", help="import every component to find errors")
    p.set_defaults(handler=_list)

    import importlib

    for module in COMMAND_MODULES:
        importlib.import_module(module, __name__).add_commands(sub)
    _add_plugin_commands(sub, load_command)
    return parser


def _add_plugin_commands(sub, load_command: str | None) -> None:
    """Commands from entry points ``agentos.commands``: a placeholder each, the real one when used."""
    from ..host import discover_commands

    for spec in discover_commands():
        if spec.name in sub.choices:
            continue  # core commands win
        if spec.name != load_command:
            help_text = f"{spec.summary or 'plugin command'} [{spec.package}]"
            sub.add_parser(spec.name, help=help_text).set_defaults(handler=None, plugin_error=None)
            continue
        try:
            import importlib

            import pluggy

            from .. import hookspecs

            if spec.problem:
                raise ValueError(spec.problem)
            manager = pluggy.PluginManager("agentos")
            manager.add_hookspecs(hookspecs)
            manager.register(importlib.import_module(spec.module), name=f"command.{spec.name}")
            manager.hook.agentos_register_commands(subparsers=sub)
            if spec.name not in sub.choices:
                raise ValueError(f"{spec.module} registered no command {spec.name!r}")
        except Exception as exc:  # a broken plugin breaks only its own command
            where = f"{spec.package} {spec.version}"
            message = f"command {spec.name!r} ({where}) failed to load: {type(exc).__name__}: {exc}".splitlines()[0]
            if spec.name not in sub.choices:
                sub.add_parser(spec.name, add_help=False)
            sub.choices[spec.name].set_defaults(handler=None, plugin_error=message)


def _command_word(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not an option)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _init(args) -> int:
    from ..api import init_agent

    venv = getattr(args, "venv", None)  # --venv installs the starter components into the new venv
    result = init_agent(
        args.directory,
        install=not (venv or args.no_install),
        index_url=getattr(args, "index_url", None),
        echo=lambda message: print(message, file=sys.stderr),
    )
    print(f"created agent in {result['directory']}: {', '.join(result['written'])}")
    for installed in result["installed"]:
        print(f"installed {installed}")
    for missing in [] if venv else result["missing"]:
        kind, name = missing.split(" ", 1)
        print(f"note: {missing} is not installed (agentos install {kind} {name})", file=sys.stderr)
    return 0


def _run(args) -> int:
    from ..api import run
    from ._output import agents_line, count, metrics_line, number

    def on_episode(run_state, result):
        n = len(run_state.episodes)
        if n <= 20 or n % max(1, args.episodes // 10) == 0:
            print(f"episode {n:>4}: return {number(result.episode_return):>9}  steps {count(result.length)}")

    summary = run(
        args.agent_ini,
        episodes=args.episodes,
        seed=args.seed,
        on_episode=on_episode,
        from_run=args.from_run,
        checkpoint=args.checkpoint,
        force=args.force,
        fresh=args.fresh,
        n_envs=args.n_envs,
        vector_mode="async" if args.async_envs else "sync",
        max_episode_steps=args.max_episode_steps,
        threads=args.threads,
        **({"record": args.record} if args.record else {}),
    )
    print(
        f"{summary['status']}: {count(summary['episodes'])} episodes, {count(summary['steps'])} steps, "
        f"mean return {number(summary['mean_return'])} ± {number(summary['std_return'])} "
        f"(min {number(summary['min_return'])}, max {number(summary['max_return'])}), "
        f"{number(summary['steps_per_second'])} steps/s, seed {summary.get('seed')}"
    )
    if summary.get("metrics"):
        print(f"metrics: {metrics_line(summary['metrics'])}")
    if summary.get("agents"):  # a multi-agent environment: every seat's tally
        print(f"agents: {agents_line(summary['agents'])}")

    if summary.get("episodes_cut"):
        print(
            f"note: {count(summary['episodes_cut'])} episodes did not end within {count(summary['max_episode_steps'])} "
            "steps and were cut (the policy made no progress?); --max-episode-steps N sets the limit"
            + (" (every environment was cut: the run ended early)" if summary["episodes"] < args.episodes else "")
        )
    if summary.get("trained_by"):
        state = summary.get("trained_by_status") or "unknown"
        note = f", which was {state}: its policy is partly trained" if state != "finished" else ""
        print(f"policy trained by run {summary['trained_by']}{note} (--fresh for an untrained one)")
    if summary.get("run"):
        print(f"run {summary['run']}: {summary['run_dir']}")
    if summary.get("replay"):
        replay = summary["replay"]
        print(f"replay: {replay['path']} ({count(replay['frames'])} frames, {replay['bytes'] / 1024:,.0f} KiB)")
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
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(load_command=_command_word(words))
    args = parser.parse_args(argv)
    if getattr(args, "plugin_error", None):
        print(f"agentos: error: {args.plugin_error}", file=sys.stderr)
        return 1
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
