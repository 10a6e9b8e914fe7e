"""The verifier's handle on the sandboxed policy: it sends observations and gets back actions it checks.

:class:`RemotePolicy` starts the policy's process (in bwrap, or, only when asked, without it), with
CPU, memory and wall-time bounds; every answer is a bounded plain array, checked against the
environment's action space before it reaches the environment. Any breach of the protocol, a crash,
an action outside the space or the wall deadline ends the process group and raises
:class:`PolicyFailed` with one line saying why.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time

from ._wire import WireError, recv_array, recv_json, send_array, send_json

STDERR_TAIL = 8 * 1024


class PolicyFailed(Exception):
    """The policy's process did not play by the rules (or crashed, or ran out of time); the message says how."""


def check_actions(space, actions, n: int):
    """``actions`` (one array) as a list of ``n`` actions of ``space``, or :class:`PolicyFailed`."""
    import numpy as np
    from gymnasium import spaces

    if actions.ndim < 1 or actions.shape[0] != n:
        raise PolicyFailed(f"the policy answered {actions.shape[:1]} actions for {n} observations")
    if isinstance(space, spaces.Discrete):
        if actions.ndim != 1 or actions.dtype.kind not in "iu":
            raise PolicyFailed(f"the policy's actions are not integers of {space}")
        low, high = int(space.start), int(space.start + space.n)
        if n and (int(actions.min()) < low or int(actions.max()) >= high):
            raise PolicyFailed(f"the policy chose an action outside {space}")
        return actions.tolist()
    out = []
    for action in actions:
        if isinstance(space, spaces.Box) and action.dtype.kind == "f" == np.dtype(space.dtype).kind:
            action = action.astype(space.dtype)
        if not space.contains(action):
            raise PolicyFailed(f"the policy chose an action outside {space}")
        out.append(action)
    return out


class RemotePolicy:
    """A policy in another process: ``seed``/``reset``/``decide_batch`` and slot-wise ``step``."""

    def __init__(self, command: list[str], hello: dict, action_space, *, wall: float, preexec=None, env=None,
                 seed_key: bytes | None = None):
        self.space = action_space
        self._seed_key = seed_key
        self._tail = bytearray()
        self._timed_out = False
        self._home = tempfile.TemporaryDirectory(prefix="agentos-policy-")
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self._home.name,
            env=env if env is not None else {"PATH": "/usr/bin:/bin", "HOME": self._home.name},
            preexec_fn=preexec,
            start_new_session=True,
        )
        threading.Thread(target=self._drain, daemon=True).start()
        self._timer = threading.Timer(wall, self._expire)
        self._timer.daemon = True
        self._timer.start()
        self.started = time.monotonic()
        try:
            self.batched = bool(self._call(lambda: send_json(self.proc.stdin, hello), "ready").get("batched"))
        except PolicyFailed:
            self.close()
            raise

    # -- the process -------------------------------------------------------------------------------
    def _drain(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self._tail.extend(chunk)
            del self._tail[:-STDERR_TAIL]

    def _expire(self) -> None:
        self._timed_out = True
        self.kill()

    def kill(self) -> None:
        """End the policy's process group (the sandbox's PID namespace takes everything in it along)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        self._timer.cancel()
        for stream in (self.proc.stdin,):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
        self.proc.wait()
        self.proc.stdout.close()
        self._home.cleanup()

    def _why(self) -> str:
        if self._timed_out:
            return "the policy ran out of wall time"
        code = self.proc.poll()
        lines = [ln for ln in bytes(self._tail).decode("utf-8", "replace").splitlines() if ln.strip()]
        last = lines[-1][:200] if lines else ""
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            limit = ": CPU or memory limit" if name in ("SIGXCPU", "SIGKILL") else ""
            return f"the policy's process was killed ({name}{limit})"
        return f"the policy's process failed{f': {last}' if last else ''}"

    def _call(self, send, answer: str):
        try:
            send()
            if answer == "ready":
                reply = recv_json(self.proc.stdout)
                if not isinstance(reply, dict) or reply.get("ready") is not True:
                    raise PolicyFailed("the policy's process broke the protocol (no ready message)")
                return reply
            return recv_array(self.proc.stdout)
        except (WireError, OSError, ValueError) as exc:
            time.sleep(0.05)  # let a dying process's last words and exit status arrive
            reason = self._why()
            if self.proc.poll() is None and not self._timed_out:
                reason = f"the policy's process broke the protocol ({exc})"
            self.kill()
            raise PolicyFailed(reason) from None

    def _policy_seed(self, seed: int) -> int:
        """The seed the policy gets for an episode seeded ``seed``: with a ``seed_key`` (verify), an HMAC of
        it under the verifier's secret key, so the policy never learns the environment's seed (from
        which it could replay the episode's randomness and play with foresight)."""
        if self._seed_key is None:
            return int(seed)
        import hashlib
        import hmac

        return int.from_bytes(hmac.new(self._seed_key, str(int(seed)).encode(), hashlib.sha256).digest()[:4], "big")

    # -- what the players call ---------------------------------------------------------------------
    def seed(self, seed: int) -> None:
        self._pending_seed = self._policy_seed(seed)

    def reset(self) -> None:
        seed = getattr(self, "_pending_seed", 0)
        try:
            send_json(self.proc.stdin, {"op": "seed", "seed": seed})
        except OSError:
            self._call(lambda: None, "array")  # raises with the reason

    def decide_batch(self, observations):
        def send():
            send_json(self.proc.stdin, {"op": "batch"})
            send_array(self.proc.stdin, observations)

        return check_actions(self.space, self._call(send, "array"), len(observations))

    def step(self, slots: list[int], observations, starts: dict[int, int]) -> list:
        import numpy as np

        def send():
            starts_ = {str(k): self._policy_seed(v) for k, v in starts.items()}
            send_json(self.proc.stdin, {"op": "step", "starts": starts_})
            send_array(self.proc.stdin, np.asarray(slots, dtype=np.int64))
            send_array(self.proc.stdin, observations)

        return check_actions(self.space, self._call(send, "array"), len(slots))
