"""``agentos search|install|uninstall|publish|yank|index`` and ``init --venv``.

Nothing heavy is imported here: each handler imports :mod:`agentos.registry` when it runs.
"""

from __future__ import annotations

import sys

_INDEX_URL_HELP = (
    "the package index to read (file://, http(s):// or a folder; default: $AGENTOS_INDEX_URL, "
    "agent.ini's index-url, then 'agentos config set index-url', else this checkout's index/)"
)


def add_commands(sub) -> None:
    from ..host._names import KINDS

    kinds = f"{', '.join(KINDS[:-1])} or {KINDS[-1]}"
    p = sub.add_parser("search", help="components in the registry: kind, name, latest version, description")
    p.add_argument("terms", nargs="*", metavar="[KIND] [QUERY]", help="a kind, a text to look for, or both")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--index-url", metavar="URL", help=_INDEX_URL_HELP)
    p.set_defaults(handler=_search)

    p = sub.add_parser("install", help="install a component from the registry into the agent")
    p.add_argument("kind", help=kinds)
    p.add_argument(
        "name", metavar="NAME[[EXTRA,...]][==VERSION]", help="the component (latest version unless pinned), with extras"
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--default", dest="default", action="store_true", default=None, help="make it the default of its kind"
    )
    group.add_argument(
        "--no-default",
        dest="default",
        action="store_false",
        help="keep the current default (what happens without a terminal)",
    )
    p.add_argument("--agent", metavar="PATH", help="the agent folder or agent.ini (default: ./agent.ini)")
    p.add_argument("--index-url", metavar="URL", help=_INDEX_URL_HELP)
    p.add_argument("--any-torch", action="store_true",
                   help="let pip choose torch when the environment has none (on Linux: the CUDA build, GBs)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_install)

    p = sub.add_parser("uninstall", help="remove a component: its package, agent.ini entry and requirements line")
    p.add_argument("kind", help=kinds)
    p.add_argument("name", help="the component")
    p.add_argument("--agent", metavar="PATH", help="the agent folder or agent.ini (default: ./agent.ini)")
    p.set_defaults(handler=_uninstall)

    p = sub.add_parser("publish", help="add plugin folders, wheels or sdists to a package index")
    p.add_argument("paths", nargs="*", metavar="PATH", help="a plugin folder (built first), a wheel or an sdist")
    p.add_argument("--index", metavar="DIR",
                   help="the index folder to write (default: a file:// $AGENTOS_INDEX_URL, else the checkout's index/)")
    p.add_argument(
        "--library", action="store_true", help="accept packages without components (e.g. agentos-core) as libraries"
    )
    p.add_argument("--sdist", action="store_true", help="for folders: publish an sdist too")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--to", metavar="URL", help="upload to a registry server (agentos index serve) instead")
    p.add_argument("--token", metavar="TOKEN", help="the API token for --to (default: $AGENTOS_TOKEN)")
    g = p.add_argument_group("a trained policy (docs/results.md)")
    g.add_argument("--run", metavar="RUN", help="publish this run's trained policy as agentos-policy-NAME")
    g.add_argument("--name", metavar="NAME", help="with --run: the policy's name")
    g.add_argument("--version", default="1.0.0", help="with --run: the package's version (default 1.0.0)")
    g.add_argument("--episodes", "-n", type=int, default=100, help="with --run: test episodes (default 100)")
    g.add_argument("--seed", type=int, default=0, help="with --run: episode i is seeded SEED + i (default 0)")
    g.add_argument("--quantize", choices=["float16", "int8"],
                   help="with --run: ship float weights as float16, or int8 with one scale per 256 weights")
    g.add_argument("--replay", metavar="GIF", help="with --run: a GIF of one test episode to ship (default: recorded)")
    g.add_argument("--no-replay", action="store_true", help="with --run: ship no replay")
    g.add_argument("--agent", metavar="PATH", help="with --run: the agent.ini (default: ./agent.ini)")
    g.add_argument("--keep", metavar="DIR", help="with --run: also copy the wheel into DIR")
    p.set_defaults(handler=_publish)

    p = sub.add_parser("yank", help="yank a published version (PEP 592): installs skip it unless pinned")
    p.add_argument("package", metavar="NAME", help="the distribution (agentos-env-2048) or component name")
    p.add_argument("version", help="the version to yank")
    p.add_argument("--reason", default="", help="why (shown by pip and agentos)")
    p.add_argument("--undo", action="store_true", help="un-yank")
    p.add_argument("--index", metavar="DIR", help="the index folder (default: this checkout's index/)")
    p.set_defaults(handler=_yank)

    p = sub.add_parser(
        "index", help="maintain an index folder: rebuild, check, serve it, upload tokens, project owners"
    )
    p.add_argument(
        "action",
        choices=["rebuild", "check", "serve", "token", "owner", "verify"],
        help="rebuild: rewrite all pages; check: verify hashes; serve DIR: HTTP server; "
        "token create|list|revoke ID: API tokens; owner [PROJECT [--set NAME|--maintainers]]: project owners; "
        "verify PROJECT[==VERSION]: re-run a trained policy's claim in a fresh venv on new seeds (leaderboards)",
    )
    p.add_argument("--index", metavar="DIR", help="the index folder (default: this checkout's index/)")
    p.add_argument(
        "--accept-changes",
        action="store_true",
        help="rebuild: record the new hash of files whose bytes changed (otherwise refused)",
    )
    from ._server_commands import add_index_arguments

    add_index_arguments(p)
    from ._verify_command import add_verify_arguments

    add_verify_arguments(p)
    from ._verify_all import add_verify_all_arguments

    add_verify_all_arguments(p)
    p.set_defaults(handler=_index)

    p = sub.add_parser("config", help="your own settings (index-url): show them, or 'set KEY VALUE' / 'unset KEY'")
    p.add_argument("action", nargs="?", choices=["show", "set", "unset"], default="show")
    p.add_argument("key", nargs="?", help="the setting: index-url")
    p.add_argument("value", nargs="?", help="its value (for set)")
    p.set_defaults(handler=_config)

    init = sub.choices.get("init")
    if init is not None:
        init.add_argument(
            "--venv",
            nargs="?",
            const=".venv",
            default=None,
            metavar="DIR",
            help="give the agent its own virtual environment (default folder: .venv)",
        )
        init.add_argument("--index-url", metavar="URL", help=_INDEX_URL_HELP)
        init.set_defaults(handler=_wrap_init(init.get_default("handler")))


def _echo(message: str) -> None:
    print(message, file=sys.stderr)


def _search(args) -> int:
    from ..host._names import KIND_ALIASES, KINDS
    from ..registry import search
    from ._output import dump_json, table

    terms = list(args.terms)
    kind = terms.pop(0) if terms and (terms[0].lower() in KINDS or terms[0].lower() in KIND_ALIASES) else None
    from .._safe_text import printable_row

    rows = search(kind, " ".join(terms) or None, args.index_url)
    if args.json:
        dump_json(rows)
        return 0
    if not rows:
        from ._suggest import print_error, search_hint

        hint = search_hint(list(args.terms), search(kind, None, args.index_url))
        if hint:  # most likely a typo: say what was meant, as a usage error
            return print_error(f"no components match {' '.join(args.terms)!r}{hint}")
        print("no components found")
        return 0
    table(
        [printable_row(r) for r in rows],
        [("kind", "KIND"), ("name", "NAME"), ("version", "VERSION"), ("description", "DESCRIPTION")],
    )
    return 0


def _ask_default(kind: str, name: str, current: str) -> bool:
    answer = input(f"{current} is the default {kind}; make {name} the default instead? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def _ask_next(kind: str, names: list[str]) -> str:
    for i, n in enumerate(names, 1):
        print(f"  [{i}] {n}")
    answer = input(f"which {kind} becomes the default? [1] ").strip() or "1"
    try:
        return names[int(answer) - 1]
    except (ValueError, IndexError):
        return names[0]


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _install(args) -> int:
    from ..registry import install

    result = install(
        args.kind,
        args.name,
        default=args.default,
        agent=args.agent,
        index_url=args.index_url,
        ask=_ask_default if _interactive() else None,
        echo=_echo,
        any_torch=args.any_torch,
    )
    if args.json:
        from ._output import dump_json

        dump_json(result)
        return 0
    from .._safe_text import printable

    verb = "installed" if result["changed"] else "already installed:"
    mark = " (default)" if result["default"] else ""
    task = f" for {result['task']}" if result.get("task") else ""
    print(printable(f"{verb} {result['kind']} {result['name']}{task}{mark}: {result['package']} {result['version']}"))
    for note in result["notes"]:
        print(f"note: {note}")
    return 0


def _uninstall(args) -> int:
    from ..registry import uninstall

    result = uninstall(args.kind, args.name, agent=args.agent, ask=_ask_next if _interactive() else None, echo=_echo)
    print(f"uninstalled {result['kind']} {result['name']} ({result['package']})")
    for note in result["notes"]:
        print(f"note: {note}")
    return 0


def _publish(args) -> int:
    from ..registry import publish

    if args.run:
        from ._results_commands import publish_run

        return publish_run(args)
    if not args.paths:
        from ..errors import UsageError

        raise UsageError("nothing to publish: name a plugin folder, a wheel or an sdist (or --run RUN --name NAME)")

    if args.to:
        from ._server_commands import publish_to

        return publish_to(args)

    results = publish(args.paths, args.index, library=args.library, sdist=args.sdist)
    if args.json:
        from ._output import dump_json

        dump_json(results)
        return 0
    for r in results:
        print(f"{r['status']:>9}  {r['filename']}")
    if results:
        print(f"index: {results[0]['index']}")
    return 0


def _yank(args) -> int:
    from ..registry import yank

    changed = yank(args.package, args.version, args.reason, args.index, undo=args.undo)
    print(f"{'un-yanked' if args.undo else 'yanked'}: {', '.join(changed)}")
    return 0


def _index(args) -> int:
    from ..registry import check_index, rebuild_index

    if args.action in ("serve", "token", "owner"):
        from ._server_commands import serve_or_token

        return serve_or_token(args)
    if args.action == "verify":
        from ..registry._publish import index_dir
        from ._verify_command import verify_command

        if args.all or args.again:
            from ._verify_all import verify_all_command

            if not args.all:
                from ..errors import UsageError

                raise UsageError("--again goes with --all")
            return verify_all_command(args, index_dir(args.index))
        return verify_command(args, index_dir(args.index))

    if args.action == "rebuild":
        result = rebuild_index(args.index, accept_changes=args.accept_changes)
        print(f"rebuilt: {result['projects']} projects, {result['files']} files")
        for filename in result["changed"]:
            print(f"accepted new bytes: {filename}")
        for line in result.get("skipped", []):
            print(f"skipped: {line}")
        return 0
    problems = check_index(args.index)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("ok: pages, catalogue and files agree; every listed file matches its hash")
    return 0


def _config(args) -> int:
    from ..errors import UsageError
    from ..registry import _user_config

    if args.action == "show":
        if args.key:
            raise UsageError("usage: agentos config | agentos config set KEY VALUE | agentos config unset KEY")
        current = _user_config.values()
        print(f"# {_user_config.config_path()}")
        for key in sorted(_user_config.KEYS):
            print(f"{key} = {current.get(key, '')}" if key in current else f"# {key}: not set")
        return 0
    if not args.key or (args.action == "set") != (args.value is not None):
        raise UsageError(f"usage: agentos config {args.action} KEY" + (" VALUE" if args.action == "set" else ""))
    path = _user_config.set_value(args.key, args.value if args.action == "set" else None)
    print(f"{args.action} {args.key} in {path}")
    return 0


def _wrap_init(original):
    def handler(args) -> int:
        if not getattr(args, "venv", None):
            return original(args)
        import os

        from ..registry import init_venv
        from ..registry._client import resolve_index_url

        resolve_index_url(args.index_url)  # no index: one line, before anything is written
        existed = os.path.isdir(args.directory)
        before = set(os.listdir(args.directory)) if existed else set()
        code = original(args)
        if code:
            return code
        try:
            result = init_venv(args.directory, args.venv, index_url=args.index_url, echo=_echo)
        except BaseException:  # a failed init leaves nothing behind, so that a retry starts clean
            _remove_new(args.directory, existed, before)
            raise
        print(f"agent venv: {result['venv']} (agentos commands for this agent run with {result['python']})")
        return 0

    return handler


def _remove_new(directory: str, existed: bool, before: set[str]) -> None:
    """Remove what ``agentos init`` created in ``directory`` (the folder itself if it made it)."""
    import os
    import shutil

    if not existed:
        shutil.rmtree(directory, ignore_errors=True)
        return
    for name in set(os.listdir(directory)) - before:
        path = os.path.join(directory, name)
        shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
