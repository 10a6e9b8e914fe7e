"""``agentos init``: a minimal ACR-aware agent directory."""

from __future__ import annotations

import os

from ..config import atomic_write
from ..errors import UsageError
from ..host import ComponentHost, distribution_name

STARTER = {"environment": "corridor", "policy": "random"}

AGENT_PY = '''"""{name}: an AgentOS agent.

``agentos run`` builds ``MyAgent`` with the default components named in agent.ini, so inside it
``self.environment`` and ``self.policy`` are the same objects as ``acr.environment.<default>`` and
``acr.policy.<default>``. Every installed component stays reachable through ``acr``.
"""

from agentos import Agent


class MyAgent(Agent):
    """The reference agent loop: the policy decides, the environment steps.

    Override ``advance()`` to change a step, for instance to learn while acting::

        def advance(self):
            action = self.policy.decide(self.observation)
            self.observation, reward, terminated, truncated, self.info = self.environment.step(action)
            self.last_reward = reward
            self.episode_return += reward
            self.episode_length += 1
            return terminated or truncated
    """
'''

README = """# {name}

An AgentOS agent: `agent.ini` names its components and their settings, `agent.py` holds its code.

    agentos run                      # run the agent (random policy in the corridor)
    agentos list                     # installed components; the defaults are marked
    python -c "import acr; print(acr.environment.default)"
"""


def init_agent(directory: str = ".", *, name: str | None = None, host: ComponentHost | None = None) -> dict:
    """Create ``agent.ini``, ``agent.py``, ``requirements.txt`` and ``README.md`` in ``directory``.

    Refuses to touch a folder that already has an ``agent.ini``. Returns what was written and the
    starter components that are not installed (they still go into agent.ini).
    """
    directory = os.path.abspath(directory)
    name = name or os.path.basename(directory.rstrip(os.sep)) or "agent"
    ini_path = os.path.join(directory, "agent.ini")
    if os.path.exists(ini_path):
        raise UsageError(f"{ini_path} already exists; not overwriting it")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"{directory} exists and is not a folder")
    host = host or ComponentHost()
    lines = [
        f"# {name}: the components of this agent and their settings.",
        "[agentos]",
        f"name = {name}",
        "requirements = requirements.txt",
        "",
    ]
    from .._version import __version__
    from ..host import is_valid_name

    agent_name = name if is_valid_name(name) else "my_agent"
    requirements = {"agentos-core": __version__}
    missing = []
    sections = []
    for kind, comp in STARTER.items():
        spec = host.find(kind, comp)
        package = spec.package if spec else distribution_name(kind, comp)
        version = spec.version if spec else ""
        if spec is None:
            missing.append(f"{kind} {comp}")
        lines += [f"[{kind}]", f"default = {comp}", ""]
        sections += [f"[{kind}.{comp}]", f"package = {package}"] + ([f"version = {version}"] if version else []) + [""]
        requirements[package] = version or None
    lines += ["[agent]", f"default = {agent_name}", "", *sections, f"[agent.{agent_name}]", "source = agent.py:MyAgent"]
    from ..registry._requirements import lines_for

    requirements = lines_for(requirements)
    os.makedirs(directory, exist_ok=True)
    files = {
        "agent.py": AGENT_PY.format(name=name),
        "requirements.txt": "\n".join(requirements) + "\n",
        "README.md": README.format(name=name),
    }
    written = []
    for filename, text in files.items():
        path = os.path.join(directory, filename)
        if not os.path.exists(path):
            atomic_write(path, text)
            written.append(filename)
    atomic_write(ini_path, "\n".join(lines) + "\n")
    return {"directory": directory, "written": ["agent.ini", *written], "missing": missing}
