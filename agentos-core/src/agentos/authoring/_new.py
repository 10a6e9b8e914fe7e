"""``agentos new``: render a component package or an agent directory from the templates.

The templates are plain cookiecutter templates (``templates/`` in the repository, shipped inside
the wheel as ``agentos/templates``), so ``cookiecutter templates/policy`` renders them too.
Only the values the user gives are passed; every derived name (distribution, module, class)
is computed by the template itself, so both ways give the same files.

User text is data: cookiecutter renders every context value as a Jinja template before the files
are rendered (so a description ``{{ 7*7 }}`` would become ``49``, and Jinja code could run), so
each value is passed as a Jinja string literal that renders to the value itself; and the files
are rendered in a scratch folder whose path holds no user text (cookiecutter also renders the
output path), then moved into place.
"""

from __future__ import annotations

import os
import re

from ..errors import UsageError
from ..host import canonical_kind, distribution_name, is_valid_name, normalize

#: Template folder of each thing ``agentos new`` makes.
TEMPLATES = {
    "environment": "environment",
    "policy": "policy",
    "trainer": "trainer",
    "agent-package": "agent-package",
    "agent": "agent",
}
#: ``--policy`` choices of an agent directory: flavour and algorithm.
AGENT_POLICIES = {
    "sb3_ppo": ("sb3", "PPO"),
    "sb3_a2c": ("sb3", "A2C"),
    "sb3_dqn": ("sb3", "DQN"),
    "torch": ("torch", "PPO"),
}
DEFAULT_AGENT_POLICY = "sb3_ppo"
DEFAULT_AGENT_ENVIRONMENT = "CartPole-v1"
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def templates_dir() -> str:
    """The templates: inside the installed package, else the repository's ``templates/`` folder."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the agentos package
    for candidate in (os.path.join(here, "templates"), os.path.join(here, "..", "..", "..", "templates")):
        if os.path.isfile(os.path.join(candidate, "policy", "cookiecutter.json")):
            return os.path.normpath(candidate)
    raise UsageError("the agentos templates are missing from this installation; reinstall agentos-core")


def check_name(name: str) -> str:
    """A component name must make a distribution, an entry point and a module name."""
    if not name or not is_valid_name(name):
        raise UsageError(
            f"invalid name {name!r}: use letters, digits, '_', '-' or '.', starting and ending with a "
            "letter or digit (e.g. my_policy)"
        )
    if normalize(name).startswith("agentos-"):
        raise UsageError(
            f"give the component's name, not its distribution: {name!r} would become "
            f"agentos-<kind>-{normalize(name)}; try {name.split('-', 2)[-1].split('_', 2)[-1]!r}"
        )
    return name


def _check_text(label: str, value: str) -> str:
    if any(c in value for c in '"\\') or not value.isprintable():
        raise UsageError(f"{label} must be one printable line without quotes or backslashes")
    return value


def literal(value: str) -> str:
    """Jinja source that renders to ``value`` itself: every character as an escape in a string literal."""
    return '{{ "' + "".join(f"\\U{ord(c):08x}" for c in value) + '" }}' if value else value


def resolve_environment(environment: str) -> dict:
    """An agent's environment: an installed AgentOS environment, else a Gymnasium id.

    ``CartPole-v1`` is a Gymnasium id; ``cartpole`` (any case, no version) is the latest version
    of that id. Installed AgentOS environments win over Gymnasium ids of the same name.
    """
    from ..host import ComponentHost

    host = ComponentHost()
    spec = host.find("environment", environment)
    if spec is not None:
        return {"environment": spec.name, "environment_source": "component", "environment_package": spec.package}
    import gymnasium

    ids = list(gymnasium.registry)
    if environment in ids:
        return {"environment": environment, "environment_source": "gymnasium"}
    wanted = normalize(environment)
    matches = [i for i in ids if normalize(i.split("/")[-1].rsplit("-v", 1)[0]) == wanted and "-v" in i]
    if matches:
        latest = max(matches, key=lambda i: int(i.rsplit("-v", 1)[1]) if i.rsplit("-v", 1)[1].isdigit() else -1)
        return {"environment": latest, "environment_source": "gymnasium"}
    installed = ", ".join(host.names("environment")) or "none"
    raise UsageError(
        f"unknown environment {environment!r}: not an installed AgentOS environment (installed: {installed}) "
        "nor a Gymnasium id (e.g. CartPole-v1); install it first (agentos install environment NAME)"
    )


def new(
    kind: str,
    name: str,
    *,
    output_dir: str = ".",
    description: str | None = None,
    author: str | None = None,
    package: bool = False,
    policy: str | None = None,
    environment: str | None = None,
    device: str = "auto",
) -> dict:
    """Render a new component package (or, for ``agent``, an agent directory) into ``output_dir``.

    A component ``policy my_policy`` becomes the folder ``agentos-policy-my-policy`` (its
    distribution name: normalized, as pip shows it) with the entry point ``my_policy``; an agent
    ``my_agent`` becomes the folder ``my_agent`` (``package=True``: the package
    ``agentos-agent-my-agent`` instead). Never overwrites an existing folder.
    """
    try:
        kind = canonical_kind(kind)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_name(name)
    agent_directory = kind == "agent" and not package
    if not agent_directory and (policy or environment):
        raise UsageError("--policy and --environment are for agent directories (agentos new agent NAME)")
    if not _DEVICE.match(device):
        raise UsageError(f"invalid device {device!r}: use auto, cpu, cuda or cuda:N")
    context: dict[str, str] = {"name": name}
    if description is not None:
        context["description"] = _check_text("the description", description)
    if author is not None:
        context["author"] = _check_text("the author", author)
    if agent_directory:
        template = TEMPLATES["agent"]
        choice = policy or DEFAULT_AGENT_POLICY
        if choice not in AGENT_POLICIES:
            raise UsageError(f"unknown --policy {choice!r}; choose one of: {', '.join(AGENT_POLICIES)}")
        context["flavour"], context["algorithm"] = AGENT_POLICIES[choice]
        context["device"] = device
        context.update(resolve_environment(environment or DEFAULT_AGENT_ENVIRONMENT))
        folder = name
    else:
        template = TEMPLATES["agent-package" if kind == "agent" else kind]
        folder = distribution_name(kind, name)
    output_dir = os.path.abspath(output_dir)
    target = os.path.join(output_dir, folder)
    if os.path.lexists(target):
        raise UsageError(f"{target} already exists; not overwriting it")
    directory = _render(os.path.join(templates_dir(), template), context, target)
    if agent_directory:  # registry-hosted requirements as hashed direct references
        from ..registry._requirements import pin_hosted

        pin_hosted(os.path.join(directory, "requirements.txt"))
    files = sorted(os.path.relpath(os.path.join(root, f), directory) for root, _, fs in os.walk(directory) for f in fs)
    return {
        "kind": kind,
        "name": name,
        "what": "agent directory" if agent_directory else "package",
        "package": None if agent_directory else folder,
        "directory": directory,
        "template": template,
        "files": files,
    }


def _literal_context(template: str, context: dict) -> dict:
    """Text values as literals; choice values (lists in cookiecutter.json, ours, not the user's) as they are."""
    import json

    with open(os.path.join(template, "cookiecutter.json"), encoding="utf-8") as f:
        defaults = json.load(f)
    return {key: literal(value) if isinstance(defaults.get(key), str) else value for key, value in context.items()}


def _render(template: str, context: dict, target: str) -> str:
    """Render with the cookiecutter library (no prompts, user config or replay files) into ``target``.

    Every value is passed as a literal; cookiecutter renders into a scratch folder (its path is
    rendered too, so it must hold no user text), and the result is then moved to ``target``.
    """
    import shutil
    import tempfile

    from cookiecutter.exceptions import CookiecutterException
    from cookiecutter.main import cookiecutter

    with tempfile.TemporaryDirectory(prefix="agentos-new-") as scratch:
        if any(mark in scratch for mark in "{}%#"):
            raise UsageError(f"the temporary folder {scratch} has template characters; set TMPDIR elsewhere")
        config = {"replay_dir": scratch, "cookiecutters_dir": scratch}
        # A copy without the bytecode that pip compiles from the template's .py files on install.
        clean = os.path.join(scratch, os.path.basename(template))
        shutil.copytree(
            template, clean, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ruff_cache", ".pytest_cache")
        )
        try:
            rendered = cookiecutter(
                clean,
                no_input=True,
                extra_context=_literal_context(clean, context),
                output_dir=os.path.join(scratch, "out"),
                overwrite_if_exists=False,
                default_config=config,
            )
        except CookiecutterException as exc:
            raise UsageError(f"could not render {os.path.basename(template)}: {exc}") from None
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.lexists(target):
            raise UsageError(f"{target} already exists; not overwriting it")
        shutil.move(rendered, target)
        return target
