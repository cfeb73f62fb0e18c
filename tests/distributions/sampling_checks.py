"""Statistical checks of samples, with tolerances from the sample size: a sample mean is
within 5 standard errors of the true mean (sd / √n), and a sample variance within 5 of its
own standard errors (estimated from the sample's squared deviations). With a fixed seed
each check is deterministic; 5 standard errors leave a false-failure chance under 1e-6
for any seed."""
from __future__ import annotations

import numpy as np


def assert_moments(samples, mean, variance, axis=0, sigmas=5.0):
    """`samples` (drawn along `axis`) have the given mean and variance, elementwise."""
    draws = np.asarray(samples, dtype=np.float64)
    n = draws.shape[axis]
    mean, variance = np.asarray(mean, dtype=np.float64), np.asarray(variance, dtype=np.float64)
    sample_mean = draws.mean(axis)
    assert np.all(np.abs(sample_mean - mean) <= sigmas * np.sqrt(variance / n)), \
        f"sample mean {sample_mean} vs {mean} (n={n})"
    squared = (draws - draws.mean(axis, keepdims=True)) ** 2
    sample_variance = squared.mean(axis) * n / (n - 1)
    standard_error = np.sqrt(squared.var(axis) / n)
    assert np.all(np.abs(sample_variance - variance) <= sigmas * standard_error), \
        f"sample variance {sample_variance} vs {variance} (n={n})"


def assert_quantile(samples, value, probability, axis=0, sigmas=5.0):
    """The fraction of samples below `value` is `probability`, within 5 binomial standard errors."""
    draws = np.asarray(samples, dtype=np.float64)
    n = draws.shape[axis]
    fraction = (draws < value).mean(axis)
    tolerance = sigmas * np.sqrt(probability * (1 - probability) / n)
    assert np.all(np.abs(fraction - probability) <= tolerance), f"{fraction} vs {probability}"
