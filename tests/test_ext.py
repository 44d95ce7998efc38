"""The compiled helpers of ``mathlearn._ext``: built by the install, or refused when required."""

import os

import pytest

from mathlearn import _ext


@pytest.mark.parametrize("name", sorted(_ext.ABI_VERSIONS))
def test_library_is_built(name):
    # CI installs the package (which compiles the libraries) and sets MATHLEARN_REQUIRE_EXT=1,
    # so a failed or skipped build fails here instead of silently taking the NumPy routes.
    required = os.environ.get(_ext.REQUIRE_ENV, "") not in ("", "0")
    lib = _ext.load(name)
    if lib is None:
        assert not required, f"{name} is not built although {_ext.REQUIRE_ENV} is set"
        pytest.skip(f"{name} not built (a source tree without `setup.py build_ext --inplace`)")
    assert _ext.find(name) is not None


def test_missing_library_falls_back_or_raises(monkeypatch):
    monkeypatch.delenv(_ext.DISABLE_ENV, raising=False)
    monkeypatch.delenv(_ext.REQUIRE_ENV, raising=False)
    assert _ext.load("_no_such_library") is None
    monkeypatch.setenv(_ext.REQUIRE_ENV, "1")
    with pytest.raises(ImportError, match="_no_such_library was not built"):
        _ext.load("_no_such_library")
    monkeypatch.setenv(_ext.REQUIRE_ENV, "0")
    assert _ext.load("_no_such_library") is None


def test_disabling_the_libraries(monkeypatch):
    monkeypatch.setenv(_ext.DISABLE_ENV, "1")
    assert all(_ext.load(name) is None for name in _ext.ABI_VERSIONS)
