"""CUDA kernel text run on the CPU, for the checks of genesis's raw kernels (row kernels,
multi-tensor kernels) where no GPU is present.

`SHIM` plays the GPU for C++: `threadIdx`/`blockIdx` are per CPU thread, `__shared__`
storage is shared by the threads of the block running, `__syncthreads()` is a barrier,
`atomicAdd` on a double is an atomic add, and
blocks run one after another, each with one CPU thread per CUDA thread. `launcher` wraps a
kernel call in an exported `run(blocks, threads, ...)`; `build` compiles the whole text as
a shared library with g++.
"""
from __future__ import annotations

import atexit
import ctypes
import functools
import pathlib
import shutil
import subprocess
import tempfile

SHIM = """#include <atomic>
#include <barrier>
#include <cmath>
#include <thread>
#include <vector>
using namespace std;
struct GenesisDim3 { unsigned int x, y, z; };
static thread_local GenesisDim3 threadIdx, blockIdx;
static GenesisDim3 blockDim, gridDim;
static std::barrier<>* genesis_block_barrier;
#define __global__
#define __device__
#define __shared__ static
static void __syncthreads() { genesis_block_barrier->arrive_and_wait(); }
static double atomicAdd(double* address, double value) {
  return std::atomic_ref<double>(*address).fetch_add(value);
}
"""


def launcher(call: str, parameters: str) -> str:
    """`extern "C" void run(unsigned int blocks, unsigned int threads, <parameters>)`, which
    runs the statement `call` (the kernel's call, over `parameters`) as a grid would."""
    return f"""
extern "C" void run(unsigned int blocks, unsigned int threads, {parameters}) {{
  blockDim = {{threads, 1, 1}};
  gridDim = {{blocks, 1, 1}};
  for (unsigned int block = 0; block < blocks; ++block) {{
    std::barrier<> sync(threads);
    genesis_block_barrier = &sync;
    std::vector<std::thread> team;
    for (unsigned int thread = 0; thread < threads; ++thread) {{
      team.emplace_back([=] {{
        threadIdx = {{thread, 0, 0}};
        blockIdx = {{block, 0, 0}};
        {call};
      }});
    }}
    for (std::thread& member : team) member.join();
  }}
}}
"""


_FLAGS = ["-std=c++20", "-O1", "-pthread", "-fPIC"]


def compile_library(folder, stem: str, text: str, options=()) -> ctypes.CDLL:
    """C++ `text` compiled with g++ as a shared library in `folder`, and loaded."""
    path = folder / f"{stem}.cpp"
    path.write_text(text)
    library = folder / f"{stem}.so"
    result = subprocess.run(["g++", *_FLAGS, *options, "-shared", "-o", str(library), str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, f"{stem} does not compile:\n{result.stderr}"
    return ctypes.CDLL(str(library))


def build(folder, stem: str, source: str) -> ctypes.CDLL:
    """`SHIM` + `source` (a kernel's text and its `launcher`) as a loaded shared library.
    The shim's standard headers take most of a compile: they are compiled once per process
    as a precompiled header, which each kernel's compile includes."""
    header = _precompiled_shim()
    if header is None:
        return compile_library(folder, stem, SHIM + source)
    return compile_library(folder, stem, source, ("-include", str(header)))


@functools.cache
def _precompiled_shim():
    """`SHIM` as a header with its precompiled form beside it (g++ uses the .gch when the
    flags match), or None where g++ cannot precompile it."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="genesis_shim_"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    header = folder / "genesis_shim.h"
    header.write_text(SHIM)
    result = subprocess.run(["g++", *_FLAGS, "-x", "c++-header", str(header),
                             "-o", str(header) + ".gch"], capture_output=True, text=True)
    return header if result.returncode == 0 else None


def library_cache(folder, text_of, compile=compile_library):
    """A function (kernel, C type) -> its library, compiled from `text_of(kernel, C type)`
    by `compile` into `folder` once."""
    libraries = {}

    def library(kernel, ctype: str) -> ctypes.CDLL:
        key = (kernel.name, ctype)
        if key not in libraries:
            libraries[key] = compile(folder, f"{kernel.name}_{ctype}", text_of(kernel, ctype))
        return libraries[key]
    return library
