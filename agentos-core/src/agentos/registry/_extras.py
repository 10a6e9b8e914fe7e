"""Extras (PEP 685) of our projects: which a release declares, and ``NAME[EXTRA,...]`` as the CLI takes it.

An extra's name comes from published metadata (someone else's data) and names a file
(``install/<project>[<extra>].txt``), so only names in PEP 685's grammar count.
"""

from __future__ import annotations

import re

from ..errors import UsageError

EXTRA_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?")
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


def declared(requires: list[str]) -> list[str]:
    """The extras that ``requires`` (a release's Requires-Dist lines) declare, normalized and sorted."""
    from packaging.utils import canonicalize_name

    found = {m for line in requires for m in _EXTRA_MARKER.findall(line)}
    return sorted({canonicalize_name(m) for m in found if EXTRA_NAME.fullmatch(m)})


def split(name: str) -> tuple[str, list[str]]:
    """``2048[test,dev]`` -> ``("2048", ["dev", "test"])``; extras must be PEP 685 names."""
    from packaging.utils import canonicalize_name

    if "[" not in name and "]" not in name:
        return name, []
    base, sep, rest = name.partition("[")
    inner = rest[:-1] if rest.endswith("]") else None
    words = [w.strip() for w in (inner or "").split(",")]
    if not sep or inner is None or not base.strip() or not all(EXTRA_NAME.fullmatch(w) for w in words):
        raise UsageError(f"malformed extras in {name!r}: write NAME[EXTRA,...], e.g. 2048[test]")
    return base.strip(), sorted({canonicalize_name(w) for w in words})


def requirements(art, extras: list[str]) -> list[str]:
    """The requirements that ``extras`` add to the wheel's own (markers evaluated, then dropped)."""
    from packaging.requirements import InvalidRequirement, Requirement

    unknown = sorted(set(extras) - set(declared(art.requires)))
    if unknown:
        offered = ", ".join(declared(art.requires)) or "none"
        raise UsageError(f"{art.name} {art.version} has no extra {unknown[0]!r} (its extras: {offered})")
    out = []
    for line in art.requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if (
            req.marker
            and not req.marker.evaluate({"extra": ""})
            and any(req.marker.evaluate({"extra": e}) for e in extras)
        ):
            req.marker = None
            out.append(str(req))
    return out
