"""Non-linear embeddings: classical ``MDS``, ``SStressMDS``, ``Isomap``, ``SpectralEmbedding``.

Spec 004 §6.1 (slides 6:22-6:29), spec 002 §2.4 (graph Laplacians).
"""

from ._isomap import Isomap
from ._mds import MDS
from ._spectral_embedding import SpectralEmbedding
from ._sstress_mds import SStressMDS, sstress

__all__ = ["MDS", "Isomap", "SStressMDS", "SpectralEmbedding", "sstress"]
