"""Running the app with uvicorn (one process, or several workers sharing the socket)."""

from __future__ import annotations

import os

from ._protocol import HEADER_TIMEOUT_ENV, PER_CLIENT_ENV

ROOT_ENV = "AGENTOS_SERVE_ROOT"
MAX_ENV = "AGENTOS_SERVE_MAX_UPLOAD"
BODY_IDLE_ENV = "AGENTOS_SERVE_BODY_IDLE"
BODY_TOTAL_ENV = "AGENTOS_SERVE_BODY_TOTAL"
KEEP_ALIVE = 5  # seconds an idle connection stays open between requests (uvicorn's default)


def app_from_env():
    """The factory that every uvicorn worker calls (the folder and limits come from the environment)."""
    from ._app import create_app

    return create_app(
        os.environ[ROOT_ENV],
        max_upload=int(os.environ[MAX_ENV]),
        body_idle=float(os.environ[BODY_IDLE_ENV]),
        body_total=float(os.environ[BODY_TOTAL_ENV]),
    )


def _raise_open_file_limit() -> None:
    """Use the hard limit on open files (each connection is one), where the soft one is lower."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def serve(
    root: str,
    *,
    host: str,
    port: int,
    workers: int,
    max_upload: int | None,
    access_log: bool = True,
    header_timeout: float | None = None,
    body_idle: float | None = None,
    body_total: float | None = None,
    per_client: int | None = None,
    verify_workers: int = 0,
    verify_timeout: float | None = None,
    verify_queue: int | None = None,
) -> None:
    import uvicorn

    from ._app import DEFAULT_MAX_UPLOAD, create_app
    from ._guard import DEFAULT_BODY_IDLE, DEFAULT_BODY_TOTAL
    from ._protocol import DEFAULT_HEADER_TIMEOUT, DEFAULT_PER_CLIENT

    root = os.path.abspath(root)
    limit = DEFAULT_MAX_UPLOAD if max_upload is None else max_upload
    create_app(root, max_upload=limit)  # a missing folder is one line before uvicorn starts
    os.environ[ROOT_ENV], os.environ[MAX_ENV] = root, str(limit)
    os.environ[HEADER_TIMEOUT_ENV] = str(header_timeout or DEFAULT_HEADER_TIMEOUT)
    os.environ[BODY_IDLE_ENV] = str(body_idle or DEFAULT_BODY_IDLE)
    os.environ[BODY_TOTAL_ENV] = str(body_total or DEFAULT_BODY_TOTAL)
    os.environ[PER_CLIENT_ENV] = str(per_client or DEFAULT_PER_CLIENT)
    _raise_open_file_limit()
    verifier = None
    if verify_workers > 0:  # one verifier per server, in this process (the supervisor of several workers)
        from ._verifier import DEFAULT_MAX_PENDING, DEFAULT_TIMEOUT, Verifier

        verifier = Verifier(
            root,
            workers=verify_workers,
            timeout=verify_timeout or DEFAULT_TIMEOUT,
            max_pending=DEFAULT_MAX_PENDING if verify_queue is None else verify_queue,
        ).start()
        _exit_on_sigterm()
    try:
        _run_uvicorn(uvicorn, host, port, workers, access_log)
    finally:
        if verifier is not None:
            verifier.stop()  # running verifications are killed; their releases stay pending for the next start


def _exit_on_sigterm() -> None:
    """After its graceful shutdown uvicorn raises the signal it caught again: with this handler a SIGTERM
    then ends ``serve`` through its ``finally`` (the verifier stopped, its processes killed), exit code 0."""
    import signal

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)


def _run_uvicorn(uvicorn, host: str, port: int, workers: int, access_log: bool) -> None:
    uvicorn.run(
        "agentos.registry.server._run:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        access_log=access_log,
        server_header=False,
        http="agentos.registry.server._protocol:GuardedH11Protocol",
        timeout_keep_alive=KEEP_ALIVE,
    )
