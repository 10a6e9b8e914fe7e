"""The AgentOS conformance kit: one class per kind that a component's own tests subclass.

::

    from agentos.testing import EnvironmentConformance

    class TestMyEnv(EnvironmentConformance):
        name = "my_env"              # the installed entry point (or override make_environment)

Every public test of the base class then runs against your component: see
:class:`EnvironmentConformance`, :class:`PolicyConformance`, :class:`TrainerConformance` and
:class:`AgentConformance`. The kit also ships :class:`ReferenceEnv` and :class:`ReferencePolicy`,
small components to test the others against, and a pytest plugin (loaded automatically through
the ``pytest11`` entry point) that registers the ``agentos_conformance`` marker. Nothing heavy
is imported until a conformance test runs.
"""

from __future__ import annotations

_LAZY = {
    "EnvironmentConformance": "._conformance",
    "PolicyConformance": "._conformance",
    "TrainerConformance": "._conformance",
    "AgentConformance": "._conformance",
    "ReferenceEnv": "._reference",
    "ReferencePolicy": "._reference",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agentos.testing' has no attribute {name!r}")
