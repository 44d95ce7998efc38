"""Kernel ridge regression: ridge regression in the reproducing kernel Hilbert space of a kernel."""

from ._kernel_ridge import KernelRidge

__all__ = ["KernelRidge"]
