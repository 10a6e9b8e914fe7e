"""x86's ``pext`` (BMI2: gather the bits of a mask into the low bits) for the n-tuple kernels, where it is fast.

``FAST_PEXT`` is :data:`agentos_env_2048.kernels.FAST_BMI2`: True when numba compiles for a processor with BMI2
whose ``pext`` is one cycle a result (Intel since Haswell, AMD since Zen 3; numba's ``NUMBA_CPU_NAME``/
``NUMBA_CPU_FEATURES`` respected; off with ``AGENTOS_2048_NO_PEXT=1`` or ``AGENTOS_2048_PURE=1``). Where it is
off, the kernels compute the same indices with shifts and masks (``pext`` keeps the cells in their board order,
which is the order of the default tuples).
"""

from __future__ import annotations

from agentos_env_2048.kernels import FAST_BMI2 as FAST_PEXT

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
