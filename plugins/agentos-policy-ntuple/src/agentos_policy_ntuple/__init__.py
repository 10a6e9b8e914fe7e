"""An n-tuple value network for 2048: greedy 1-ply afterstate play, optional expectimax search.

Trained by ``agentos-trainer-td``.  Importing this package imports numpy and numba (through
``agentos_env_2048.kernels``); the kernels compile, or load numba's on-disk cache, on first use.  The
host imports it only when an agent uses the policy.  The network itself
(tuples, layout, value, update and search kernels) is the public module
:mod:`agentos_policy_ntuple.network`.  ``MAX_WEIGHTS`` (2 ** 29, all stages) and ``MAX_CACHE_BITS``
(26) bound what a setting can make it allocate (added in 1.2); ``whole_number`` and ``real_number``
parse settings without ``int()``'s silent truncation (public in 1.2.1, used by agentos-trainer-td).
"""

from agentos_policy_ntuple._policy import MAX_CACHE_BITS, MAX_WEIGHTS, NTuplePolicy, real_number, whole_number

__all__ = ["MAX_CACHE_BITS", "MAX_WEIGHTS", "NTuplePolicy", "real_number", "whole_number"]


def __getattr__(name: str):
    if name == "__version__":  # the installed distribution's (a constant here went stale)
        from importlib.metadata import version

        return version("agentos-policy-ntuple")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
