"""NaN is data, not a value; degenerate samples give clear errors; extreme scales fit."""

import numpy as np
import pytest

from mathlearn.distributions import Empirical, Exponential, Multinomial, Normal


def test_multinomial_logpmf_rejects_nan():
    with pytest.raises(ValueError, match="NaN"):
        Multinomial(4, [0.25, 0.25, 0.5]).logpmf([np.nan, 2, 2])
    # Counts off the support are still -inf, not errors.
    assert Multinomial(4, [0.25, 0.25, 0.5]).logpmf([1, 1, 1]) == -np.inf


def test_empirical_cdf_rejects_nan():
    with pytest.raises(ValueError, match="NaN"):
        Empirical([0.0, 1.0]).cdf(np.nan)
    np.testing.assert_array_equal(Empirical([0.0, 1.0]).cdf([-1.0, 0.5, 1.0]), [0.0, 0.5, 1.0])


def test_exponential_fit_all_zero_is_a_clear_error():
    with pytest.raises(ValueError, match="every sample is 0"):
        Exponential.fit([0.0, 0.0])


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_fits_are_scale_equivariant(scale):
    # Scaling a sample by c scales the ML mean by c, the variance by c^2, the rate by 1/c.
    # The scale factor is applied by a power of two inside, so agreement is to a few ulps.
    x = np.array([1.0, 2.0, 4.0, 7.0])
    ref = Exponential.fit(x)
    assert Exponential.fit(x * scale).rate == pytest.approx(float(ref.rate) / scale, rel=1e-15)
    ref_n = Normal.fit(x)
    fit = Normal.fit(x * 1e150 if scale > 1 else x * 1e-150)
    c = 1e150 if scale > 1 else 1e-150
    assert fit.mean == pytest.approx(float(ref_n.mean) * c, rel=1e-15)
    assert fit.var == pytest.approx(float(ref_n.var) * c * c, rel=1e-14)


def test_normal_fit_whose_variance_leaves_the_float_range():
    with pytest.raises(ValueError, match="floating-point range"):
        Normal.fit([1e300, -1e300])
