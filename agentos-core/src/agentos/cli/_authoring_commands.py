"""``agentos new``: create a component package or an agent directory from the templates."""

from __future__ import annotations

import os

_KINDS = ["environment", "env", "policy", "trainer", "agent"]


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "new",
        help="create a component package (pyproject, code, tests, README) or an agent directory",
        description=(
            "Create a pip package for a component (folder agentos-<kind>-<name>) or, for 'agent', an agent "
            "directory that trains a stable-baselines3 or a custom torch policy (folder <name>; --package makes "
            "an agent package instead). Existing folders are never overwritten."
        ),
    )
    p.add_argument("kind", choices=_KINDS, metavar="KIND", help="environment, policy, trainer or agent")
    p.add_argument("name", metavar="NAME", help="the component's name, e.g. my_policy")
    p.add_argument("--output-dir", "-o", default=".", help="where to create the folder (default: here)")
    p.add_argument("--description", help="one line for the package metadata and README")
    p.add_argument("--author", help="author name for the package metadata")
    p.add_argument("--package", action="store_true", help="agent: a pip package with an agentos.agent entry point")
    p.add_argument("--policy", help="agent directory: sb3_ppo (default), sb3_a2c, sb3_dqn or torch")
    p.add_argument(
        "--environment",
        help="agent directory: an installed AgentOS environment or a Gymnasium id (default CartPole-v1)",
    )
    p.add_argument("--device", default="auto", help="agent directory: auto (default), cpu, cuda or cuda:N")
    p.set_defaults(handler=_new)


def _new(args) -> int:
    from ..api import new

    result = new(
        args.kind,
        args.name,
        output_dir=args.output_dir,
        description=args.description,
        author=args.author,
        package=args.package,
        policy=args.policy,
        environment=args.environment,
        device=args.device,
    )
    where = os.path.relpath(result["directory"])
    if result["what"] == "package":
        print(f"created {result['kind']} {result['name']!r} in {where}/ (package {result['package']})")
        print(f"next: cd {where} && pip install -e '.[test]' && pytest && agentos publish .")
    else:
        print(f"created agent {result['name']!r} in {where}/")
        print(f"next: cd {where} && pip install -r requirements.txt && pytest && agentos train agent.ini 100")
    return 0
