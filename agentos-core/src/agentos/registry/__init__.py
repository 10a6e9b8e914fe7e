"""The component registry: a static package index (PEP 503/691/658/592) that pip installs from.

Publishing writes a folder (:mod:`._index`); reading works over ``file://`` and ``http(s)://``
(:mod:`._client`); installing runs pip in the agent's environment (:mod:`._install`); agents with
their own virtual environment are handled by :mod:`._venv`. Names are imported on first use so
that the CLI stays fast.
"""

from .._lazy import lazy_attributes

_LAZY = {
    "Artifact": "._artifacts",
    "PublishError": "..errors",
    "read_artifact": "._artifacts",
    "ResultsRecordError": "._results",
    "parse_results_record": "._results",
    "INDEX_URL_ENV": "._client",
    "IndexClient": "._client",
    "resolve_index_url": "._client",
    "search": "._client",
    "LocalIndex": "._index",
    "check_index": "._publish",
    "publish": "._publish",
    "publish_files": "._publish",
    "rebuild_index": "._publish",
    "yank": "._publish",
    "install": "._install",
    "uninstall": "._uninstall",
    "init_venv": "._venv",
    "upload_file": "._remote",
}

__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, __name__, _LAZY)
