"""Non-linear embeddings: classical ``MDS``, ``SStressMDS``, ``Isomap``, ``SpectralEmbedding``.

Stuttgart "Introduction to Machine Learning" §6.1 (slides 6:22-6:29); Oxford
"Advanced Topics in Statistical Machine Learning" ch. 4 (graph Laplacians).
"""

from ._isomap import Isomap
from ._mds import MDS
from ._spectral_embedding import SpectralEmbedding
from ._sstress_mds import SStressMDS, sstress

__all__ = ["MDS", "Isomap", "SStressMDS", "SpectralEmbedding", "sstress"]
