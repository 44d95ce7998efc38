/* One tree of histogram gradient boosting, grown leaf-wise (see
 * mathlearn/ensemble/_hist_gradient_boosting.py, whose NumPy route grows the same tree).
 *
 * XbT (d x n, uint8: one row of bins per feature) holds every sample's bin per feature; g and
 * h the gradients and hessians. Node t owns order[start[t]:end[t]], kept in increasing sample
 * order (splits partition stably), so a bin's sums add the rows in index order, as the NumPy
 * route's bincount does: both routes give the same floating-point sums. A node's histogram
 * holds, per (feature, bin), the sums of g and h and the count; of two children only the
 * smaller one's is summed, the other is the parent's minus it. With equal hessians (h = c for
 * every row, ``const_h = c > 0``) the hessian sums are not stored: a cell's is its count
 * times c, formed where it is read. The leaf with the largest gain
 *   G_L^2 / (H_L + lam) + G_R^2 / (H_R + lam) - G^2 / (H + lam)
 * is split next (the lowest node id on ties; within a node, the lowest feature, then bin).
 *
 * Memory. A histogram is stored as two planes: the d x B gradient sums (interleaved with the
 * hessian sums when the hessians differ) in doubles, then the d x B counts in 32-bit
 * integers: 12 or 20 bytes a cell, against 24 for three doubles. Rows are indexed by 32-bit integers (the caller keeps
 * n below 2^31), and a node's gradients are gathered in chunks of a fixed size rather than
 * into n-long buffers.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int hgb_abi_version(void) { return 4; }

/* Rows of a node whose gradients are gathered at a time (two 8 KiB buffers on the stack). */
#define GATHER 1024

/* Histogram buffers kept between the trees of one fit: the same few buffers serve every
 * tree, so no tree maps (and page-faults) fresh memory. A buffer holds ``hbytes`` bytes. */
typedef struct {
    void **free_bufs;
    int64_t n_free, cap;
    size_t hbytes;
} Pool;

ML_EXPORT void *hgb_pool_new(void) { return calloc(1, sizeof(Pool)); }

ML_EXPORT void hgb_pool_free(void *handle) {
    Pool *pool = handle;
    int64_t i;
    if (!pool) return;
    for (i = 0; i < pool->n_free; i++) free(pool->free_bufs[i]);
    free(pool->free_bufs);
    free(pool);
}

static void *pool_get(Pool *pool, size_t hbytes) {
    if (pool->hbytes != hbytes) { /* another shape: drop the old buffers */
        int64_t i;
        for (i = 0; i < pool->n_free; i++) free(pool->free_bufs[i]);
        pool->n_free = 0;
        pool->hbytes = hbytes;
    }
    if (pool->n_free > 0) return pool->free_bufs[--pool->n_free];
    return malloc(hbytes > 0 ? hbytes : 1);
}

static int pool_put(Pool *pool, void *buf) {
    if (!buf) return 0;
    if (pool->n_free == pool->cap) {
        int64_t cap = pool->cap ? 2 * pool->cap : 16;
        void **grown = realloc(pool->free_bufs, sizeof(void *) * (size_t)cap);
        if (!grown) {
            free(buf);
            return -1;
        }
        pool->free_bufs = grown;
        pool->cap = cap;
    }
    pool->free_bufs[pool->n_free++] = buf;
    return 0;
}

/* The planes of one histogram buffer of d x B cells: the sums, cell k's gradient sum at
 * G[k * sg] and its hessian sum (when stored) beside it at H[k * sg] = G[k * sg + 1], so one
 * update touches one line of sums and one of counts; then the counts C[k]. */
typedef struct {
    double *G, *H; /* H is NULL when the hessians are all equal */
    uint32_t *C;
    int64_t sg;
} Planes;

static Planes planes(void *buf, int64_t cells, int const_hess) {
    Planes p;
    p.sg = const_hess ? 1 : 2;
    p.G = buf;
    p.H = const_hess ? NULL : p.G + 1;
    p.C = (uint32_t *)(p.G + p.sg * cells);
    return p;
}

/* Histogram of the rows idx[0..m) (all rows, in order, when idx is NULL): feature by feature
 * over the column of bins (XbT is d x n), the node's gradients gathered GATHER rows at a
 * time; a cell still receives its rows in increasing index order. */
static void histogram(const uint8_t *XbT, int64_t n, int64_t d, const int32_t *idx, int64_t m,
                      const double *g, const double *h, int64_t B, Planes p) {
    int64_t t, j, c0;
    double gb[GATHER], hb[GATHER];
    memset(p.G, 0, sizeof(double) * (size_t)(p.sg * d * B));
    memset(p.C, 0, sizeof(uint32_t) * (size_t)(d * B));
    if (idx == NULL) { /* all rows, in order: no gathers */
        for (j = 0; j < d; j++) {
            const uint8_t *col = XbT + j * n;
            uint32_t *C = p.C + j * B;
            if (p.H) {
                double *GH = p.G + 2 * j * B;
                for (t = 0; t < m; t++) {
                    double *cell = GH + 2 * (int64_t)col[t];
                    cell[0] += g[t];
                    cell[1] += h[t];
                    C[col[t]]++;
                }
            } else {
                double *G = p.G + j * B;
                for (t = 0; t < m; t++) {
                    G[col[t]] += g[t];
                    C[col[t]]++;
                }
            }
        }
        return;
    }
    for (c0 = 0; c0 < m; c0 += GATHER) {
        int64_t cm = m - c0 < GATHER ? m - c0 : GATHER;
        const int32_t *ix = idx + c0;
        for (t = 0; t < cm; t++) gb[t] = g[ix[t]];
        if (p.H)
            for (t = 0; t < cm; t++) hb[t] = h[ix[t]];
        for (j = 0; j < d; j++) {
            const uint8_t *col = XbT + j * n;
            uint32_t *C = p.C + j * B;
            if (p.H) {
                double *GH = p.G + 2 * j * B;
                for (t = 0; t < cm; t++) {
                    uint8_t b = col[ix[t]];
                    GH[2 * b] += gb[t];
                    GH[2 * b + 1] += hb[t];
                    C[b]++;
                }
            } else {
                double *G = p.G + j * B;
                for (t = 0; t < cm; t++) {
                    uint8_t b = col[ix[t]];
                    G[b] += gb[t];
                    C[b]++;
                }
            }
        }
    }
}

/* A pool buffer holding the histogram of the rows order[lo..hi), or NULL when out of
 * memory. */
static void *node_histogram(Pool *pool, size_t hbytes, const uint8_t *XbT, int64_t n,
                            int64_t d, const int32_t *order, int64_t lo, int64_t hi,
                            const double *g, const double *h, int64_t B, int64_t cells,
                            int const_hess) {
    void *buf = pool_get(pool, hbytes);
    if (buf) histogram(XbT, n, d, order + lo, hi - lo, g, h, B, planes(buf, cells, const_hess));
    return buf;
}

/* Best split of a histogram: returns 1 and sets gain/feature/bin when one is worth taking.
 * With equal hessians c, a cell's hessian sum is its count times c. */
static int evaluate(Planes p, double c, int64_t d, int64_t B, int64_t count, int64_t depth,
                    int64_t max_depth, double msl, double min_hess, double lam, double *gain,
                    int64_t *split_j, int64_t *split_b) {
    double G = 0.0, H = 0.0, N = 0.0, parent, best = -INFINITY;
    int64_t b, j, bj = -1, bb = -1;
    if (depth >= max_depth || (double)count < 2.0 * msl) return 0;
    for (b = 0; b < B; b++) {
        G += p.G[b * p.sg];
        H += p.H ? p.H[b * p.sg] : (double)p.C[b] * c;
        N += (double)p.C[b];
    }
    parent = G * G / (H + lam);
    for (j = 0; j < d; j++) {
        const double *Gc = p.G + p.sg * j * B, *Hc = p.H ? p.H + p.sg * j * B : NULL;
        const uint32_t *Cc = p.C + j * B;
        double GL = 0.0, HL = 0.0, NL = 0.0;
        for (b = 0; b < B - 1; b++) {
            double GR, HR, NR, gv;
            GL += Gc[b * p.sg];
            HL += Hc ? Hc[b * p.sg] : (double)Cc[b] * c;
            NL += (double)Cc[b];
            GR = G - GL;
            HR = H - HL;
            NR = N - NL;
            if (NL < msl || NR < msl || HL < min_hess || HR < min_hess) continue;
            if (HL + lam <= 0.0 || HR + lam <= 0.0) continue;
            gv = GL * GL / (HL + lam) + GR * GR / (HR + lam) - parent;
            if (gv > best) {
                best = gv;
                bj = j;
                bb = b;
            }
        }
    }
    if (bj < 0 || !(best > 1e-12 * fabs(parent)) || !isfinite(best)) return 0;
    *gain = best;
    *split_j = bj;
    *split_b = bb;
    return 1;
}

/* Returns the number of nodes, or -1 when out of memory. Outputs have max_nodes =
 * 2 max_leaf_nodes - 1 entries (order: n, with n < 2^31).
 *
 * Histograms live only while needed: a node's is taken from the pool when the node is made,
 * returned when the node cannot be split, and handed to the larger child when it is (that
 * child's histogram is the parent's minus the smaller child's, computed in place). A node
 * of fewer than ``keep_min`` rows returns its histogram as soon as it is evaluated; when it
 * is split, both children's are summed from their rows, at a cost (fewer than keep_min
 * rows) close to that of the d x B subtraction it replaces. At most one histogram per leaf
 * of keep_min rows or more, plus two, is alive. The last split's children are not evaluated (no split follows), so
 * it builds no histogram. With wide data (d x B cells, 6 MB at 2 000 features) one block for
 * every possible node was hundreds of MB, mapped afresh (and page-faulted) for every tree.
 * ``pool`` comes from hgb_pool_new and outlives the call. */
ML_EXPORT int64_t hgb_grow_tree(const uint8_t *XbT, int64_t n, int64_t d, const double *g,
                                const double *h, double const_h, int64_t B,
                                int64_t max_leaf_nodes, int64_t max_depth, int64_t msl,
                                double min_hess, double lam, int64_t keep_min, int32_t *order, int64_t *start,
                                int64_t *end, int64_t *depth, int64_t *left, int64_t *right,
                                int64_t *split_j, int64_t *split_b, double *gain, void *pool_handle) {
    Pool *pool = pool_handle;
    int64_t max_nodes = 2 * max_leaf_nodes - 1, n_nodes = 1, n_leaves = 1, i, s, status = 0;
    int64_t cells = d * B;
    int const_hess = const_h > 0.0;
    size_t hbytes = (size_t)cells * (const_hess ? 12 : 20);
    void **hist = calloc((size_t)max_nodes, sizeof(void *));
    int32_t *buf = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    unsigned char *cand = calloc((size_t)max_nodes, 1);
    if (!hist || !buf || !cand) {
        status = -1;
        goto done;
    }
    for (i = 0; i < n; i++) order[i] = (int32_t)i;
    for (s = 0; s < max_nodes; s++) {
        start[s] = end[s] = depth[s] = 0;
        left[s] = right[s] = split_j[s] = split_b[s] = -1;
        gain[s] = -INFINITY;
    }
    end[0] = n;
    hist[0] = pool_get(pool, hbytes);
    if (!hist[0]) {
        status = -1;
        goto done;
    }
    histogram(XbT, n, d, NULL, n, g, h, B, planes(hist[0], cells, const_hess));
    cand[0] = (unsigned char)evaluate(planes(hist[0], cells, const_hess), const_h, d, B, n, 0,
                                      max_depth, (double)msl, min_hess, lam, &gain[0],
                                      &split_j[0], &split_b[0]);
    if (!cand[0] || n < keep_min) {
        pool_put(pool, hist[0]);
        hist[0] = NULL;
    }
    while (n_leaves < max_leaf_nodes) {
        int64_t t = -1, j, b, lo, hi, nl = 0, nr = 0, q, L, R, small, large;
        for (s = 0; s < n_nodes; s++)
            if (cand[s] && (t < 0 || gain[s] > gain[t])) t = s;
        if (t < 0) break;
        cand[t] = 0;
        j = split_j[t];
        b = split_b[t];
        lo = start[t];
        hi = end[t];
        for (q = lo; q < hi; q++) {
            int32_t row = order[q];
            if (XbT[j * n + row] <= b)
                order[lo + nl++] = row;
            else
                buf[nr++] = row;
        }
        memcpy(order + lo + nl, buf, sizeof(int32_t) * (size_t)nr);
        L = n_nodes;
        R = n_nodes + 1;
        left[t] = L;
        right[t] = R;
        start[L] = lo;
        end[L] = lo + nl;
        start[R] = lo + nl;
        end[R] = hi;
        depth[L] = depth[R] = depth[t] + 1;
        n_nodes += 2;
        n_leaves++;
        if (n_leaves == max_leaf_nodes) { /* the last split: its children stay leaves */
            if (pool_put(pool, hist[t]) < 0) status = -1;
            hist[t] = NULL;
            break;
        }
        small = nl <= nr ? L : R;
        large = nl <= nr ? R : L;
        hist[small] = node_histogram(pool, hbytes, XbT, n, d, order, start[small], end[small],
                                     g, h, B, cells, const_hess);
        if (!hist[small]) {
            status = -1;
            goto done;
        }
        if (hist[t]) { /* the larger child's is the parent's minus the smaller one's */
            Planes ps = planes(hist[small], cells, const_hess);
            Planes pp = planes(hist[t], cells, const_hess);
            int64_t k;
            for (k = 0; k < pp.sg * cells; k++) pp.G[k] -= ps.G[k]; /* and H beside it */
            for (k = 0; k < cells; k++) pp.C[k] -= ps.C[k];
            hist[large] = hist[t];
            hist[t] = NULL;
        } else { /* a small parent kept none: sum the larger child's too */
            hist[large] = node_histogram(pool, hbytes, XbT, n, d, order, start[large],
                                         end[large], g, h, B, cells, const_hess);
            if (!hist[large]) {
                status = -1;
                goto done;
            }
        }
        cand[L] = (unsigned char)evaluate(planes(hist[L], cells, const_hess), const_h, d, B, nl,
                                          depth[L], max_depth, (double)msl, min_hess, lam,
                                          &gain[L], &split_j[L], &split_b[L]);
        cand[R] = (unsigned char)evaluate(planes(hist[R], cells, const_hess), const_h, d, B, nr,
                                          depth[R], max_depth, (double)msl, min_hess, lam,
                                          &gain[R], &split_j[R], &split_b[R]);
        for (s = L; s <= R; s++)
            if (!cand[s] || end[s] - start[s] < keep_min) {
                if (pool_put(pool, hist[s]) < 0) status = -1;
                hist[s] = NULL;
            }
        if (status < 0) goto done;
    }
done:
    if (hist)
        for (s = 0; s < max_nodes; s++)
            if (hist[s] && pool_put(pool, hist[s]) < 0) status = -1;
    free(hist);
    free(buf);
    free(cand);
    return status < 0 ? -1 : n_nodes;
}
