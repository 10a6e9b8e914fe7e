"""Bit tricks of the 2048 kernels as single instructions where the processor has them.

:func:`popcount` is LLVM's ``ctpop`` (``popcnt`` on x86-64 processors that have it). :func:`nth_bit` is the
``k``-th lowest set bit of a mask: BMI2's ``pdep(1 << k, mask)`` where ``pdep`` is fast (``FAST_BMI2``:
Intel since Haswell, AMD since Zen 3; numba's ``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES`` are respected),
else a loop that clears the lowest bit ``k`` times. Either way the results are the same, and under
``AGENTOS_2048_PURE=1`` both are plain Python. ``AGENTOS_2048_NO_PEXT=1`` turns BMI2 off.
"""

from __future__ import annotations

import os

import numpy as np

from agentos_env_2048._jit import njit

_U = np.uint64
_S1 = _U(1)
_SLOW_BMI2 = frozenset({"znver1", "znver2", "bdver1", "bdver2", "bdver3", "bdver4", "btver2"})


def _fast_bmi2() -> bool:
    if os.environ.get("AGENTOS_2048_PURE") or os.environ.get("AGENTOS_2048_NO_PEXT"):
        return False
    try:
        import numba
        from llvmlite import binding
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    name = numba.config.CPU_NAME or "host"
    if name == "host":
        name, bmi2 = binding.get_host_cpu_name(), bool(binding.get_host_cpu_features().get("bmi2"))
    else:
        bmi2 = "+bmi2" in (numba.config.CPU_FEATURES or "").split(",")
    return bmi2 and name not in _SLOW_BMI2


FAST_BMI2 = _fast_bmi2()


def _plain_popcount(mask):
    return _U(bin(int(mask)).count("1"))


def _intrinsics():
    """LLVM's ``ctpop`` and BMI2's ``pdep`` for numba, or plain Python (``pdep``: None) where numba is off."""
    if os.environ.get("AGENTOS_2048_PURE"):
        return _plain_popcount, None
    try:
        from llvmlite import ir
        from numba import types
        from numba.core import cgutils
        from numba.extending import intrinsic
    except ImportError:  # pragma: no cover - numba is a dependency
        return _plain_popcount, None
    word = ir.IntType(64)

    def call(name, arity):
        def codegen(context, builder, signature, args):
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(word, [word] * arity), name)
            return builder.call(function, args)

        return codegen

    @intrinsic
    def ctpop(typingctx, mask):
        if mask != types.uint64:
            return None
        return types.uint64(types.uint64), call("llvm.ctpop.i64", 1)

    @intrinsic
    def pdep(typingctx, value, mask):
        if value != types.uint64 or mask != types.uint64:
            return None
        return types.uint64(types.uint64, types.uint64), call("llvm.x86.bmi.pdep.64", 2)

    return ctpop, pdep


_ctpop, _pdep = _intrinsics()


@njit(inline=True)
def popcount(mask):
    """The number of set bits of an integer (as a uint64), as a uint64."""
    return _ctpop(_U(mask))


if FAST_BMI2:

    @njit(inline=True)
    def nth_bit(mask, k):
        """The ``k``-th lowest set bit of ``mask`` alone (counting from 0; 0 when it has ``k`` or fewer); ``k`` < 64."""
        return _pdep(_S1 << _U(k), _U(mask))

else:

    @njit(inline=True)
    def nth_bit(mask, k):
        """The ``k``-th lowest set bit of ``mask`` alone (counting from 0; 0 when it has ``k`` or fewer); ``k`` < 64."""
        for _ in range(int(k)):
            mask &= mask - _S1
        return mask & (~mask + _S1)
