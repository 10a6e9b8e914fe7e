"""``agentos index verify --all [--again]``: every claim of a static index without a verdict, one by one.

Each claim is marked ``pending``, then verified in its own process (as ``agentos index serve`` does,
:mod:`agentos.registry._verify_queue`). Exit code: 0 every claim verified (or none waiting), 1 at
least one flagged, 3 at least one unverifiable and none flagged, 2 a usage error.
"""

from __future__ import annotations

import sys


def add_verify_all_arguments(p) -> None:
    p.add_argument("--all", action="store_true", help="verify: every claim without a verdict (pending or claimed)")
    p.add_argument("--again", action="store_true", help="verify --all: every claim, verdicts too")


def verify_all_command(args, index_root: str) -> int:
    import os

    from .._safe_text import printable
    from ..errors import UsageError
    from ..registry._verify_queue import EXIT_CODES, mark_pending, run_one

    if args.rest:
        raise UsageError("verify --all verifies every claim: name no project")
    if args.episodes is not None or args.seed is not None or args.tolerance is not None:
        raise UsageError("verify --all re-runs each claim as published: --episodes, --seed, --tolerance are per claim")
    if not 0 < args.timeout < float("inf"):
        raise UsageError("--timeout must be a positive number of seconds")
    if not os.path.isfile(os.path.join(index_root, "catalogue.json")):
        raise UsageError(f"{index_root}: not an index folder (no catalogue.json)")
    waiting = mark_pending(index_root, max_pending=sys.maxsize, per_owner=sys.maxsize, again=args.again)
    if not waiting:
        print("nothing to verify: every claim has a verdict (--again verifies them again)")
        return 0
    codes = set()
    for project, version in waiting:
        print(f"verifying {project} {version}", file=sys.stderr, flush=True)
        outcome = run_one(index_root, project, version, timeout=args.timeout)
        if outcome is None:
            continue  # yanked or removed meanwhile
        status, reason = outcome
        codes.add(EXIT_CODES[status])
        print(printable(f"{status}: {project} {version}: {reason}"), flush=True)
    return 1 if 1 in codes else 3 if 3 in codes else 0
