"""Agents with their own virtual environment (``agentos init --venv``).

``agent.ini`` says ``[agentos] venv = .venv``; every command that acts on that agent (install,
uninstall, list, run, train, runs) then re-executes itself as ``<venv>/bin/python -m agentos ...``
when it is not already running there, so pip, discovery and the components all use the agent's
own interpreter. Two agents can therefore hold conflicting versions of the same dependency.
"""

from __future__ import annotations

import os
import sys

from ..errors import AgentOSError, UsageError

#: Commands that act on one agent and so must run with the agent's interpreter.
AGENT_COMMANDS = frozenset({"install", "uninstall", "list", "run", "train", "runs"})
_REEXEC_ENV = "AGENTOS_AGENT_VENV"
STARTER = (("environment", "corridor"), ("policy", "random"))


def venv_python(venv_dir: str) -> str:
    return os.path.join(venv_dir, "Scripts" if os.name == "nt" else "bin", "python")


def _agent_path(args) -> str | None:
    from ..core._paths import find_agent_ini

    for attr in ("agent", "agent_ini", "agent_show"):
        value = getattr(args, attr, None)
        if value:
            return value
    extra = getattr(args, "args", None)  # agentos train [agent.ini] N
    if isinstance(extra, list) and len(extra) == 2:
        return extra[0]
    return find_agent_ini()


def agent_venv(path: str) -> str | None:
    """The venv folder that the agent.ini at ``path`` names, or None."""
    from ..config import AgentConfig

    if os.path.isdir(path):
        path = os.path.join(path, "agent.ini")
    if not os.path.isfile(path):
        return None
    config = AgentConfig.load(path)
    venv = config.meta_value("venv")
    return os.path.abspath(config.resolve_path(str(venv))) if venv else None


def reexec_in_agent_venv(args, argv: list[str]) -> None:
    """Replace this process with the agent's venv interpreter when the agent has one."""
    if getattr(args, "command", None) not in AGENT_COMMANDS:
        return
    path = _agent_path(args)
    venv = agent_venv(path) if path else None
    if not venv or os.path.realpath(sys.prefix) == os.path.realpath(venv) or os.environ.get(_REEXEC_ENV) == venv:
        return
    python = venv_python(venv)
    if not os.path.exists(python):
        raise UsageError(
            f"the agent's virtual environment {venv} is missing (agent.ini: [agentos] venv); "
            f"recreate it with: python -m venv {venv} && {python} -m pip install -r requirements.txt"
        )
    env = dict(os.environ)
    env[_REEXEC_ENV] = venv
    env["VIRTUAL_ENV"] = venv
    if not env.get("AGENTOS_INDEX_URL"):
        from ..config import AgentConfig
        from ._client import resolve_index_url

        try:
            env["AGENTOS_INDEX_URL"] = resolve_index_url(
                getattr(args, "index_url", None),
                AgentConfig.load(path if path.endswith(".ini") else os.path.join(path, "agent.ini")),
            )
        except UsageError:
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(python, [python, "-m", "agentos", *argv], env)


def _run(cmd: list[str], what: str, env=None, timeout: float | None = None) -> None:
    import subprocess

    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        from ._pip import error_line

        raise AgentOSError(f"{what} failed: {error_line(proc)}")


def init_venv(directory: str, venv: str = ".venv", *, index_url: str | None = None, echo=None,
              timeout: float | None = None, one_shot: bool = False) -> dict:
    """Give the agent in ``directory`` its own venv: agentos-core and the starter components are
    installed there from the registry (their exact files, hashes checked), and agent.ini records
    ``venv`` and ``index-url``. ``one_shot``: a venv used once (verify), so no bytecode is compiled."""
    from ..config import AgentConfig, atomic_write
    from . import _requirements
    from ._client import IndexClient, choose_file, resolve_index_url

    echo = echo or (lambda message: None)
    config = AgentConfig.load(directory)
    url = resolve_index_url(index_url, config)
    client = IndexClient(url)
    files = client.project_files("agentos-core")
    if not files:
        raise AgentOSError(
            f"the index at {url} has no agentos-core; publish it first: agentos publish --library agentos-core"
        )
    entry = choose_file(files, "agentos-core")
    path = client.fetch_file(entry)
    venv_dir = os.path.abspath(config.resolve_path(venv))
    echo(f"creating the virtual environment {venv_dir}")
    _run([sys.executable, "-m", "venv", venv_dir], "creating the virtual environment", timeout=timeout)
    python = venv_python(venv_dir)
    import pathlib

    core = f"agentos-core @ {pathlib.Path(path).as_uri()}#sha256={entry['hashes']['sha256']}"
    echo("installing agentos-core and its requirements into it")
    _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *(["--no-compile"] if one_shot else []),
          core], "installing agentos-core", timeout=timeout)
    config.document.set("agentos", "venv", venv)
    config.document.set("agentos", "index-url", url)
    req_path = _requirements.requirements_path(config)
    text = _requirements.read(req_path)
    atomic_write(
        req_path,
        _requirements.with_line(
            text, "agentos-core", _requirements.pinned_line("agentos-core", entry["url"], entry["hashes"]["sha256"])
        ),
    )
    config.save()
    env = {**os.environ, _REEXEC_ENV: venv_dir, "AGENTOS_INDEX_URL": url}
    env.pop("AGENTOS_AGENT_INI", None)
    installed = []
    for kind, name in STARTER:
        if config.component(kind, name) is None:
            continue
        echo(f"installing {kind} {name}")
        _run(
            [python, "-m", "agentos", "install", kind, name, "--agent", config.path, "--default"],
            f"installing {kind} {name}",
            env=env,
        )
        installed.append(f"{kind} {name}")
    echo(f"before torch components, choose torch's build: {python} -m pip install torch --index-url "
         "https://download.pytorch.org/whl/cpu (CPU), or torch (CUDA)")
    return {"venv": venv_dir, "python": python, "index_url": url, "installed": installed}
