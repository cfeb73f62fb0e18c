"""The distribution bands of a run's pictures are NumPy's percentiles, number for number,
though they come from one sort instead of np.percentile's selections."""
from __future__ import annotations

import numpy as np
import pytest

from genesis.debug.step_series import BANDS, DistributionSeries, band_percentiles


def samples():
    rng = np.random.default_rng(7)
    for trial in range(600):
        size = int(rng.integers(1, 2500))
        kind = trial % 6
        if kind == 0:
            yield rng.standard_normal(size).astype(np.float32)
        elif kind == 1:
            yield rng.standard_normal(size) * 10.0 ** int(rng.integers(-30, 30))
        elif kind == 2:
            yield rng.integers(-5, 5, size).astype(np.float64)   # ties everywhere
        elif kind == 3:
            yield np.round(rng.standard_normal(size), 1).astype(np.float32)
        elif kind == 4:
            yield rng.exponential(size=size).astype(np.float32) * np.float32(1e30)
        else:
            yield np.full(size, -0.0)


def test_band_percentiles_are_numpys_exactly():
    for values in samples():
        assert band_percentiles(values) == np.percentile(values.astype(np.float64), BANDS).tolist()


@pytest.mark.parametrize("values", [np.array([1, 2, 3]), np.array([np.nan, np.inf, 1.0, 2.0]),
                                    np.ones((2, 3), np.float16), np.array([[np.inf]]), np.array([7.0]),
                                    np.arange(12, dtype=np.float32).reshape(3, 4)])
def test_a_sample_keeps_numpys_percentiles_of_the_finite_values(values):
    series = DistributionSeries()
    series.add(3, values)
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = flat[np.isfinite(flat)]
    sample, = series.to_dict()
    assert sample == {"step": 3, "percentiles": np.percentile(finite, BANDS).tolist() if finite.size else None,
                      "count": flat.size, "non_finite": int(flat.size - finite.size)}
