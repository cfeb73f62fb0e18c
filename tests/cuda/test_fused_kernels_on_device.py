"""Every fused kernel compiled by CuPy on the real GPU agrees with its array-call reference
on the CPU (tests/ops/test_fused_kernels.py checks the same bodies compiled as C++)."""
import numpy as np
import pytest

import genesis
from genesis.ops._kernels import REGISTRY, parameters
from genesis.ops._multi_tensor import MultiTensorKernel
from genesis.ops._row_kernels import RowKernel
from tests.ops.kernel_samples import ACROSS_SAMPLES, SAMPLES


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(name for name in SAMPLES
                                        if not isinstance(REGISTRY[name], MultiTensorKernel)))
def test_kernel_on_the_gpu_matches_its_reference_on_the_cpu(real_cuda, name, dtype):
    kernel = REGISTRY[name]
    args, options = SAMPLES[name](np.random.default_rng(0), dtype)
    device = genesis.device(real_cuda)
    xp = device.xp
    on_gpu = [xp.asarray(arg) if isinstance(arg, np.ndarray) else arg for arg in args]
    on_cpu = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in args]
    with np.errstate(all="ignore"):  # samples with NaN and -inf rows
        got = kernel(device, *on_gpu, **options)
        expected = kernel.reference(genesis.device("cpu"), *on_cpu, **{
            key: value for key, value in options.items() if key != "shape"})
    assert kernel._compiled, "the kernel took its reference, not the compiled body"
    if expected is None:  # in place: compare the trailing output arguments
        count = len(parameters(kernel.inputs))
        got, expected = on_gpu[count:], on_cpu[count:]
    got = got if isinstance(got, list | tuple) else [got]
    expected = expected if isinstance(expected, list | tuple) else [expected]
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for output, gpu_value, cpu_value in zip(parameters(kernel.outputs), got, expected):
        declared = np.dtype(dtype) if output.type == "T" else np.dtype(output.type)
        assert gpu_value.dtype == declared and gpu_value.shape == np.shape(cpu_value)
        np.testing.assert_allclose(xp.asnumpy(gpu_value), cpu_value, **tolerance)


@pytest.mark.parametrize("name", sorted(name for name, kernel in REGISTRY.items()
                                        if isinstance(kernel, RowKernel)
                                        and SAMPLES[name] is not ACROSS_SAMPLES.get(name)))
def test_row_kernel_on_the_gpu_takes_any_axis_and_layout(real_cuda, name):
    """Rows moved to the last axis (contiguous), and every array transposed (a view CuPy
    gets not in C order, copied for the launch); raw arrays on the device as they are,
    numbers as they are."""
    kernel = REGISTRY[name]
    args, where = SAMPLES[name](np.random.default_rng(1), np.float64)
    axis = where["axis"]
    kinds = [kernel.kinds[item.name] for item in parameters(kernel.inputs)]
    device = genesis.device(real_cuda)
    xp = device.xp
    layouts = ((lambda lib, a: lib.ascontiguousarray(lib.moveaxis(a, axis, -1)), -1),
               (lambda lib, a: a.T, args[0].ndim - 1 - axis))
    for layout, moved_axis in layouts:
        def laid_out(lib, convert):
            return [layout(lib, convert(a)) if kind in ("element", "row")
                    else convert(a) if kind == "raw" else a
                    for a, kind in zip(args, kinds)]
        with np.errstate(all="ignore"):  # the sample's NaN and -inf rows
            got = kernel(device, *laid_out(xp, xp.asarray), axis=moved_axis)
            expected = kernel.reference(genesis.device("cpu"), *laid_out(np, np.copy),
                                        axis=moved_axis)
        got, expected = (value if isinstance(value, tuple) else (value,)
                         for value in (got, expected))
        assert len(got) == len(expected)
        for ours, reference in zip(got, expected):
            np.testing.assert_allclose(xp.asnumpy(ours), reference, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(name for name, kernel in REGISTRY.items()
                                        if isinstance(kernel, MultiTensorKernel)))
def test_multi_tensor_kernel_on_the_gpu_updates_like_the_cpu(real_cuda, name, dtype):
    kernel = REGISTRY[name]
    (tensors, *scalars), _ = SAMPLES[name](np.random.default_rng(0), dtype)
    device = genesis.device(real_cuda)
    xp = device.xp
    on_gpu = [tuple(xp.asarray(array) for array in tensor) for tensor in tensors]
    kernel(device, on_gpu, *scalars)
    kernel(genesis.device("cpu"), tensors, *scalars)
    assert kernel._compiled, "the tensors went one by one, not through the multi-tensor kernel"
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for ours, reference in zip(on_gpu, tensors):
        for got, want in zip(ours, reference):
            np.testing.assert_allclose(xp.asnumpy(got), want, **tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(ACROSS_SAMPLES))
def test_row_kernel_on_the_gpu_takes_rows_across_a_kept_dim(real_cuda, name, dtype):
    """Batch norm's layout: a row per channel over the batch and the positions."""
    kernel = REGISTRY[name]
    args, where = ACROSS_SAMPLES[name](np.random.default_rng(2), dtype)
    device = genesis.device(real_cuda)
    xp = device.xp
    got = kernel(device, *[xp.asarray(a) if isinstance(a, np.ndarray) else a for a in args],
                 **where)
    expected = kernel.reference(genesis.device("cpu"), *[np.copy(a) for a in args], **where)
    got, expected = (value if isinstance(value, tuple) else (value,) for value in (got, expected))
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for ours, reference in zip(got, expected):
        np.testing.assert_allclose(xp.asnumpy(ours), reference, **tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["genesis_census", "genesis_square_sums"])
def test_sums_over_many_arrays_on_the_gpu_match_numpy(real_cuda, name, dtype):
    """genesis trace's census (finite and NaN counts) and sums of squares of many arrays in
    one launch."""
    from genesis.debug._census import ARRAY_SUMS
    from tests.debug.test_census import census_samples, expected_sums
    kernel = ARRAY_SUMS[name]
    device = genesis.device(real_cuda)
    arrays = census_samples(dtype) * 9  # 36 arrays: two launches
    figures = kernel(device, [device.xp.asarray(array) for array in arrays])
    assert any(key[1] == dtype for key in kernel._compiled), "the sums took their reference"
    got = [float(value) for figure in figures for value in device.xp.asnumpy(figure).ravel()]
    np.testing.assert_allclose(got, expected_sums(kernel, arrays), rtol=1e-12)
