"""Every fused kernel body compiles with NVRTC, CUDA's own compiler, inside a kernel shaped
like the one CuPy generates (CuPy's carray.cuh: CArray arguments, a CIndexer, CUPY_FOR),
in float and double; every row and multi-tensor kernel's whole text compiles as it is. NVRTC needs no GPU, only CuPy and the NVRTC library; without them
this skips (the C++ check in test_fused_kernels.py still runs the bodies on the CPU).

Arrays and numbers are told apart by each kernel's sample arguments there.
"""
import os

import numpy as np
import pytest

from genesis.ops._kernels import C_TYPES, REGISTRY, Elementwise, parameters
from genesis.ops._multi_tensor import MultiTensorKernel
from genesis.ops._row_kernels import RowKernel
from tests.ops.kernel_samples import SAMPLES



def _nvrtc_or_skip():
    try:
        import cupy
        from cupy.cuda import nvrtc
        program = nvrtc.createProgram('extern "C" __global__ void probe() {}', "probe.cu", [], [])
        nvrtc.compileProgram(program, [])
    except Exception as error:  # no CuPy, or no NVRTC library
        pytest.skip(f"needs CuPy and NVRTC ({type(error).__name__}: {str(error)[:80]})")
    return nvrtc, os.path.join(os.path.dirname(cupy.__file__), "_core", "include")


def _c_type(kind: str, scalar: str) -> str:
    return scalar if kind == "T" else C_TYPES[kind]


def _source(kernel, args, scalar: str) -> str:
    """The kernel as CuPy would generate it, near enough: inputs loaded through the indexer,
    outputs as references, raw arrays and numbers passed as they are. A row kernel is its
    own whole text (CuPy's RawKernel compiles it as it is), as is a multi-tensor kernel's
    (built here for three tensors)."""
    if isinstance(kernel, RowKernel):
        return kernel.source(scalar)
    if isinstance(kernel, MultiTensorKernel):
        return kernel.source(scalar, 3)
    reduction = not isinstance(kernel, Elementwise)
    index = "_in_ind" if reduction else "_ind"
    declared, loads, stores = [], [], []
    for item, arg in zip(parameters(kernel.inputs), args):
        c = _c_type(item.type, scalar)
        if not isinstance(arg, np.ndarray):
            declared.append(f"{c} {item.name}")
        elif item.raw:
            declared.append(f"CArray<{c}, {max(arg.ndim, 1)}> {item.name}")
        else:
            declared.append(f"CArray<{c}, 3> _raw_{item.name}")
            loads.append(f"const {c} {item.name} = _raw_{item.name}[{index}.get()];")
    for item in parameters(kernel.outputs):
        c = _c_type(item.type, scalar)
        declared.append(f"CArray<{c}, 3> _raw_{item.name}")
        stores.append(f"{c} &{item.name} = _raw_{item.name}[{'_out_ind' if reduction else '_ind'}.get()];")
    head = f"#include <cupy/carray.cuh>\ntypedef {scalar} T;\n"
    if not reduction:
        return head + f"""extern "C" __global__ void {kernel.name}({", ".join(declared)}, CIndexer<3> _ind) {{
  CUPY_FOR(i, _ind.size()) {{
    _ind.set(i);
    {" ".join(loads)}
    {" ".join(stores)}
    {kernel.body};
  }}
}}"""
    reduced = _c_type(parameters(kernel.outputs)[0].type, scalar)
    return head + f"""typedef {reduced} _type_reduce;
extern "C" __global__ void {kernel.name}({", ".join(declared)}, CIndexer<3> _in_ind,
                                       CIndexer<3> _out_ind) {{
  _type_reduce a = _type_reduce({kernel.identity});
  CUPY_FOR(_i, _in_ind.size()) {{
    _in_ind.set(_i);
    {" ".join(loads)}
    _type_reduce b = _type_reduce({kernel.map_expr});
    a = {kernel.reduce_expr};
  }}
  _out_ind.set(0);
  {" ".join(stores)}
  {kernel.post_map};
}}"""


def test_every_kernel_body_compiles_with_nvrtc():
    nvrtc, include = _nvrtc_or_skip()
    failures = []
    for name in sorted(SAMPLES):
        kernel = REGISTRY[name]
        args, _ = SAMPLES[name](np.random.default_rng(0), np.float32)
        for scalar in ("float", "double"):
            program = nvrtc.createProgram(_source(kernel, args, scalar), f"{name}.cu", [], [])
            try:
                nvrtc.compileProgram(program, [f"-I{include}", "-std=c++14"])
            except Exception:
                failures.append(f"{name} ({scalar}):\n{nvrtc.getProgramLog(program)}")
    assert not failures, "kernels NVRTC does not compile:\n" + "\n".join(failures)


def test_the_sums_over_many_arrays_compile_with_nvrtc():
    from genesis.debug._census import ARRAY_SUMS
    nvrtc, include = _nvrtc_or_skip()
    for name, kernel in sorted(ARRAY_SUMS.items()):
        for scalar in ("float", "double"):
            for count in (1, 3):
                program = nvrtc.createProgram(kernel.source(scalar, count), f"{name}.cu", [], [])
                try:
                    nvrtc.compileProgram(program, [f"-I{include}", "-std=c++14"])
                except Exception:
                    pytest.fail(f"{name} ({scalar}, {count}):\n{nvrtc.getProgramLog(program)}")
