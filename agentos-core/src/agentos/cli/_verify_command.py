"""``agentos index verify PROJECT[==VERSION]``: re-run a published claim, the policy sandboxed; store the verdict.

The re-run (:mod:`agentos.sandbox._rerun`) plays the environment, the verifier's secret seeds and
the recorder in a venv without the policy package, and the policy in a bubblewrap sandbox that only
chooses actions. The verdict is decided and stored by :mod:`agentos.registry._verify`; the exit code
says which: 0 verified, 1 flagged, 3 unverifiable (stored with its reason), 2 a usage error.
"""

from __future__ import annotations

import sys

DEFAULT_TIMEOUT = 3600.0  # seconds of one whole verification, venv set-up included
EXIT_CODES = {"verified": 0, "flagged": 1, "unverifiable": 3}  # 2: a usage error, nothing stored


def add_verify_arguments(p) -> None:
    p.add_argument(
        "--episodes",
        "-n",
        type=int,
        default=None,
        metavar="N",
        help="verify: episodes to re-run (default: as many as the claim)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="verify: the first new seed (default: one past the claim's seeds; never one of them)",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=None,
        metavar="FRACTION",
        help="verify: widen both intervals by FRACTION x the larger IQM (default 0.05)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"verify: give up after SECONDS (venv set-up included), storing 'unverifiable' "
        f"(default {DEFAULT_TIMEOUT:.0f})",
    )
    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help="verify: where no sandbox (bwrap) can run, re-run without one; the verdict says sandboxed: false",
    )


def _echo(message: str) -> None:
    print(message, file=sys.stderr)


def play_sandboxed(target: dict, index_root: str, timeout: float = DEFAULT_TIMEOUT, *, unsandboxed: bool = False,
                   echo=_echo):
    """``(record, {"sandboxed": bool})`` of the claim's package played with the policy sandboxed, or
    :class:`agentos.registry._verify.Unverifiable` with the reason (see :mod:`agentos.sandbox._rerun`)."""
    from ..registry._verify import Unverifiable
    from ..sandbox._rerun import RerunFailed, rerun

    try:
        played = rerun(target, index_root, timeout=timeout, unsandboxed=unsandboxed, echo=echo)
    except RerunFailed as exc:
        failed = Unverifiable(str(exc))
        failed.sandboxed = exc.sandboxed
        raise failed from None
    return played["record"], {"sandboxed": played["sandboxed"]}


def verify_command(args, index_root: str) -> int:
    from ..errors import UsageError
    from ..registry._verify import DEFAULT_TOLERANCE, verify

    if len(args.rest) != 1:
        raise UsageError("usage: agentos index verify PROJECT[==VERSION] [--index DIR] [--episodes N] [--seed S]")
    tolerance = DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance
    if not 0 < args.timeout < float("inf"):  # before the fresh venv is made (NaN fails too)
        raise UsageError("--timeout must be a positive number of seconds")
    from ..sandbox import sandbox_problem

    why = sandbox_problem()
    if why and not args.unsandboxed:  # the maintainer's machine, not the package: nothing stored
        raise UsageError(f"no sandbox can run here ({why}); nothing verified (--unsandboxed re-runs without one)")
    result = verify(
        args.rest[0],
        lambda target: play_sandboxed(target, index_root, args.timeout, unsandboxed=args.unsandboxed),
        index=index_root,
        episodes=args.episodes,
        seed=args.seed,
        tolerance=tolerance,
        echo=_echo,
    )
    note = "" if result["sandboxed"] else " (UNSANDBOXED re-run)"
    print(f"{result['status']}: {result['project']} {result['version']}: {result['reason']}{note}")
    return EXIT_CODES[result["status"]]
