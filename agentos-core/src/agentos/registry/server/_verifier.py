"""The server's verifier: every uploaded claim is re-run in the background, the verdict on the board.

One thread per server (in the process that runs uvicorn, or its supervisor when there are several
workers) watches ``catalogue.json``: whenever it changes (an upload, a verdict) or a verification
ends, it queues waiting claims (:func:`agentos.registry._verify_queue.mark_pending`: bounded in all
and per owner) and starts at most ``workers`` verifications, each ``agentos index verify`` in its own
process group (:func:`~agentos.registry._verify_queue.run_one`), one at a time per project. Nothing
of a verification runs in the server's process: a crash or a hang costs one ``unverifiable`` verdict
(timeout, then the group is killed), never the server. :meth:`Verifier.stop` kills what is running
and leaves it ``pending``: the next start queues it again, as it does every ``pending`` release.
"""

from __future__ import annotations

import os
import sys
import threading

from .._verify_queue import DEFAULT_MAX_PENDING, DEFAULT_PER_OWNER, mark_pending, run_one

__all__ = ["DEFAULT_MAX_PENDING", "DEFAULT_TIMEOUT", "DEFAULT_WORKERS", "Verifier"]

DEFAULT_WORKERS = 1
DEFAULT_TIMEOUT = 1800.0  # seconds of one verification, venv set-up included
POLL = 1.0  # seconds between looks at catalogue.json's modification time


def _log(message: str) -> None:
    print(f"agentos verify: {message}", file=sys.stderr, flush=True)


class Verifier:
    """Background verification of the claims in the index folder ``root``."""

    def __init__(
        self,
        root: str,
        *,
        workers: int = DEFAULT_WORKERS,
        timeout: float = DEFAULT_TIMEOUT,
        max_pending: int = DEFAULT_MAX_PENDING,
        per_owner: int = DEFAULT_PER_OWNER,
        log=_log,
    ):
        self.root = os.path.abspath(root)
        self.workers, self.timeout = workers, timeout
        self.max_pending, self.per_owner = max_pending, per_owner
        self.log = log
        self.running: dict[tuple[str, str], threading.Thread] = {}
        self.gave_up: set[tuple[str, str]] = set()  # could not even be queued (this run only)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="agentos-verifier", daemon=True)

    def start(self) -> Verifier:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop dispatching, kill running verifications (their releases stay ``pending``), wait for the threads."""
        self._stop.set()
        self._wake.set()
        self._thread.join(30)
        for thread in list(self.running.values()):
            thread.join(30)

    def _mtime(self) -> int | None:
        try:
            return os.stat(os.path.join(self.root, "catalogue.json")).st_mtime_ns
        except OSError:
            return None

    def _loop(self) -> None:
        seen = object()  # the first pass always looks: pending releases of the last run are queued again
        while not self._stop.is_set():
            mtime = self._mtime()
            if mtime != seen:  # our own writes cause one more pass, which writes nothing
                seen = mtime
                try:
                    self._dispatch()
                except Exception as exc:  # a broken catalogue is the index's problem, not a reason to stop
                    self.log(f"could not queue claims: {type(exc).__name__}: {exc}")
            self._wake.wait(POLL)
            if self._wake.is_set():
                self._wake.clear()
                seen = object()

    def _dispatch(self) -> None:
        pending = mark_pending(self.root, max_pending=self.max_pending, per_owner=self.per_owner)
        busy = {project for project, _ in self.running}
        for claim in pending:
            if len(self.running) >= self.workers:
                return
            if claim in self.running or claim[0] in busy or claim in self.gave_up:
                continue
            busy.add(claim[0])
            thread = threading.Thread(target=self._verify, args=(claim,), name=f"verify {claim[0]}", daemon=True)
            self.running[claim] = thread
            thread.start()

    def _verify(self, claim: tuple[str, str]) -> None:
        project, version = claim
        self.log(f"verifying {project} {version}")
        try:
            outcome = run_one(self.root, project, version, timeout=self.timeout, stop=self._stop)
        except Exception as exc:  # e.g. no process could be started: give up on it for this run
            self.gave_up.add(claim)
            self.log(f"{project} {version}: not verified ({type(exc).__name__}: {exc})")
            outcome = None
        finally:
            self.running.pop(claim, None)
            self._wake.set()
        if outcome is not None:
            self.log(f"{outcome[0]}: {project} {version}: {outcome[1]}")
