"""Component kinds and the naming convention that ties kinds, names and distributions together.

A component of kind ``policy`` named ``q_table`` is published as the distribution
``agentos-policy-q-table`` and declares an entry point ``q_table`` in the group ``agentos.policy``.
Names compare like PEP 503 project names: case, ``-``, ``_`` and ``.`` do not matter.
"""

from __future__ import annotations

import re

KINDS = ("environment", "policy", "trainer", "agent", "preset")
GROUP_PREFIX = "agentos."
#: The short word used in distribution names: ``agentos-env-2048``.
DIST_WORD = {"environment": "env", "policy": "policy", "trainer": "trainer", "agent": "agent", "preset": "preset"}
KIND_ALIASES = {
    "env": "environment",
    "environments": "environment",
    "policies": "policy",
    "trainers": "trainer",
    "agents": "agent",
    "presets": "preset",
}
_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_SEPARATORS = re.compile(r"[-_.]+")


def normalize(name: str) -> str:
    """PEP 503 normalization: ``Q_Table`` and ``q-table`` are the same name."""
    return _SEPARATORS.sub("-", name).lower()


def canonical_kind(kind: str) -> str:
    """``env`` -> ``environment``; raises ValueError for an unknown kind."""
    kind = KIND_ALIASES.get(kind.lower(), kind.lower())
    if kind not in KINDS:
        hint = did_you_mean(kind, [*KINDS, *KIND_ALIASES])
        raise ValueError(f"unknown kind {kind!r}{hint} (kinds are: {', '.join(KINDS)})")
    return kind


def is_valid_name(name: str) -> bool:
    """A component name must also be a valid distribution-name fragment."""
    return bool(_NAME_RE.match(name))


def distribution_name(kind: str, name: str) -> str:
    """The conventional distribution for a component: ``("environment", "2048")`` -> ``agentos-env-2048``."""
    return f"agentos-{DIST_WORD[canonical_kind(kind)]}-{normalize(name)}"


def parse_distribution_name(dist: str) -> tuple[str, str] | None:
    """The inverse of :func:`distribution_name`: ``agentos-env-2048`` -> ``("environment", "2048")``."""
    parts = normalize(dist).split("-", 2)
    if len(parts) != 3 or parts[0] != "agentos":
        return None
    for kind, word in DIST_WORD.items():
        if parts[1] == word:
            return kind, parts[2]
    return None


def did_you_mean(name: str, choices) -> str:
    """A ``" (did you mean 'x'?)"`` suffix, or an empty string."""
    import difflib

    choices = list(choices)
    by_norm = {normalize(c): c for c in choices}
    close = difflib.get_close_matches(normalize(name), list(by_norm), n=1, cutoff=0.6)
    return f"; did you mean {by_norm[close[0]]!r}?" if close else ""
