"""The ``agentos serve`` command (imported only when it is invoked)."""

from __future__ import annotations

import agentos


@agentos.hookimpl
def agentos_register_commands(subparsers):
    p = subparsers.add_parser("serve", help="run an agent folder as an Academy agent; prints its id")
    p.add_argument("agent_dir", help="the agent's folder (with agent.ini)")
    p.add_argument("--exchange", default="local", help="local, redis://HOST:PORT or http://HOST:PORT")
    p.add_argument("--train-continuously", type=int, default=0, metavar="EPISODES",
                   help="train in rounds of EPISODES episodes until shut down (default: only on request)")
    p.set_defaults(handler=_serve)


def _serve(args) -> int:
    from ._serve import serve

    return serve(args.agent_dir, exchange=args.exchange, train_continuously=args.train_continuously)
