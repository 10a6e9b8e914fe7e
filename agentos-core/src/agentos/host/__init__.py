"""The component host: discovery from entry points, lazy loading, per-plugin errors."""

from ._boundary import DISABLE_ENV
from ._discovery import ComponentSpec, cache_dir, discover, discover_commands
from ._host import ComponentHost, error_key, recorded_errors
from ._names import (
    KINDS,
    canonical_kind,
    did_you_mean,
    distribution_name,
    is_valid_name,
    normalize,
    parse_distribution_name,
)

__all__ = [
    "DISABLE_ENV",
    "KINDS",
    "ComponentHost",
    "ComponentSpec",
    "cache_dir",
    "canonical_kind",
    "did_you_mean",
    "discover",
    "discover_commands",
    "distribution_name",
    "error_key",
    "is_valid_name",
    "normalize",
    "parse_distribution_name",
    "recorded_errors",
]
