"""A claim re-run for ``agentos index verify`` (and ``agentos evaluate --isolated``): two fresh venvs.

* the **policy venv**: agentos-core, the environment and the policy package from the index, installed
  wheels-only (``PIP_ONLY_BINARY=:all:``: no setup.py runs) and never started outside the sandbox
  after the policy is in it (a ``.pth`` file in a wheel runs at every interpreter start);
* the **environment venv**: agentos-core and the environment package at the claim's version, without
  the policy package. ``python -m agentos.sandbox._env_side`` runs there: environment, seeds and
  recorder, with the policy in the sandbox (or, with ``unsandboxed``, in a plain child process).

One deadline covers it all, venv set-up included; the environment side runs in its own session and
its whole process group is killed when the deadline passes. The record comes back over a pipe (no
file the package could turn into a FIFO) and is checked by the caller.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from ..errors import AgentOSError
from ._wire import WireError, recv_json, send_json


class RerunFailed(AgentOSError):
    """The re-run could not be made or finished; ``sandboxed`` says whether the sandbox was in use."""

    def __init__(self, message: str, sandboxed: bool):
        super().__init__(message)
        self.sandboxed = sandboxed


def _env_side(python: str, job: dict, env: dict, cwd: str, timeout: float) -> dict:
    """The environment side's answer (``record`` or ``unverifiable``), within ``timeout`` seconds."""
    import threading

    from ..results._isolated import kill_group

    proc = subprocess.Popen([python, "-m", "agentos.sandbox._env_side"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True)
    tail = bytearray()

    def drain():
        for chunk in iter(lambda: proc.stderr.read1(65536), b""):
            tail.extend(chunk)
            del tail[:-8192]

    expired = threading.Event()
    timer = threading.Timer(max(timeout, 0.01), lambda: (expired.set(), kill_group(proc)))
    threading.Thread(target=drain, daemon=True).start()
    timer.start()
    try:
        send_json(proc.stdin, job)
        proc.stdin.close()
        answer = recv_json(proc.stdout, 4 << 20)
    except (WireError, OSError):
        answer = None
    finally:
        timer.cancel()
        kill_group(proc)
    if expired.is_set():
        raise subprocess.TimeoutExpired("re-run", timeout)
    if not isinstance(answer, dict) or not ({"record", "unverifiable"} & answer.keys()):
        lines = [ln for ln in bytes(tail).decode("utf-8", "replace").splitlines() if ln.strip()]
        raise AgentOSError(f"the re-run's environment side failed: {lines[-1][:200] if lines else 'no answer'}")
    return answer


def environment_spec(name: str, env: dict | None) -> str:
    """What the fresh venv installs for the environment ``name`` of a target's ``env`` (``{version, task}``):
    pinned to the version, with the extra its task's family needs when it is a Gymnasium task
    (``gymnasium[box2d]==1.3.0`` for LunarLander-v3; the task is matched against a fixed table)."""
    from ..registry._gymnasium_ids import COMPONENT, family

    if not env:
        return name
    found = family(str(env.get("task") or "")) if name == COMPONENT else None
    extra = f"[{found[1]}]" if found and found[1] else ""
    return f"{name}{extra}=={env['version']}"


def evaluate_isolated(policy: str, environment: str, episodes: int, seed: int, *, index_url: str,
                      max_episode_steps: int | None = None, timeout: float = 3600.0, echo=None) -> dict:
    """``agentos evaluate --isolated``: the results record of the published ``policy`` on ``environment``,
    played like a verification (the newest releases the index serves; the policy sandboxed)."""
    return _play(environment, policy, None, None, list(range(seed, seed + episodes)), index_url, timeout=timeout,
                 unsandboxed=False, echo=echo, max_episode_steps=max_episode_steps)["record"]


def rerun(target: dict, index_root: str, *, timeout: float, unsandboxed: bool = False, echo=None,
          concurrency: int | None = None) -> dict:
    """The record of ``target`` (a :func:`agentos.registry._verify.plan`) played with the policy sandboxed.

    Raises :class:`RerunFailed` (with the reason) when it cannot be re-run; :class:`~._bwrap.SandboxUnavailable`
    when no sandbox can run here and ``unsandboxed`` is false.
    """

    env = target["environment"]
    seeds = list(range(target["seed"], target["seed"] + target["episodes"]))
    return _play(env["name"], target["policy"]["name"], env, target, seeds, Path(index_root).as_uri(),
                 timeout=timeout, unsandboxed=unsandboxed, echo=echo, concurrency=concurrency)


def _installed(agent_ini: str, kind: str, name: str) -> dict:
    """``{"name", "package", "version"}`` of what ``agentos install`` recorded in a venv's agent.ini."""
    from ..config import AgentConfig

    comp = AgentConfig.load(agent_ini).component(kind, name)
    return {"name": comp.name, "package": comp.package, "version": comp.version}


def _play(env_name: str, policy_name: str, env: dict | None, target: dict | None, seeds: list[int], url: str, *,
          timeout: float, unsandboxed: bool, echo=None, concurrency=None, max_episode_steps=None) -> dict:
    from ..results._isolated import prepare_venv
    from ._bwrap import SandboxUnavailable, problem

    why = problem()
    if why and not unsandboxed:
        raise SandboxUnavailable(why)
    sandboxed = why is None
    deadline = time.monotonic() + timeout
    env_spec = environment_spec(env_name, env)
    policy_spec = f"{policy_name}=={target['version']}" if target else policy_name
    with tempfile.TemporaryDirectory(prefix="agentos-verify-", ignore_cleanup_errors=True) as folder:
        try:
            for side in ("env", "policy"):
                os.mkdir(os.path.join(folder, side))
            env_venv = prepare_venv(os.path.join(folder, "env"), env_spec, None,
                                    index_url=url, echo=echo, deadline=deadline)
            policy_venv = prepare_venv(os.path.join(folder, "policy"), env_spec, policy_spec, index_url=url,
                                       echo=echo, binary_only=True, deadline=deadline)
            if target:
                identity = {"name": policy_name, "package": target["project"], "version": target["version"]}
            else:
                identity = _installed(policy_venv["agent_ini"], "policy", policy_name)
        except subprocess.TimeoutExpired:
            why = f"setting up the re-run took longer than {timeout:.0f} s (--timeout)"
            raise RerunFailed(why, sandboxed) from None
        except AgentOSError as exc:
            raise RerunFailed(str(exc), sandboxed) from None
        job = {
            "environment": env_name,
            "settings": {"id": env["task"]} if env and env.get("task") else {},
            "policy": identity,
            "seeds": seeds,
            "max_episode_steps": max_episode_steps,
            "policy_python": policy_venv["python"],
            "policy_venv": policy_venv["venv"],
            "sandboxed": sandboxed,
            "limits": {"wall": max(deadline - time.monotonic(), 0.01), "cpu": int(timeout) + 1},
        }
        if target:  # a verification: the policy's own seeds are derived from the secret ones under a key it never sees
            import secrets

            job["policy_seed_key"] = secrets.token_hex(16)
        if concurrency:
            job["concurrency"] = concurrency
        if echo:
            echo(f"playing {len(seeds)} episodes: environment here, policy "
                 + ("in the sandbox (bwrap)" if sandboxed else "UNSANDBOXED (--unsandboxed)"))
        try:
            answer = _env_side(env_venv["python"], job, env_venv["env"], os.path.join(folder, "env"),
                               deadline - time.monotonic())
        except subprocess.TimeoutExpired:
            raise RerunFailed(f"the re-run took longer than {timeout:.0f} s (--timeout)", sandboxed) from None
        except AgentOSError as exc:
            raise RerunFailed(str(exc), sandboxed) from None
    if "unverifiable" in answer:
        raise RerunFailed(str(answer["unverifiable"])[:400], sandboxed)
    return {"record": answer["record"], "sandboxed": sandboxed}
