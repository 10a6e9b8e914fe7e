"""The verifier's side of a sandboxed evaluation: the environment, the seeds and the recorder.

:func:`play_job` runs where the policy package is NOT installed (the verify command runs it in a venv
holding only agentos-core and the environment package, ``python -m agentos.sandbox._env_side``): it
builds the environment, starts the policy in the sandbox (:class:`~._remote.RemotePolicy`), plays
one episode per seed (in blocks of the batched twin when the policy decides in batches, else
:data:`~._concurrent.CONCURRENCY` environments in lockstep) and makes the results record itself.
The policy's identity in the record is the one the verifier installed, never what the package says.
"""

from __future__ import annotations

import os
import sys

from ._wire import recv_json, send_json

LIMITS = {"cpu": 3600, "memory": 8 << 30, "wall": 3600.0}


def policy_command(job: dict) -> tuple[list[str], dict | None]:
    """The command that starts the policy's side, and its environment (None: the sandbox's own)."""
    from . import _bwrap

    argv = ["-m", "agentos.sandbox._policy_side"]
    path = [os.path.abspath(p) for p in job.get("pythonpath") or []]
    if job.get("sandboxed", True):
        cmd = _bwrap.command(job["policy_python"], job["policy_venv"], argv, binds=tuple(path))
        if path:
            cmd[cmd.index("--"):cmd.index("--")] = ["--setenv", "PYTHONPATH", os.pathsep.join(path)]
        return cmd, None
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    return [job["policy_python"], *argv], env


def play_job(job: dict) -> dict:
    """The results record of ``job``'s policy on its environment and seeds (see the module docstring)."""
    from ..config import AgentConfig
    from ..core._context import AgentContext, use
    from ..learning._commands import episode_step_limit
    from ..results._evaluate import _identity
    from ..results._play import batched_twin, play_batched
    from ..results._record import make_record
    from . import _bwrap
    from ._concurrent import CONCURRENCY, play_concurrent
    from ._remote import RemotePolicy

    name, settings = job["environment"], dict(job.get("settings") or {})
    text = f"[environment]\ndefault = {name}\n"
    if settings:
        text += f"\n[environment.{name}]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())
    context = use(AgentContext(AgentConfig.from_text(text, path=os.path.join(os.getcwd(), "agent.ini"))))
    try:
        env_id = _identity(context, "environment")
        environment = context.get("environment")
        limits = {**LIMITS, **(job.get("limits") or {})}
        command, env = policy_command(job)
        hello = {"environment": name, "policy": job["policy"]["name"], "settings": settings}
        key = job.get("policy_seed_key")
        remote = RemotePolicy(command, hello, environment.action_space, wall=float(limits["wall"]), env=env,
                              preexec=_bwrap.limiter(int(limits["cpu"]), int(limits["memory"])),
                              seed_key=bytes.fromhex(key) if key else None)
        try:
            seeds = [int(s) for s in job["seeds"]]
            steps = job.get("max_episode_steps") or episode_step_limit(environment)
            creator = batched_twin(context.host.load("environment", name), remote) if remote.batched else None
            if creator is not None:
                played = play_batched(creator, settings, remote, seeds, max_steps=steps)
            else:
                played = play_concurrent(lambda: context.create("environment", name), remote, seeds,
                                         max_steps=steps, concurrency=int(job.get("concurrency") or CONCURRENCY))
        finally:
            remote.close()
        return make_record(env_id, job["policy"], seeds, played)
    finally:
        context.close()


def main() -> None:
    """Read a job from stdin, write ``{"record": ...}`` or ``{"unverifiable": reason}`` to stdout."""
    from ..errors import AgentOSError
    from ._remote import PolicyFailed

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    job = recv_json(inp)
    try:
        send_json(out, {"record": play_job(job)})
    except PolicyFailed as exc:
        send_json(out, {"unverifiable": str(exc)})
    except (AgentOSError, ValueError, TypeError, KeyError, RuntimeError) as exc:
        send_json(out, {"unverifiable": f"the re-run failed: {type(exc).__name__}: {str(exc)[:200]}"})


if __name__ == "__main__":
    main()
