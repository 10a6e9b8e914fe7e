"""``acr.<kind>.<name>``: components by kind and name, built on first access from the active agent.ini."""

from __future__ import annotations

from ..host import canonical_kind
from ._context import active_context


class KindNamespace:
    """All components of one kind: ``acr.policy.random``, ``acr.environment["2048"]``, ``"dqn" in acr.policy``."""

    def __init__(self, kind: str):
        self._kind = kind

    def __getitem__(self, name: str):
        return active_context().get(self._kind, str(name))

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except LookupError as exc:
            raise AttributeError(str(exc)) from None

    def __contains__(self, name) -> bool:
        return active_context().host.find(self._kind, str(name)) is not None

    def __iter__(self):
        return iter(active_context().names(self._kind))

    def __len__(self) -> int:
        return len(active_context().names(self._kind))

    def __dir__(self):
        return [n for n in active_context().names(self._kind) if n.isidentifier()]

    def __repr__(self) -> str:
        context = active_context()
        default = context.default_name(self._kind)
        names = [f"{n}*" if default and n == default else n for n in context.names(self._kind)]
        return f"<acr.{self._kind}: {', '.join(names) or 'none installed'}{' (* default)' if default else ''}>"

    @property
    def default(self):
        """The default component of this kind (as ``self.<kind>`` in an agent)."""
        return active_context().get(self._kind)

    def create(self, name: str, **settings):
        """A fresh instance, not the shared one; ``settings`` override agent.ini's."""
        return active_context().create(self._kind, name, **settings)

    def load(self, name: str):
        """The component's class (or factory), imported but not built."""
        return active_context().host.load(self._kind, name)

    def spec(self, name: str):
        """What is known about the component without importing it."""
        return active_context().host.spec(self._kind, name)


def register(kind: str, name: str, obj) -> None:
    """Make your own class (or instance) reachable as ``acr.<kind>.<name>``."""
    context = active_context()
    spec = context.host.register(canonical_kind(kind), name, obj)
    context.instances.pop(spec.key, None)
