"""``agentos evaluate`` and the ``--run`` form of ``agentos publish`` (a trained-policy package)."""

from __future__ import annotations

import argparse
import sys

from ._output import add_threads_option


def add_commands(sub) -> None:
    p = sub.add_parser("evaluate", help="play test episodes on stated seeds, training off: a results record")
    p.add_argument("policy", nargs="*", metavar="POLICY",
                   help="an installed policy, or a published one (then evaluated in a fresh venv); "
                        "several installed ones: one record each (--json: a list)")
    p.add_argument("--environment", "--env", metavar="ENV",
                   help="the environment to play (default: the one a trained policy or the run was trained on)")
    p.add_argument("--task", metavar="ID",
                   help="the environment's task, e.g. CartPole-v1 for gymnasium (default: the one it was trained on)")
    p.add_argument("--run", metavar="RUN", help="evaluate this run's trained policy (in an agent folder)")
    p.add_argument("--agent", metavar="PATH", help="with --run: the agent.ini (default: ./agent.ini)")
    p.add_argument("--episodes", "-n", type=int, default=100, help="test episodes (default 100)")
    p.add_argument("--seed", type=int, default=0, help="episode i is seeded SEED + i (default 0)")
    p.add_argument("--json", action="store_true", help="print the results record as JSON")
    p.add_argument("--out", metavar="FILE", help="write the results record to FILE")
    p.add_argument("--scheduler", metavar="ADDR", help="spread blocks of seeds over a Dask cluster ('local': here)")
    p.add_argument("--index-url", metavar="URL", help="the index for a package evaluated in a fresh venv")
    p.add_argument("--isolated", action="store_true", help="always evaluate in a fresh venv from the index")
    p.add_argument("--in-place", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--max-episode-steps", type=int, default=None, metavar="N", help="cut an episode after N steps")
    add_threads_option(p)
    p.set_defaults(handler=_evaluate)


def _note(message: str) -> None:
    print(message, file=sys.stderr)


def _evaluate(args) -> int:
    from ..api import evaluate
    from ..errors import UsageError

    if args.in_place and args.isolated:
        raise UsageError("give --in-place or --isolated, not both")
    if len(args.policy) > 1:
        return _evaluate_many(args)
    args.policy = args.policy[0] if args.policy else None
    if args.in_place:
        from ..host import ComponentHost

        if args.policy and ComponentHost().find("policy", args.policy) is None:
            raise UsageError(f"no policy named {args.policy!r} is installed here")
    if args.isolated and args.policy and args.environment and not args.scheduler:
        record = _evaluate_sandboxed(args)
        if record is not None:
            return _show(args, record)
    record = evaluate(
        args.policy, environment=args.environment, episodes=args.episodes, seed=args.seed, run=args.run,
        agent_ini=args.agent, out=args.out, scheduler=args.scheduler, index_url=args.index_url,
        isolated=args.isolated, max_episode_steps=args.max_episode_steps, task=args.task, echo=_note,
        threads=args.threads,
    )
    return _show(args, record)


def _evaluate_sandboxed(args):
    """``--isolated``: the policy in the sandbox, the environment and recorder in a venv without it
    (:mod:`agentos.sandbox`); None where no sandbox can run (then the fresh-venv path, said in one line)."""
    from ..registry._client import resolve_index_url
    from ..results._evaluate import check_request
    from ..results._record import write_record
    from ..sandbox import sandbox_problem
    from ..sandbox._rerun import RerunFailed, evaluate_isolated

    check_request(args.episodes, args.seed)
    why = sandbox_problem()
    if why:
        _note(f"note: no sandbox here ({why}): the policy runs unsandboxed in its fresh venv")
        return None
    try:
        record = evaluate_isolated(args.policy, args.environment, args.episodes, args.seed,
                                   index_url=resolve_index_url(args.index_url, None),
                                   max_episode_steps=args.max_episode_steps, echo=_note)
    except RerunFailed as exc:
        from ..errors import AgentOSError

        raise AgentOSError(f"evaluating {args.policy} in the sandbox failed: {exc}") from None
    if args.out:
        write_record(record, args.out)
    return record


def _show(args, record) -> int:
    from ._output import dump_json

    if args.json:
        dump_json(record)
        return 0
    _print_record(record)
    if args.out:
        print(f"results record: {args.out}")
    return 0


def _evaluate_many(args) -> int:
    from ..api import evaluate_many
    from ..errors import UsageError
    from ._output import dump_json

    if args.run or args.out or args.isolated:
        raise UsageError("several policies are evaluated here, installed, without --run, --out or --isolated")
    records = evaluate_many(args.policy, environment=args.environment, episodes=args.episodes, seed=args.seed,
                            scheduler=args.scheduler, max_episode_steps=args.max_episode_steps, task=args.task,
                            threads=args.threads)
    if args.json:
        dump_json(records)
        return 0
    for record in records:
        _print_record(record)
    return 0


def _print_record(record: dict) -> None:
    from ._output import number

    interval = record["interval"]
    iv = f"[{number(interval[0])}, {number(interval[1])}]" if interval else "(too few episodes for an interval)"
    policy, env = record["policy"], record["environment"]
    task = f" task {env['task']}" if env.get("task") else ""
    print(f"{policy['name']} ({policy['package']} {policy['version']}) on {env['name']}{task} ({env['package']} "
          f"{env['version']}): {record['episodes']} episodes, seeds {record['seeds'][0]}-{record['seeds'][-1]}")
    print(f"mean {number(record['mean'])} ± {number(record['std'])}, IQM {number(record['iqm'])} "
          f"{round(record['confidence'] * 100)}% interval {iv}")
    if record["metrics"]:
        print("metrics: " + ", ".join(f"{k} {number(v)}" for k, v in record["metrics"].items()))


def publish_run(args) -> int:
    """``agentos publish --run RUN --name NAME``."""
    from ..api import publish_run as _publish_run
    from ..errors import UsageError
    from ._output import dump_json, number

    if args.paths:
        raise UsageError("give --run RUN or paths to publish, not both")
    if not args.name:
        raise UsageError("say the package's name: agentos publish --run RUN --name NAME")
    result = _publish_run(
        args.run, args.name, index=args.index, agent_ini=args.agent, episodes=args.episodes, seed=args.seed,
        version=args.version, quantize=args.quantize, replay=args.replay, record_replay=not args.no_replay,
        keep=args.keep, echo=_note,
    )
    if args.json:
        dump_json({k: v for k, v in result.items()})
        return 0
    record = result["record"]
    for row in result["published"]:
        print(f"{row['status']:>9}  {row['filename']}")
    print(f"{result['project']} {result['version']}: mean return {number(record['mean'])} ± "
          f"{number(record['std'])} over {record['episodes']} episodes (IQM {number(record['iqm'])})")
    print(f"index: {result['index']}")
    return 0
