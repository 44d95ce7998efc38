"""The linear algebra the notes teach, as functions that are correct in floating point.

Subspaces from the SVD (rank, null space, range, pseudo-inverse), determinants by cofactor
expansion and by blocks, the block inverse, inner products with their norms, angles and
projections, the Woodbury, Kailath and Searle identities as solvers, the Rayleigh quotient
and the condition number, ``vec`` in column-major order, and Taylor polynomials by automatic
differentiation (Imperial "Mathematics for Inference and Machine Learning" §1.4.1.2, §2.1.3 and
its Appendix; Imperial "Mathematics for Machine Learning").

The library's own numerical kernels (Cholesky with jitter, SPD solves, log-determinants) are
in :mod:`mathlearn.utils.linalg`.
"""

from ._determinants import block_determinant, block_inverse, cofactor_determinant
from ._identities import kailath_solve, searle, woodbury_solve
from ._inner_product import InnerProduct
from ._spectral import condition_number, rayleigh_quotient
from ._subspaces import matrix_rank, null_space, pinv, range_space
from ._taylor import taylor_polynomial
from ._vec import unvec, vec

__all__ = [
    "InnerProduct",
    "block_determinant",
    "block_inverse",
    "cofactor_determinant",
    "condition_number",
    "kailath_solve",
    "matrix_rank",
    "null_space",
    "pinv",
    "range_space",
    "rayleigh_quotient",
    "searle",
    "taylor_polynomial",
    "unvec",
    "vec",
    "woodbury_solve",
]
