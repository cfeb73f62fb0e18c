"""`census(device, arrays)`: how many entries of each array are finite and how many are NaN,
for many arrays in one GPU launch: what the NaN/Inf watch of `genesis trace` takes of an op's
inputs and outputs at every call.

On a GPU the arrays (float32 or float64, one dtype; up to MAX_TENSORS of them) are counted
by one `cupy.RawKernel`: each thread block counts a CHUNK of one array, sums its threads'
counts in shared memory and adds them to the array's two slots of a float64 result (counts
are exact in a double up to 2**53). Elsewhere, and for other dtypes, each array gets the
two reductions of `_finite_figures`. Either way the result is a list of device figures
whose values, in order, are (finite, NaN) per array, for a `Readings` to fetch.

>>> import numpy as np, genesis
>>> figures = census(genesis.device("cpu"), [np.array([1.0, np.nan, np.inf]), np.ones(2)])
>>> [float(value) for figure in figures for value in np.ravel(figure)]
[1.0, 1.0, 2.0, 0.0]
"""
from __future__ import annotations

import numpy as np

from ..ops._kernels import _KERNEL_DTYPES
from ..ops._multi_tensor import CHUNK, MAX_TENSORS, THREADS, blocks_for, chunk_picks
from ._finite_figures import FINITE_COUNT, NAN_COUNT

__all__ = ["census", "census_source", "CENSUS_NAME"]

CENSUS_NAME = "genesis_census"
_compiled: dict = {}  # (namespace, dtype, count) -> compiled kernel


def census(device, arrays: list, zeroed=None) -> list:
    """Device figures holding (finite count, NaN count) of each of `arrays`, in order;
    `zeroed(count)` gives the zeroed float64 slots the kernel adds into (a new array each
    call by default; `Readings.zeroed` shares one)."""
    xp = device.xp
    dtypes = {array.dtype for array in arrays}
    if getattr(xp, "__name__", "") != "cupy" or len(dtypes) != 1 or \
            next(iter(dtypes)) not in _KERNEL_DTYPES:
        return [figure(device, array) for array in arrays for figure in (FINITE_COUNT, NAN_COUNT)]
    dtype = dtypes.pop()
    if zeroed is None:
        zeroed = lambda count: xp.zeros(count, xp.float64)  # noqa: E731
    figures = []
    for start in range(0, len(arrays), MAX_TENSORS):
        group = arrays[start:start + MAX_TENSORS]
        figures.append(_launch(xp, dtype, group, zeroed(2 * len(group))))
    return figures


def _launch(xp, dtype, arrays: list, counts):
    blocks = blocks_for(array.size for array in arrays)
    if not blocks:
        return counts
    key = (xp, dtype, len(arrays))
    function = _compiled.get(key)
    if function is None:
        ctype = "float" if dtype == np.float32 else "double"
        function = _compiled[key] = xp.RawKernel(census_source(ctype, len(arrays)), CENSUS_NAME)
    args = []
    for array in arrays:  # the order of the entries does not matter, only that they are dense
        dense = array.flags.c_contiguous or array.flags.f_contiguous
        args += [array if dense else xp.ascontiguousarray(array), np.int64(array.size)]
    function((blocks,), (THREADS,), (*args, counts))
    return counts


def census_source(ctype: str, count: int) -> str:
    """The CUDA text counting `count` arrays of T = `ctype`."""
    pointers = ", ".join(f"const T* x_{k}, long long size_{k}" for k in range(count))
    picks = chunk_picks(count, lambda k: f"x = x_{k};")
    return f"""typedef {ctype} T;
#define GENESIS_CHUNK {CHUNK}
#define GENESIS_THREADS {THREADS}
__device__ void genesis_add(double* address, double value) {{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
  unsigned long long* bits = (unsigned long long*) address;
  unsigned long long seen = *bits, expected;
  do {{
    expected = seen;
    seen = atomicCAS(bits, expected,
                     __double_as_longlong(__longlong_as_double(expected) + value));
  }} while (seen != expected);
#else
  atomicAdd(address, value);
#endif
}}
extern "C" __global__ void {CENSUS_NAME}({pointers}, double* counts) {{
  long long block = blockIdx.x;  // becomes the chunk number within the array found
  bool found = false;
  int tensor = -1;
  long long size = 0;
  const T* x = 0;
{picks}
  const long long start = block * GENESIS_CHUNK;
  const long long end = size < start + GENESIS_CHUNK ? size : start + GENESIS_CHUNK;
  unsigned int finite = 0, nan = 0;
  for (long long i = start + threadIdx.x; i < end; i += blockDim.x) {{
    const T value = x[i];
    finite += isfinite(value) ? 1 : 0;
    nan += isnan(value) ? 1 : 0;
  }}
  __shared__ unsigned int finite_counts[GENESIS_THREADS], nan_counts[GENESIS_THREADS];
  finite_counts[threadIdx.x] = finite;
  nan_counts[threadIdx.x] = nan;
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {{
    if (threadIdx.x < stride) {{
      finite_counts[threadIdx.x] += finite_counts[threadIdx.x + stride];
      nan_counts[threadIdx.x] += nan_counts[threadIdx.x + stride];
    }}
    __syncthreads();
  }}
  if (threadIdx.x == 0 && found) {{
    genesis_add(&counts[2 * tensor], (double) finite_counts[0]);
    genesis_add(&counts[2 * tensor + 1], (double) nan_counts[0]);
  }}
}}
"""
