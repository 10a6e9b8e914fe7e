"""``agentos index serve``, ``agentos index token create`` and ``agentos publish --to URL``."""

from __future__ import annotations

import os
import sys

from ..errors import UsageError


def add_index_arguments(p) -> None:
    p.add_argument("rest", nargs="*", metavar="ARG", help="serve: the index folder; token: 'create'")
    p.add_argument("--host", default="127.0.0.1", help="serve: the address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="serve: the port (default: 8080)")
    p.add_argument("--workers", type=int, default=1, help="serve: uvicorn worker processes (default: 1)")
    p.add_argument("--max-upload-mb", type=int, default=100, help="serve: refuse uploads over this size (MiB)")
    p.add_argument("--header-timeout", type=float, default=10, help="serve: seconds to send a request's headers")
    p.add_argument("--body-timeout", type=float, default=30, help="serve: seconds a request body may stall")
    p.add_argument("--upload-timeout", type=float, default=600, help="serve: seconds for a whole request body")
    p.add_argument(
        "--max-client-connections", type=int, default=32, help="serve: open connections per client address"
    )
    p.add_argument("--no-access-log", action="store_true", help="serve: do not log every request")
    p.add_argument(
        "--verify-workers",
        type=int,
        default=1,
        metavar="N",
        help="serve: verify uploaded claims in the background, N at once (default 1; 0: off)",
    )
    p.add_argument(
        "--verify-timeout", type=float, default=1800, metavar="SECONDS", help="serve: one verification at most"
    )
    p.add_argument(
        "--verify-queue", type=int, default=100, metavar="N", help="serve: claims pending at most (more wait)"
    )
    p.add_argument("--owner", metavar="NAME", help="token create: who the token belongs to; token revoke: all theirs")
    p.add_argument("--set", dest="set_owner", metavar="NAME", help="owner PROJECT: give the project to NAME")
    p.add_argument("--maintainers", action="store_true", help="owner PROJECT: give the project to the maintainers")


def _folder(args) -> str:
    from ..registry._publish import index_dir

    if len(args.rest) > 1 or (args.rest and args.index):
        raise UsageError("name the index folder once: agentos index serve DIR")
    return index_dir(args.rest[0] if args.rest else args.index)


def _positive(value: float, flag: str) -> float:
    import math

    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{flag} takes a positive number, not {value}")
    return value

def _owner(args) -> int:
    """``agentos index owner [PROJECT] [--set NAME | --maintainers]``: show or reassign owners."""
    from ..registry._publish import set_owner, show_owners

    if len(args.rest) > 1 or ((args.set_owner or args.maintainers) and not args.rest):
        raise UsageError("usage: agentos index owner [PROJECT [--set NAME | --maintainers]] --index DIR")
    if args.set_owner and args.maintainers:
        raise UsageError("give the project to one: --set NAME or --maintainers")
    project = args.rest[0] if args.rest else None
    if args.set_owner or args.maintainers:
        set_owner(project, args.set_owner, args.index)
    rows = show_owners(args.index, project and _normalized(project))
    if project and not rows:
        raise UsageError(f"{project}: no such project in the index")
    for name, owner in rows:
        print(f"{name}  {owner}")
    return 0


def _normalized(project: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(project)


def _tokens(args, root: str) -> int:
    from ..registry.server import TokenStore

    store = TokenStore(root)
    if args.rest[:1] == ["list"] and len(args.rest) == 1:
        for row in store.list():
            print(f"{row['id']}  {row['owner']}  {row['created']}")
        return 0
    if args.rest[:1] == ["revoke"] and (len(args.rest) == 2 or (len(args.rest) == 1 and args.owner)):
        count = store.revoke(args.rest[1] if len(args.rest) == 2 else "", args.owner or "")
        if not count:
            raise UsageError("no such token (see: agentos index token list)")
        print(f"revoked {count} token{'s' * (count != 1)}")
        return 0
    raise UsageError("usage: agentos index token create --owner NAME | list | revoke ID | revoke --owner NAME")


def serve_or_token(args) -> int:
    if args.action == "owner":
        return _owner(args)
    if args.action == "token" and args.rest[:1] in (["list"], ["revoke"]):
        from ..registry._publish import index_dir

        return _tokens(args, index_dir(args.index))
    if args.action == "token":
        if args.rest[:1] != ["create"] or len(args.rest) > 1:
            raise UsageError("usage: agentos index token create --index DIR --owner NAME")
        if not args.owner:
            raise UsageError("say whose token it is: --owner NAME")
        from ..registry._publish import index_dir
        from ..registry.server import TokenStore

        root = index_dir(args.index)
        if not os.path.isdir(root):
            raise UsageError(f"{root}: no such index folder")
        print(TokenStore(root).create(args.owner))
        return 0
    root = _folder(args)
    try:
        import multipart  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError("the server needs its extra: pip install 'agentos-core[server]'") from None
    from ..registry.server import serve

    serve(
        root,
        host=args.host,
        port=args.port,
        workers=max(1, args.workers),
        max_upload=args.max_upload_mb << 20,
        access_log=not args.no_access_log,
        header_timeout=_positive(args.header_timeout, "--header-timeout"),
        body_idle=_positive(args.body_timeout, "--body-timeout"),
        body_total=_positive(args.upload_timeout, "--upload-timeout"),
        per_client=int(_positive(args.max_client_connections, "--max-client-connections")),
        **_verify_options(args),
    )
    return 0


def _verify_options(args) -> dict:
    if not 0 <= args.verify_workers <= 64:
        raise UsageError(f"--verify-workers takes 0 (off) to 64, not {args.verify_workers}")
    if not 1 <= args.verify_queue <= 100_000:
        raise UsageError(f"--verify-queue takes 1 to 100000, not {args.verify_queue}")
    workers = args.verify_workers
    if workers:
        from ..sandbox import sandbox_problem

        why = sandbox_problem()
        if why:  # never run uploaders' policies unsandboxed on their say: the claims wait for a maintainer
            print(f"note: background verification is off: {why}; claims stay claimed "
                  "(agentos index verify --all, where a sandbox runs)", file=sys.stderr)
            workers = 0
    return {
        "verify_workers": workers,
        "verify_timeout": _positive(args.verify_timeout, "--verify-timeout"),
        "verify_queue": args.verify_queue,
    }


def publish_to(args) -> int:
    from ..registry._remote import publish_remote

    if args.index:
        raise UsageError("--to uploads to a server; --index writes a folder: choose one")
    token = args.token or os.environ.get("AGENTOS_TOKEN", "")
    results = publish_remote(args.paths, args.to, token, sdist=args.sdist)
    if args.json:
        from ._output import dump_json

        dump_json(results)
        return 0
    for r in results:
        print(f"{r['status']:>9}  {r['filename']}")
    print(f"server: {args.to}")
    return 0
