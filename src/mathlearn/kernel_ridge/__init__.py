"""Kernel ridge regression: ridge regression in the RKHS of a kernel."""

from ._kernel_ridge import KernelRidge

__all__ = ["KernelRidge"]
