"""Results: evaluation records (``agentos evaluate``) and trained-policy packages (``agentos publish --run``).

Public API: :func:`evaluate` (test episodes on stated seeds, a ``results.json`` record),
:func:`evaluate_many` (several policies, on a Dask cluster with ``scheduler``), :func:`publish_run`
(a run's policy as ``agentos-policy-<name>``, evaluated, published), :func:`trained_policy` and
:func:`build_policy` (what a trained package's entry point calls), :func:`make_record` and
:data:`FORMAT`; weights files (safetensors, read bounded): :func:`check_weights` (the header checked
before any tensor is read), :func:`quantize` (float tensors as float16 or block-scaled int8) and
:func:`dequantized` (a quantized file back in its original dtypes); :func:`prepare_venv` (a fresh venv
from an index with an environment and a policy, as ``verify`` and ``evaluate --isolated`` make it).
Names are imported on first use.
"""

from .._lazy import lazy_attributes

_LAZY = {
    "evaluate": "._evaluate",
    "evaluate_many": "._evaluate",
    "publish_run": "._publish_run",
    "trained_policy": "._trained",
    "build_policy": "._trained",
    "make_record": "._record",
    "FORMAT": "._record",
    "check_weights": "._weights",
    "quantize": "._weights",
    "dequantized": "._weights",
    "prepare_venv": "._isolated",
}

__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, __name__, _LAZY)
