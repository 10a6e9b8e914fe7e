"""The sandbox the policy runs in: Debian's bubblewrap (``bwrap``), and the limits set before it starts.

Inside: no network (a new network namespace with only loopback, where nothing listens), its own PID
namespace (every process it starts dies with it: ``--die-with-parent``, and the kernel kills the
namespace's processes when its first one ends), a new session (no terminal to inject keys into), a
read-only view of ``/usr`` and ``/etc``'s few files Python needs, the Python installation and the
policy's venv (read-only too), an empty private ``/tmp``; no ``/root``, ``/home``, index, working folder
or tokens, and a cleared environment. CPU seconds and address space are capped with ``setrlimit``
before ``bwrap`` runs (limits are inherited), the wall time by the caller. As root bwrap needs no
setuid bit and no ``--unshare-user``; as another user it needs unprivileged user namespaces.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

BWRAP = "/usr/bin/bwrap"
ETC = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group")


class SandboxUnavailable(Exception):
    """No sandbox can run on this machine (no bwrap, or user namespaces refused)."""


def python_home(python: str) -> str:
    """The Python installation a venv's interpreter comes from (``home`` in its pyvenv.cfg)."""
    cfg = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(python))), "pyvenv.cfg")
    try:
        with open(cfg, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip() == "home":
                    return os.path.dirname(os.path.realpath(os.path.join(value.strip(), "python3")))
    except OSError:
        pass
    return os.path.dirname(os.path.dirname(os.path.realpath(python)))


def _root_of(home_bin: str) -> str:
    """The installation folder of a Python whose ``bin`` folder is ``home_bin`` (``/usr`` for the system's)."""
    return os.path.dirname(home_bin) if os.path.basename(home_bin) == "bin" else home_bin


def command(python: str, venv: str, argv: list[str], *, binds: tuple[str, ...] = ()) -> list[str]:
    """The bwrap command that runs ``python argv`` inside the sandbox, the venv at its own path."""
    bwrap = shutil.which("bwrap") or BWRAP
    cmd = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    cmd += ["--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for link in ("bin", "lib", "lib32", "lib64", "sbin"):
        target = os.path.join("/", link)
        if os.path.islink(target):
            cmd += ["--symlink", os.readlink(target), target]
        elif os.path.isdir(target):
            cmd += ["--ro-bind", target, target]
    for path in ETC:
        cmd += ["--ro-bind-try", path, path]
    installation = _root_of(python_home(python))
    for path in dict.fromkeys([installation, os.path.realpath(venv), os.path.abspath(venv), *binds]):
        if path != "/usr" and not path.startswith("/usr/"):
            cmd += ["--ro-bind", path, path]
    cmd += ["--clearenv", "--setenv", "HOME", "/tmp", "--setenv", "PATH", "/usr/bin:/bin", "--chdir", "/tmp"]
    cmd += ["--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "OMP_NUM_THREADS", "1"]
    return [*cmd, "--", python, *argv]


def limiter(cpu_seconds: int, memory_bytes: int):
    """A ``preexec_fn`` that caps CPU seconds, address space, core files and open files (inherited by bwrap)."""
    import resource

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    return apply


_PROBED: dict[str, str | None] = {}


def problem() -> str | None:
    """Why no sandbox can run here (one line), or None when bwrap starts a process in its namespaces."""
    if "result" in _PROBED:
        return _PROBED["result"]
    bwrap = shutil.which("bwrap") or (BWRAP if os.access(BWRAP, os.X_OK) else None)
    if not sys.platform.startswith("linux") or bwrap is None:
        why = "bubblewrap (bwrap) is not installed (Debian: apt-get install -y bubblewrap)"
    else:
        probe = command(sys.executable, sys.prefix, ["-c", "pass"])
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
            failed = f"bwrap cannot make its namespaces here: {done.stderr.strip()[:200]}"
            why = None if done.returncode == 0 else failed
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = f"bwrap does not start: {exc}"
    _PROBED["result"] = why
    return why
