"""Row kernels: a reduction along one axis and the map that uses it, in one GPU launch.

A softmax needs the row's maximum, then the sum of exps, then the exps over that sum:
three launches as `Elementwise`/`Reduction` kernels (genesis/ops/_kernels.py), because a
CuPy reduction ends its launch. A `RowKernel` gives each row one CUDA thread block, which
reduces in shared memory and goes on to write the row, as PyTorch's own softmax kernels
do. A row is the elements along one `axis=` (softmax, layer norm), or every element but
those of one `keep=` axis (batch norm: a channel's elements over the batch and space).
It is written, like every fused kernel, twice:

* a CUDA body (`cupy.RawKernel`, compiled on first use for float or double); in it the
  arrays are pointers to the row's first element, element j is `x[AT(j)]`, `n` is the
  row's length, `FOR_ROW(j)` loops a thread over its share of the row,
  `THREAD_SUM(x)`/`THREAD_MAX(x)` combine that share of x, and
  `block_reduce(value, GenesisSum())` (or `GenesisMax()`, which keeps NaN) combines one
  value from each thread of the block and gives the result to all of them;
* a reference of array calls taking the same `axis=` (or `keep=`), which the CPU, the
  tests' fake GPU, float16 and empty or 0-d arrays run.

Arrays are T-typed and of one shape, except those declared with a qualifier:

* `row` ("row int64 target", "row T loss"): one element per row, the shape with 1 along
  `axis` (1 everywhere but `keep`), of their declared type; in the body the name points
  at the row's own element, `target[0]`;
* `raw` ("raw T weight"), an input: the whole array, of any shape, indexed by the body by
  its C-order element number, `weight[k]`;
* `scalar` ("scalar T eps"), an input: a number, the same for every row.

tests/ops/test_row_kernels.py compiles every body as C++ with one CPU thread per CUDA
thread (barriers for `__syncthreads`) and checks it against its reference.

>>> import numpy as np, genesis
>>> row_sum = RowKernel("row_sum", "T x", "T y",
...                     "const T total = block_reduce(THREAD_SUM(x), GenesisSum()); "
...                     "FOR_ROW(j) y[AT(j)] = total;",
...                     lambda device, x, axis: np.broadcast_to(x.sum(axis, keepdims=True),
...                                                             x.shape).copy(),
...                     register=False)
>>> row_sum(genesis.device("cpu"), np.array([[1., 2.], [3., 4.]]), axis=1)
array([[3., 3.],
       [7., 7.]])
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._kernels import C_TYPES, Kernel

__all__ = ["RowKernel", "PRELUDE", "MAX_THREADS"]

MAX_THREADS = 256  # threads per block (a power of two), each looping over its share of a row
_MAX_BLOCKS = 2 ** 31 - 1  # CUDA's largest grid along x: one block per row

# Shared by every row kernel's CUDA text. Also valid C++ once the test shim defines the
# CUDA keywords, so the C++ check compiles the very same text.
PRELUDE = f"""#define GENESIS_ROW_THREADS {MAX_THREADS}
#define FOR_ROW(j) for (long long j = threadIdx.x; j < n; j += blockDim.x)
#define AT(j) genesis_at(j, inner, middle, across)
#define THREAD_SUM(x) genesis_thread_share(x, n, inner, middle, across, GenesisSum(), T(0))
#define THREAD_MAX(x) genesis_thread_share(x, n, inner, middle, across, GenesisMax(), x[0])

// Where element j of a row is, from the row's first: the arrays are (outer, middle, inner)
// in C order; a row runs along the middle dim, or (`across`) over outer and inner.
__device__ inline long long genesis_at(long long j, long long inner, long long middle,
                                       long long across) {{
  return across ? (j / inner) * (middle * inner) + j % inner : j * inner;
}}

struct GenesisSum {{
  template <typename V> __device__ V operator()(V a, V b) const {{ return a + b; }}
}};
struct GenesisMax {{  // the larger, or NaN if either is (as NumPy's max)
  template <typename V> __device__ V operator()(V a, V b) const {{
    return (b > a || b != b) ? b : a;
  }}
}};

// One value from every thread of the block combined by `op`; every thread gets the result.
template <typename V, typename Op>
__device__ V block_reduce(V value, Op op) {{
  __shared__ V buffer[GENESIS_ROW_THREADS];
  __syncthreads();  // every thread has read the previous result out of the buffer
  buffer[threadIdx.x] = value;
  __syncthreads();
  for (unsigned int step = blockDim.x / 2; step > 0; step /= 2) {{
    if (threadIdx.x < step) {{
      buffer[threadIdx.x] = op(buffer[threadIdx.x], buffer[threadIdx.x + step]);
    }}
    __syncthreads();
  }}
  return buffer[0];
}}

// This thread's share of a row combined by `op` from `start` (whole after block_reduce).
template <typename V, typename Op>
__device__ V genesis_thread_share(const V* x, long long n, long long inner, long long middle,
                                  long long across, Op op, V start) {{
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {{
    start = op(start, x[genesis_at(j, inner, middle, across)]);
  }}
  return start;
}}
"""


def threads_for(length: int) -> int:
    """Threads per block for rows of `length`: a power of two from 32 (one warp) to
    MAX_THREADS, no more than the row has elements for."""
    return min(MAX_THREADS, max(32, 1 << (length - 1).bit_length()))


class Geometry(NamedTuple):
    """How a C-ordered array, seen as (outer, middle, inner), splits into rows: `rows` of
    `n` elements, along the middle dim, or `across` it (one row per middle index)."""
    rows: int
    n: int
    inner: int
    middle: int
    across: bool

    def row_shape(self, shape: tuple, dim: int) -> tuple:
        """The shape of a `row` array for rows along (or across all but) `dim`: one element
        per row."""
        if self.across:
            return tuple(extent if other == dim else 1 for other, extent in enumerate(shape))
        return shape[:dim] + (1,) + shape[dim + 1:]


def row_geometry(shape: tuple, axis: int | None = None, keep: int | None = None) -> Geometry:
    """The rows of an array of `shape` along `axis`, or across every dim but `keep`.

    >>> row_geometry((2, 300, 3), axis=1)
    Geometry(rows=6, n=300, inner=3, middle=300, across=False)
    >>> row_geometry((8, 4, 5, 5), keep=1)
    Geometry(rows=4, n=200, inner=25, middle=4, across=True)
    """
    dim = axis if keep is None else keep
    middle, size = shape[dim], math.prod(shape)
    inner = math.prod(shape[dim + 1:])
    if keep is None:
        return Geometry(size // middle, middle, inner, middle, False)
    return Geometry(middle, size // middle, inner, middle, True)


class RowKernel(Kernel):
    """`body` runs in each thread of a block that owns one row of the arrays, along `axis`
    or across all dims but `keep` (whole arrays of one shape, C-ordered for the launch).
    Returns the output array(s)."""

    def __init__(self, name: str, inputs: str, outputs: str, body: str, reference,
                 register: bool = True):
        (inputs, input_kinds), (outputs, output_kinds) = _qualified(inputs), _qualified(outputs)
        super().__init__(name, inputs, outputs, reference, register)
        self.body, self.kinds = body, {**input_kinds, **output_kinds}
        declared = self.input_parameters + self.output_parameters
        if any(item.type != "T" and self.kinds[item.name] == "element" for item in declared) \
                or self.kinds[declared[0].name] != "element" or \
                any(output_kinds[item.name] not in ("element", "row")
                    for item in self.output_parameters):
            raise ValueError(f"{name}: a row kernel's whole arrays are T-typed; its first input "
                             "is a whole array and its outputs are whole arrays or `row` ones")

    LAUNCH_ONLY = ("row_shape",)

    def __call__(self, device, *arguments, axis: int | None = None, keep: int | None = None,
                 row_shape: tuple | None = None):
        """Run on rows along `axis`, or across every dim but `keep` (give one of them).
        `row_shape` shapes the launch's `row` outputs (one element per row; by default the
        arrays' shape with 1 along `axis`, or everywhere but `keep`), so that a caller
        wanting another shape gets a fresh array, not a view (the reference ignores it)."""
        first = arguments[0]
        if first.ndim == 0 or first.size == 0:  # no row to launch a block for
            return self.reference(device, *arguments, **({"axis": axis} if keep is None
                                                         else {"keep": keep}))
        where = {"axis": axis % first.ndim} if keep is None else {"keep": keep % first.ndim}
        extent = first.shape[next(iter(where.values()))]
        rows = first.size // extent if keep is None else extent  # the launcher lays out the rest
        if rows > _MAX_BLOCKS:  # more rows than a grid has blocks
            return self.reference(device, *arguments, **where)
        return super().__call__(device, *arguments, **where,
                                **({} if row_shape is None else {"row_shape": row_shape}))

    def source(self, ctype: str) -> str:
        """The whole CUDA text of the kernel for T = `ctype` ("float" or "double")."""
        inputs, outputs = self.input_parameters, self.output_parameters
        typed = [("const ", item) for item in inputs] + [("", item) for item in outputs]
        arrays = [(const, item) for const, item in typed if self.kinds[item.name] != "scalar"]
        declared = [f"{C_TYPES[item.type]} {item.name}" if self.kinds[item.name] == "scalar"
                    else f"{const}{C_TYPES[item.type]}* __restrict__ {item.name}_rows"
                    for const, item in typed]
        pointers = ", ".join(declared)
        start = {"element": " + row_start", "row": " + row", "raw": ""}
        offsets = "\n".join(f"  {const}{C_TYPES[item.type]}* {item.name} = {item.name}_rows"
                             f"{start[self.kinds[item.name]]};" for const, item in arrays)
        return f"""{PRELUDE}
typedef {ctype} T;
extern "C" __global__ void {self.name}({pointers}, long long n, long long inner,
                                       long long middle, long long across) {{
  const long long row = blockIdx.x;
  const long long row_start = across ? row * inner : (row / inner) * middle * inner + row % inner;
{offsets}
  {self.body}
}}
"""

    def _compile(self, xp):
        return _RowLauncher(self, xp)


_QUALIFIERS = ("row", "raw", "scalar")


def _qualified(declaration: str) -> tuple[str, dict]:
    """A declaration without its qualifiers, and each name's kind ("element" unless
    qualified).

    >>> _qualified("T x, row int64 target, scalar T eps")
    ('T x, int64 target, T eps', {'x': 'element', 'target': 'row', 'eps': 'scalar'})
    """
    items, kinds = [], {}
    for item in declaration.split(","):
        words = item.split()
        if not words:
            continue
        kind = words[0] if words[0] in _QUALIFIERS else "element"
        words = words[kind != "element":]
        kinds[words[-1]] = kind
        items.append(" ".join(words))
    return ", ".join(items), kinds


class _RowLauncher:
    """A RowKernel on CuPy: its float and double builds, compiled on first use, launched
    with one block per row over C-ordered copies of the arrays (no copy when they are)."""

    def __init__(self, kernel: RowKernel, xp):
        self.kernel, self.xp, self.functions = kernel, xp, {}

    def __call__(self, *arguments, axis: int | None = None, keep: int | None = None,
                 row_shape: tuple | None = None):
        xp, kernel, dtype = self.xp, self.kernel, arguments[0].dtype
        function = self.functions.get(dtype)
        if function is None:
            ctype = "float" if dtype == np.float32 else "double"
            function = self.functions[dtype] = xp.RawKernel(kernel.source(ctype), kernel.name)
        passed = [(dtype if item.type == "T" else np.dtype(item.type)).type(argument)
                  if kernel.kinds[item.name] == "scalar" else xp.ascontiguousarray(argument)
                  for item, argument in zip(kernel.input_parameters, arguments)]
        shape = arguments[0].shape
        geometry = row_geometry(shape, axis, keep)
        row_shape = row_shape or geometry.row_shape(shape, axis if keep is None else keep)
        outputs = [xp.empty(row_shape if kernel.kinds[item.name] == "row" else shape,
                            dtype if item.type == "T" else item.type)
                   for item in kernel.output_parameters]
        layout = (np.int64(number) for number in geometry[1:])
        function((geometry.rows,), (threads_for(geometry.n),), (*passed, *outputs, *layout))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
