"""Running the app with uvicorn (one process, or several workers sharing the socket)."""

from __future__ import annotations

import os

ROOT_ENV = "AGENTOS_SERVE_ROOT"
MAX_ENV = "AGENTOS_SERVE_MAX_UPLOAD"


def app_from_env():
    """The factory that every uvicorn worker calls (the folder comes from the environment)."""
    from ._app import create_app

    return create_app(os.environ[ROOT_ENV], max_upload=int(os.environ[MAX_ENV]))


def serve(root: str, *, host: str, port: int, workers: int, max_upload: int | None, access_log: bool = True) -> None:
    import uvicorn

    from ._app import DEFAULT_MAX_UPLOAD, create_app

    root = os.path.abspath(root)
    limit = DEFAULT_MAX_UPLOAD if max_upload is None else max_upload
    create_app(root, max_upload=limit)  # a missing folder is one line before uvicorn starts
    os.environ[ROOT_ENV], os.environ[MAX_ENV] = root, str(limit)
    uvicorn.run(
        "agentos.registry.server._run:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        access_log=access_log,
        server_header=False,
    )
