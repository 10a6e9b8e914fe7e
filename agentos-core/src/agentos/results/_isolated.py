"""Evaluating a published policy in a fresh virtual environment: nothing of it runs in this one.

The venv is made the way ``agentos init --venv`` makes one (agentos-core from the index, its file's
hash checked), then ``agentos install`` puts the environment and the policy into it (registry
projects pinned to the index's files), and ``agentos evaluate`` runs there and writes the record,
which is read back here as data (validated, bounded). The set-up is timed apart from the episodes.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time

from ..errors import AgentOSError, UsageError

#: What the last :func:`evaluate_in_venv` spent: ``setup`` (venv and installs) and ``evaluate`` seconds.
LAST_TIMES: dict[str, float] = {}


#: Bytes of a fresh venv's output kept (the last ones, for the error line): a package that prints without
#: end must cost neither memory nor disk here (its code runs there; this process only reads).
OUTPUT_TAIL = 64 * 1024


def run_bounded(command: list[str], *, env: dict, cwd: str, timeout: float | None = None) -> tuple[int, str]:
    """Run ``command`` with stdout and stderr read through a pipe of which only the last :data:`OUTPUT_TAIL`
    bytes are kept; returns ``(returncode, tail)``. :class:`subprocess.TimeoutExpired` after ``timeout``
    seconds (the process killed)."""
    import threading

    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                            start_new_session=True)
    tail = bytearray()

    def drain():
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            tail.extend(chunk)
            del tail[:-OUTPUT_TAIL]

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise
    finally:
        reader.join(5)
        proc.stdout.close()
    return proc.returncode, bytes(tail).decode("utf-8", "replace")


def kill_group(proc) -> None:
    """Kill ``proc`` and every process of its session's group (a child it left behind too), then reap it."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _agentos(python: str, args: list[str], env: dict, cwd: str, what: str, timeout: float | None = None) -> None:
    from .._safe_text import printable

    code, tail = run_bounded([python, "-m", "agentos", *args], env=env, cwd=cwd, timeout=timeout)
    if code != 0:
        raise AgentOSError(f"{what} failed in the fresh venv: {printable(last_line(tail)) or f'exit {code}'}")


#: pip's environment for a venv used once (verify, ``evaluate --isolated``): no bytecode compiled at install,
#: which for torch is most of the install's time (36 s against 15 s here); the few modules a run imports are
#: compiled as they load. pip reads ``PIP_NO_COMPILE`` as the value of its ``compile`` option, so "0" is
#: ``--no-compile`` (pip's documented rule for ``--no-*`` options set from the environment).
ONE_SHOT_PIP = {"PIP_NO_COMPILE": "0"}


def _same_torch(folder: str) -> dict[str, str]:
    """pip's environment for a fresh venv that gets torch only if a component needs it, and then the
    release this process runs (its build, where pip finds it): a constraints file ``torch==X``.

    The fresh venv is AgentOS's own (verify, ``evaluate --isolated``), so the install may bring torch
    (``--any-torch``); which torch is the user's choice made once, in the environment running AgentOS.
    Without torch here, pip chooses, as it would for ``pip install``."""
    from ..registry._torch import TORCH_FAMILY, installed_torch_pins

    pins = [pin.split("+", 1)[0] for pin in installed_torch_pins() if pin.split("==")[0] in TORCH_FAMILY]
    if not pins:
        return {}
    path = os.path.join(folder, "torch-constraints.txt")
    with open(path, "w") as f:
        f.write("".join(pin + "\n" for pin in pins))
    return {"PIP_CONSTRAINT": path}


def prepare_venv(folder: str, environment: str, policy: str | None, *, index_url: str | None = None, echo=None,
                 binary_only: bool = False, deadline: float | None = None) -> dict:
    """A fresh venv in ``folder`` with agentos-core, ``environment`` and ``policy`` (if any) from the index.

    ``binary_only``: pip installs wheels only (no package's setup.py runs while installing).
    ``deadline`` (a ``time.monotonic()`` value): every step is stopped when it passes."""
    from ..config import atomic_write
    from ..registry._install import NO_IMPORT_ENV
    from ..registry._venv import _REEXEC_ENV, init_venv
    from ..registry._verify_queue import passed_on_environ

    def left() -> float | None:
        if deadline is None:
            return None
        if deadline - time.monotonic() <= 0:
            raise subprocess.TimeoutExpired("prepare_venv", 0)
        return deadline - time.monotonic()

    ini = os.path.join(folder, "agent.ini")
    atomic_write(ini, "[agentos]\n")
    made = init_venv(folder, ".venv", index_url=index_url, echo=echo, timeout=left(), one_shot=True)
    # only what programs, caches and pip need (no tokens); and the install imports nothing it installed:
    # the policy package's code runs only in the sandbox
    env = {**passed_on_environ(os.environ), _REEXEC_ENV: made["venv"], "AGENTOS_INDEX_URL": made["index_url"],
           "AGENTOS_AGENT_INI": ini, NO_IMPORT_ENV: "1"}
    if binary_only:
        env["PIP_ONLY_BINARY"] = ":all:"
    env.update(ONE_SHOT_PIP)
    env.update(_same_torch(folder))
    for kind, name in (("environment", environment), ("policy", policy)):
        if name is None:
            continue
        if echo:
            echo(f"installing {kind} {name} into the fresh venv")
        _agentos(
            made["python"],
            ["install", kind, name, "--agent", ini, "--default", "--any-torch"],
            env,
            folder,
            f"installing {kind} {name}",
            timeout=left(),
        )
    return {**made, "env": env, "agent_ini": ini}


def evaluate_in_venv(
    policy: str,
    environment: str,
    episodes: int,
    seed: int,
    *,
    index_url: str | None = None,
    max_episode_steps: int | None = None,
    echo=None,
    task: str | None = None,
) -> dict:
    """The results record of ``policy`` played in a fresh venv (see the module docstring)."""
    from ..learning._record_check import MalformedRecord, read_json
    from ._record import MAX_BYTES, validate

    with tempfile.TemporaryDirectory(prefix="agentos-evaluate-", ignore_cleanup_errors=True) as folder:
        started = time.perf_counter()
        made = prepare_venv(folder, environment, policy, index_url=index_url, echo=echo)
        LAST_TIMES["setup"] = time.perf_counter() - started
        if echo:
            echo(f"fresh venv ready in {LAST_TIMES['setup']:.1f} s (not counted in the evaluation)")
        out = os.path.join(folder, "results.json")
        args = [
            "evaluate",
            policy,
            "--environment",
            environment,
            "--episodes",
            str(episodes),
            "--seed",
            str(seed),
            "--out",
            out,
            "--in-place",
        ]
        if max_episode_steps:
            args += ["--max-episode-steps", str(max_episode_steps)]
        if task:  # a task id (checked by the caller): the environment's task setting in the fresh venv
            args += ["--task", task]
        started = time.perf_counter()
        _agentos(made["python"], args, made["env"], folder, f"evaluating {policy}")
        LAST_TIMES["evaluate"] = time.perf_counter() - started
        if os.path.getsize(out) > MAX_BYTES:
            raise UsageError(f"the fresh venv wrote a results record over {MAX_BYTES:,} bytes; refused")
        try:
            record = read_json(out)
        except MalformedRecord as exc:
            raise UsageError(f"the fresh venv wrote no valid results record ({exc})") from None
    if not isinstance(record, dict):
        raise UsageError("the fresh venv wrote no valid results record (not an object)")
    return validate(record)


__all__ = ["LAST_TIMES", "evaluate_in_venv", "kill_group", "prepare_venv"]
