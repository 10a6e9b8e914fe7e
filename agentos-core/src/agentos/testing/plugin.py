"""The pytest plugin of the conformance kit (registered through the ``pytest11`` entry point).

It must cost nothing in projects that do not use it: it imports only pytest, registers the
``agentos_conformance`` marker and offers the ``agentos_component`` fixture, whose imports happen
when a test asks for it.
"""

from __future__ import annotations

import pytest

MARKER = "agentos_conformance"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: a test from the AgentOS conformance kit (agentos.testing)")


@pytest.fixture
def agentos_component():
    """Factory: ``agentos_component(kind, name, **settings)`` builds an installed component.

    Policies and trainers may be given ``observation_space``/``action_space``; agents may be given
    ``environment``/``policy``/``trainer``: they are passed to constructors that name them, as
    ``agentos run`` does.
    """
    from ._conformance import build_component

    return build_component
