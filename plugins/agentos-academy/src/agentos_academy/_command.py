"""The ``agentos serve`` command (imported only when it is invoked)."""

from __future__ import annotations

import agentos


@agentos.hookimpl
def agentos_register_commands(subparsers):
    p = subparsers.add_parser("serve", help="run agent folders as Academy agents; prints their ids")
    p.add_argument("agent_dirs", nargs="+", metavar="agent_dir", help="an agent's folder (with agent.ini)")
    p.add_argument("--exchange", default="local",
                   help="local, redis://USER:PASSWORD@HOST:PORT, rediss://... (TLS) or http://HOST:PORT")
    p.add_argument("--insecure-exchange", action="store_true",
                   help="UNSAFE: allow an exchange without a password (anyone who reaches it can call the agents)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the agents on a Dask cluster: a scheduler (tcp://host:8786) or 'local'")
    p.add_argument("--train-continuously", type=int, default=0, metavar="EPISODES",
                   help="train in rounds of EPISODES episodes until shut down (default: only on request)")
    p.set_defaults(handler=_serve)


def _serve(args) -> int:
    from ._serve import serve, serve_many

    if len(args.agent_dirs) == 1 and args.scheduler is None:
        return serve(args.agent_dirs[0], exchange=args.exchange, train_continuously=args.train_continuously,
                     insecure_exchange=args.insecure_exchange)
    return serve_many(args.agent_dirs, exchange=args.exchange, scheduler=args.scheduler,
                      train_continuously=args.train_continuously, insecure_exchange=args.insecure_exchange)
