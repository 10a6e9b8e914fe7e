"""x86's ``pext`` (BMI2: gather the bits of a mask into the low bits) for the n-tuple kernels, where it is fast.

``FAST_PEXT`` is True when numba compiles for a processor with BMI2 whose ``pext`` is one cycle a result:
Intel since Haswell and AMD since Zen 3 (on Zen 1 and 2 it is microcode, tens of cycles; ``znver1``/``znver2``
are left out). Numba's ``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES`` (a portable cache) are respected: a named
processor uses ``pext`` only when the features say ``+bmi2``. ``AGENTOS_2048_NO_PEXT=1`` turns it off; with
``AGENTOS_2048_PURE=1`` (plain Python) it is off. Where it is off, the kernels compute the same indices with
shifts and masks (``pext`` keeps the cells in their board order, which is the order of the default tuples).
"""

from __future__ import annotations

import os

_SLOW = frozenset({"znver1", "znver2", "bdver1", "bdver2", "bdver3", "bdver4", "btver2"})


def _fast_pext() -> bool:
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
    return bmi2 and name not in _SLOW


FAST_PEXT = _fast_pext()

if FAST_PEXT:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def pext(typingctx, value, mask):
        """``pext(value, mask)`` of two uint64 (one instruction)."""
        if value != types.uint64 or mask != types.uint64:
            return None

        def codegen(context, builder, signature, args):
            word = ir.IntType(64)
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(word, [word, word]),
                                                      "llvm.x86.bmi.pext.64")
            return builder.call(function, args)

        return types.uint64(types.uint64, types.uint64), codegen
else:
    pext = None
