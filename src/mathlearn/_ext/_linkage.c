/* Agglomerative clustering's dendrogram (see mathlearn/cluster/_agglomerative.py).
 *
 * The same computations, operation for operation, as the NumPy routes and the numba kernels
 * there: condensed Euclidean distances (squares summed feature by feature, in order), the
 * nearest-neighbour chain with the Lance-Williams updates (complete, average, Ward on
 * distances), Prim's minimum spanning tree for single linkage, and the union-find relabelling
 * of the sorted merges. Ties go to the previous chain element, then to the lowest index.
 * ISO C mode: nothing is contracted into an FMA, so every build rounds the same way.
 *
 * Every array is allocated by the caller (NumPy): X is row-major n x d, the condensed
 * matrix holds the pairs i < j row by row, Z is row-major (n - 1) x 4. */

#include <math.h>
#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int linkage_abi_version(void) { return 1; }

/* Index of the pair i < j in the condensed matrix. */
static inline int64_t cidx(int64_t n, int64_t i, int64_t j) {
    return n * i - (i * (i + 1)) / 2 + (j - i - 1);
}

static inline int64_t pair(int64_t n, int64_t a, int64_t b) {
    return a < b ? cidx(n, a, b) : cidx(n, b, a);
}

ML_EXPORT void linkage_condensed_euclidean(int64_t n, int64_t d, const double *X, double *out) {
    int64_t p = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double *xi = X + i * d;
        for (int64_t j = i + 1; j < n; ++j) {
            const double *xj = X + j * d;
            double s = 0.0;
            for (int64_t k = 0; k < d; ++k) {
                double r = xi[k] - xj[k];
                s += r * r;
            }
            out[p++] = sqrt(s);
        }
    }
}

/* method: 1 complete, 2 average, 3 Ward. D (condensed) is overwritten; size (n) and chain
 * (n) are work arrays. */
ML_EXPORT void linkage_nn_chain(int64_t n, double *D, int method, double *Z, double *size,
                                int64_t *chain) {
    for (int64_t i = 0; i < n; ++i) size[i] = 1.0;
    int64_t length = 0;
    for (int64_t k = 0; k < n - 1; ++k) {
        if (length == 0) {
            length = 1;
            for (int64_t i = 0; i < n; ++i) {
                if (size[i] > 0) {
                    chain[0] = i;
                    break;
                }
            }
        }
        int64_t x, y;
        double current;
        for (;;) {
            x = chain[length - 1];
            if (length > 1) {
                y = chain[length - 2];
                current = D[pair(n, x, y)];
            } else {
                y = -1;
                current = INFINITY;
            }
            for (int64_t i = 0; i < n; ++i) {
                if (size[i] == 0 || i == x) continue;
                double dist = D[pair(n, x, i)];
                if (dist < current) {
                    current = dist;
                    y = i;
                }
            }
            if (length > 1 && y == chain[length - 2]) break;
            chain[length++] = y;
        }
        length -= 2;
        if (x > y) {
            int64_t t = x;
            x = y;
            y = t;
        }
        double nx = size[x], ny = size[y];
        double *z = Z + 4 * k;
        z[0] = (double)x;
        z[1] = (double)y;
        z[2] = current;
        z[3] = nx + ny;
        size[x] = 0;
        size[y] = nx + ny;
        for (int64_t i = 0; i < n; ++i) {
            double ni = size[i];
            if (ni == 0 || i == y) continue;
            double d_xi = D[pair(n, i, x)];
            int64_t iy = pair(n, i, y);
            double d_yi = D[iy];
            if (method == 1) {
                D[iy] = d_xi > d_yi ? d_xi : d_yi;
            } else if (method == 2) {
                D[iy] = (nx * d_xi + ny * d_yi) / (nx + ny);
            } else {
                /* Lance-Williams for Ward on Euclidean distances (not their squares). */
                double t = 1.0 / (nx + ny + ni);
                D[iy] = sqrt((ni + nx) * t * d_xi * d_xi + (ni + ny) * t * d_yi * d_yi -
                             ni * t * current * current);
            }
        }
    }
}

/* Prim's algorithm; the edges of the minimum spanning tree are the single-linkage merges.
 * best (n) and merged (n) are work arrays. */
ML_EXPORT void linkage_mst_single(int64_t n, int64_t d, const double *X, double *Z,
                                  double *best, unsigned char *merged) {
    for (int64_t i = 0; i < n; ++i) {
        best[i] = INFINITY;
        merged[i] = 0;
    }
    int64_t y = 0;
    for (int64_t k = 0; k < n - 1; ++k) {
        int64_t x = y;
        double current = INFINITY;
        merged[x] = 1;
        const double *xx = X + x * d;
        for (int64_t i = 0; i < n; ++i) {
            if (merged[i]) continue;
            const double *xi = X + i * d;
            double s = 0.0;
            for (int64_t j = 0; j < d; ++j) {
                double r = xx[j] - xi[j];
                s += r * r;
            }
            double dist = sqrt(s);
            if (best[i] > dist) best[i] = dist;
            if (best[i] < current) {
                y = i;
                current = best[i];
            }
        }
        double *z = Z + 4 * k;
        z[0] = (double)x;
        z[1] = (double)y;
        z[2] = current;
    }
}

/* Rename the sorted merges with cluster ids n, n + 1, ... (union-find with path
 * compression), smaller id first, and set the sizes. parent (2n - 1) and size (2n - 1) are
 * work arrays. */
ML_EXPORT void linkage_relabel(int64_t n, double *Z, int64_t *parent, double *size) {
    for (int64_t i = 0; i < 2 * n - 1; ++i) {
        parent[i] = i;
        size[i] = 1.0;
    }
    int64_t nxt = n;
    for (int64_t i = 0; i < n - 1; ++i) {
        double *z = Z + 4 * i;
        int64_t r[2];
        for (int c = 0; c < 2; ++c) {
            int64_t a = (int64_t)z[c];
            while (parent[a] != a) a = parent[a];
            int64_t b = (int64_t)z[c];
            while (parent[b] != a) {
                int64_t p = parent[b];
                parent[b] = a;
                b = p;
            }
            r[c] = a;
        }
        int64_t xr = r[0] < r[1] ? r[0] : r[1];
        int64_t yr = r[0] < r[1] ? r[1] : r[0];
        z[0] = (double)xr;
        z[1] = (double)yr;
        parent[xr] = nxt;
        parent[yr] = nxt;
        size[nxt] = size[xr] + size[yr];
        z[3] = size[nxt];
        ++nxt;
    }
}
