/* Agglomerative clustering's dendrograms (see mathlearn/cluster/_agglomerative.py, which
 * documents the algorithms and holds the NumPy routes computing the same merges).
 *
 * linkage_condensed: the Euclidean distances of all pairs i < j in the condensed
 *     (upper-triangle, row-major) layout, by differences, the squares summed feature by
 *     feature in order from 0.0 (the NumPy route's rounding); X is given transposed (d x n)
 *     so that the inner loop runs over j with unit stride.
 * linkage_nn_chain: the nearest-neighbour chain algorithm on those distances (overwritten)
 *     with the Lance-Williams updates of complete, average or Ward linkage. A cluster merged
 *     away has its distances set to +inf, so the nearest-neighbour search needs no test of
 *     which clusters are alive. Ties go to the previous chain element, then to the lowest
 *     index, as in the NumPy route.
 * linkage_mst_single: Prim's minimum spanning tree with the distances computed on the fly
 *     (O(N) memory); the points not yet in the tree are kept compacted and transposed, so
 *     each step's distances are one unit-stride pass per feature. Ties go to the lowest
 *     point index.
 * linkage_relabel: merges sorted by height renamed with cluster ids n, n+1, ... (union-find
 *     with path compression), the smaller id first.
 *
 * Every routine returns 0, or -1 when it could not allocate its workspace. */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

#define METHOD_COMPLETE 1
#define METHOD_AVERAGE 2
#define METHOD_WARD 3

ML_EXPORT int linkage_abi_version(void) { return 1; }

/* Index of the pair i < j in the condensed matrix of n points. */
static int64_t cidx(int64_t n, int64_t i, int64_t j) {
    return n * i - (i * (i + 1)) / 2 + (j - i - 1);
}

ML_EXPORT void linkage_condensed(const double *XT, int64_t n, int64_t d, double *out) {
    int64_t i, j, k, p = 0;
    for (i = 0; i < n; i++) {
        int64_t m = n - i - 1;
        double *o = out + p;
        for (j = 0; j < m; j++) o[j] = 0.0;
        for (k = 0; k < d; k++) {
            const double *row = XT + k * n + i + 1;
            double xi = XT[k * n + i];
            for (j = 0; j < m; j++) {
                double r = xi - row[j];
                o[j] += r * r;
            }
        }
        for (j = 0; j < m; j++) o[j] = sqrt(o[j]);
        p += m;
    }
}

ML_EXPORT int linkage_nn_chain(double *D, int64_t n, int method, double *Z) {
    double *size = malloc(sizeof(double) * (n > 0 ? n : 1));
    int64_t *chain = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
    int64_t length = 0, k, i, first_alive = 0;
    if (!size || !chain) {
        free(size);
        free(chain);
        return -1;
    }
    for (i = 0; i < n; i++) size[i] = 1.0;
    for (k = 0; k < n - 1; k++) {
        int64_t x, y;
        double current, nx, ny;
        if (length == 0) {
            while (size[first_alive] == 0.0) first_alive++;
            chain[0] = first_alive;
            length = 1;
        }
        for (;;) {
            int64_t at;
            x = chain[length - 1];
            if (length > 1) {
                y = chain[length - 2];
                current = x < y ? D[cidx(n, x, y)] : D[cidx(n, y, x)];
            } else {
                y = -1;
                current = INFINITY;
            }
            /* i < x: column x of the upper triangle, stride n - i - 2 */
            at = x - 1;
            for (i = 0; i < x; i++) {
                double dist = D[at];
                if (dist < current) {
                    current = dist;
                    y = i;
                }
                at += n - i - 2;
            }
            /* i > x: row x, contiguous */
            if (x + 1 < n) {
                const double *row = D + cidx(n, x, x + 1) - (x + 1);
                for (i = x + 1; i < n; i++) {
                    double dist = row[i];
                    if (dist < current) {
                        current = dist;
                        y = i;
                    }
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
        nx = size[x];
        ny = size[y];
        Z[4 * k] = (double)x;
        Z[4 * k + 1] = (double)y;
        Z[4 * k + 2] = current;
        Z[4 * k + 3] = nx + ny;
        size[x] = 0.0;
        size[y] = nx + ny;
        for (i = 0; i < n; i++) {
            double ni = size[i], d_xi, d_yi;
            int64_t ix, iy;
            if (ni == 0.0 || i == y) continue;
            ix = i < x ? cidx(n, i, x) : cidx(n, x, i);
            iy = i < y ? cidx(n, i, y) : cidx(n, y, i);
            d_xi = D[ix];
            d_yi = D[iy];
            D[ix] = INFINITY; /* x is merged away */
            if (method == METHOD_COMPLETE) {
                D[iy] = d_xi > d_yi ? d_xi : d_yi;
            } else if (method == METHOD_AVERAGE) {
                D[iy] = (nx * d_xi + ny * d_yi) / (nx + ny);
            } else {
                /* Lance-Williams for Ward on Euclidean distances (not their squares). */
                double t = 1.0 / (nx + ny + ni);
                D[iy] = sqrt((ni + nx) * t * d_xi * d_xi + (ni + ny) * t * d_yi * d_yi -
                             ni * t * current * current);
            }
        }
        D[cidx(n, x, y)] = INFINITY;
    }
    free(size);
    free(chain);
    return 0;
}

ML_EXPORT int linkage_mst_single(const double *X, int64_t n, int64_t d, double *Z) {
    /* R (d x n): column t holds the coordinates of the point rid[t] not yet in the tree,
     * best[t] its distance to the tree; the first m columns are those points. */
    double *R = malloc(sizeof(double) * (n > 0 ? n * (d > 0 ? d : 1) : 1));
    double *best = malloc(sizeof(double) * (n > 0 ? n : 1));
    double *acc = malloc(sizeof(double) * (n > 0 ? n : 1));
    int64_t *rid = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
    int64_t m = n, k, t, j, x = 0, pos = 0;
    if (!R || !best || !acc || !rid) {
        free(R);
        free(best);
        free(acc);
        free(rid);
        return -1;
    }
    for (t = 0; t < n; t++) {
        rid[t] = t;
        best[t] = INFINITY;
        for (j = 0; j < d; j++) R[j * n + t] = X[t * d + j];
    }
    for (k = 0; k < n - 1; k++) {
        const double *xv = X + x * d;
        double current = INFINITY;
        int64_t y = -1, ypos = -1;
        /* x joins the tree: move the last remaining point into its column */
        m--;
        rid[pos] = rid[m];
        best[pos] = best[m];
        for (j = 0; j < d; j++) R[j * n + pos] = R[j * n + m];
        for (t = 0; t < m; t++) acc[t] = 0.0;
        for (j = 0; j < d; j++) {
            const double *row = R + j * n;
            double xj = xv[j];
            for (t = 0; t < m; t++) {
                double r = xj - row[t];
                acc[t] += r * r;
            }
        }
        for (t = 0; t < m; t++) {
            double dist = sqrt(acc[t]), b;
            if (best[t] > dist) best[t] = dist;
            b = best[t];
            if (b < current || (b == current && rid[t] < y)) {
                current = b;
                y = rid[t];
                ypos = t;
            }
        }
        Z[4 * k] = (double)x;
        Z[4 * k + 1] = (double)y;
        Z[4 * k + 2] = current;
        x = y;
        pos = ypos;
    }
    free(R);
    free(best);
    free(acc);
    free(rid);
    return 0;
}

ML_EXPORT int linkage_relabel(double *Z, int64_t n) {
    int64_t *parent = malloc(sizeof(int64_t) * (n > 0 ? 2 * n - 1 : 1));
    double *size = malloc(sizeof(double) * (n > 0 ? 2 * n - 1 : 1));
    int64_t i, c;
    if (!parent || !size) {
        free(parent);
        free(size);
        return -1;
    }
    for (i = 0; i < 2 * n - 1; i++) {
        parent[i] = i;
        size[i] = 1.0;
    }
    for (i = 0; i < n - 1; i++) {
        int64_t r[2], xr, yr, nxt = n + i;
        for (c = 0; c < 2; c++) {
            int64_t a = (int64_t)Z[4 * i + c], b = a;
            while (parent[a] != a) a = parent[a];
            while (parent[b] != a) { /* path compression */
                int64_t p = parent[b];
                parent[b] = a;
                b = p;
            }
            r[c] = a;
        }
        xr = r[0] < r[1] ? r[0] : r[1];
        yr = r[0] < r[1] ? r[1] : r[0];
        Z[4 * i] = (double)xr;
        Z[4 * i + 1] = (double)yr;
        parent[xr] = parent[yr] = nxt;
        size[nxt] = size[xr] + size[yr];
        Z[4 * i + 3] = size[nxt];
    }
    free(parent);
    free(size);
    return 0;
}
