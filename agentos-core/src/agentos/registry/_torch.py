"""torch is the user's choice: an install never replaces the torch a venv has, nor silently brings one.

torch's build (CPU or CUDA) is chosen where it is installed from, not by its name: ``pip install
torch`` on Linux brings the CUDA build (several GB of ``nvidia-*`` wheels). So a component install
keeps the installed torch (and torchvision, torchaudio) exactly: they are pinned in pip's dry run, so
a looser requirement (``torch>=2.1``) is met by them, and one they cannot meet is an error, not an
upgrade. When the venv has no torch and the plan would bring one, the install stops with one line
saying how to choose the build, unless the user lets pip choose (``--any-torch``).
"""

from __future__ import annotations

from ..errors import AgentOSError

#: Distributions built together with torch for one platform (CPU or one CUDA version).
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")

CHOOSE = (
    "choose its build first, in the agent's environment: CPU: `python -m pip install torch --index-url "
    "https://download.pytorch.org/whl/cpu`; CUDA: `python -m pip install torch` "
    "(docs/learning.md, 'torch: CPU or CUDA')"
)


def installed_torch_pins() -> list[str]:
    """``name==version`` for each installed member of the torch family (the dry run keeps them)."""
    from ._pip import installed_versions

    return [f"{name}=={version}" for name, version in installed_versions(TORCH_FAMILY).items()
            if version not in (None, "?")]


def check_plan(plan: dict[str, str], what: str, *, any_torch: bool) -> None:
    """Refuse a plan that brings torch into a venv without one, unless ``any_torch``."""
    if any_torch or "torch" not in plan:
        return
    cuda = sum(1 for name in plan if name.startswith("nvidia-"))
    brings = f"torch {plan['torch']}" + (f" with {cuda} CUDA libraries (several GB)" if cuda else "")
    raise AgentOSError(
        f"{what} needs torch, which this environment does not have; pip would bring {brings}: {CHOOSE}, "
        "then install again (or pass --any-torch to take pip's choice); nothing was changed"
    )


def kept_torch_error(pins: list[str], pip_line: str) -> str:
    """The message when pip cannot plan an install while keeping the installed torch."""
    kept = ", ".join(pin.replace("==", " ") for pin in pins)
    return (
        f"pip cannot install this while keeping {kept} (an install never replaces the torch you chose): "
        f"{pip_line}; to change torch, install the build you want first; nothing was changed"
    )
