"""How long experiment processes live: SIGTERM stops an experiment like Ctrl-C, and no worker
outlives the client that started it.

A pool worker watches the client process (a ``pidfd`` on Linux, else a poll every half second)
and exits when it ends, even by ``SIGKILL``; on Linux it also asks the kernel for ``SIGKILL`` when its
own parent (the fork server) dies. The fork server and the resource tracker end by themselves
once the client and every worker are gone (they wait for the last holder of their pipes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

#: Signals that stop ``agentos experiment run`` like Ctrl-C (finished trials kept, summary written).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
_PR_SET_PDEATHSIG = 1


class Stopped(KeyboardInterrupt):
    """The experiment was asked to stop by a signal (``signum``), not by Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def stop_signals_interrupt():
    """Within the block, SIGTERM and SIGHUP raise :class:`Stopped` (a ``KeyboardInterrupt``) in the
    main thread, so the experiment stops its workers and writes its summary as for Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise Stopped(signum)

    saved = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def watch_client(pid: int | None) -> None:
    """In a pool worker: exit when process ``pid`` (the client) or this worker's parent dies."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if pid:
        threading.Thread(target=_exit_when_gone, args=(pid,), name="agentos-client-watch", daemon=True).start()


def _exit_when_gone(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        fd = None
        _exit()
    except (AttributeError, OSError):  # no pidfd (not Linux, or an old kernel): poll
        fd = None
    if fd is not None:
        import select

        select.select([fd], [], [])  # readable once the process has ended
    else:
        while _alive(pid):
            time.sleep(0.5)
    _exit()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _exit() -> None:
    """The client is gone: stop this worker's own subprocesses (vectorised environments), then exit."""
    with contextlib.suppress(Exception):
        import multiprocessing

        for child in multiprocessing.active_children():
            child.terminate()
    os._exit(1)
