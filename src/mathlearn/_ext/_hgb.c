/* One tree of histogram gradient boosting, grown leaf-wise (see
 * mathlearn/ensemble/_hist_gradient_boosting.py, whose NumPy route grows the same tree).
 *
 * XbT (d x n, uint8: one row of bins per feature) holds every sample's bin per feature; g and h the gradients
 * and hessians. Node t owns order[start[t]:end[t]], kept in increasing sample order (splits
 * partition stably), so a bin's sums add the rows in index order, as the NumPy route's
 * bincount does: both routes give the same floating-point sums. A node's histogram holds,
 * per (feature, bin), the sums of g, h and the count; of two children only the smaller one's
 * is summed, the other is the parent's minus it. The leaf with the largest gain
 *   G_L^2 / (H_L + lam) + G_R^2 / (H_R + lam) - G^2 / (H + lam)
 * is split next (the lowest node id on ties; within a node, the lowest feature, then bin).
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

ML_EXPORT int hgb_abi_version(void) { return 2; }

/* Histogram buffers kept between the trees of one fit: the same few buffers serve every
 * tree, so no tree maps (and page-faults) fresh memory. A buffer holds d x B x 3 doubles. */
typedef struct {
    double **free_bufs;
    int64_t n_free, cap;
    size_t hsize;
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

static double *pool_get(Pool *pool, size_t hsize) {
    if (pool->hsize != hsize) { /* another shape: drop the old buffers */
        int64_t i;
        for (i = 0; i < pool->n_free; i++) free(pool->free_bufs[i]);
        pool->n_free = 0;
        pool->hsize = hsize;
    }
    if (pool->n_free > 0) return pool->free_bufs[--pool->n_free];
    return malloc(sizeof(double) * (hsize > 0 ? hsize : 1));
}

static int pool_put(Pool *pool, double *buf) {
    if (!buf) return 0;
    if (pool->n_free == pool->cap) {
        int64_t cap = pool->cap ? 2 * pool->cap : 16;
        double **grown = realloc(pool->free_bufs, sizeof(double *) * (size_t)cap);
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

/* Histogram of the rows idx[0..m): feature by feature over the column of bins (XbT is
 * d x n), with the node's gradients gathered once into gb, hb; a cell still receives its rows
 * in increasing index order. */
static void histogram(const uint8_t *XbT, int64_t n, int64_t d, const int64_t *idx, int64_t m,
                      const double *g, const double *h, int64_t B, double const_h,
                      double *hist, double *gb, double *hb) {
    int64_t t, j, b;
    memset(hist, 0, sizeof(double) * d * B * 3);
    if (idx == NULL) { /* all rows, in order: no gathers */
        for (j = 0; j < d; j++) {
            const uint8_t *col = XbT + j * n;
            double *cells = hist + j * B * 3;
            for (t = 0; t < m; t++) {
                double *cell = cells + 3 * (int64_t)col[t];
                cell[0] += g[t];
                if (const_h <= 0.0) cell[1] += h[t];
                cell[2] += 1.0;
            }
        }
        if (const_h > 0.0)
            for (j = 0; j < d; j++)
                for (b = 0; b < B; b++)
                    hist[(j * B + b) * 3 + 1] = hist[(j * B + b) * 3 + 2] * const_h;
        return;
    }
    for (t = 0; t < m; t++) gb[t] = g[idx[t]];
    if (const_h <= 0.0)
        for (t = 0; t < m; t++) hb[t] = h[idx[t]];
    for (j = 0; j < d; j++) {
        const uint8_t *col = XbT + j * n;
        double *cells = hist + j * B * 3;
        if (const_h > 0.0) {
            for (t = 0; t < m; t++) {
                double *cell = cells + 3 * (int64_t)col[idx[t]];
                cell[0] += gb[t];
                cell[2] += 1.0;
            }
        } else {
            for (t = 0; t < m; t++) {
                double *cell = cells + 3 * (int64_t)col[idx[t]];
                cell[0] += gb[t];
                cell[1] += hb[t];
                cell[2] += 1.0;
            }
        }
    }
    if (const_h > 0.0)
        for (j = 0; j < d; j++)
            for (b = 0; b < B; b++) hist[(j * B + b) * 3 + 1] = hist[(j * B + b) * 3 + 2] * const_h;
}

/* Best split of a histogram: returns 1 and sets gain/feature/bin when one is worth taking. */
static int evaluate(const double *hist, int64_t d, int64_t B, int64_t count, int64_t depth,
                    int64_t max_depth, double msl, double min_hess, double lam, double *gain,
                    int64_t *split_j, int64_t *split_b) {
    double G = 0.0, H = 0.0, N = 0.0, parent, best = -INFINITY;
    int64_t b, j, bj = -1, bb = -1;
    if (depth >= max_depth || (double)count < 2.0 * msl) return 0;
    for (b = 0; b < B; b++) {
        G += hist[b * 3];
        H += hist[b * 3 + 1];
        N += hist[b * 3 + 2];
    }
    parent = G * G / (H + lam);
    for (j = 0; j < d; j++) {
        const double *col = hist + j * B * 3;
        double GL = 0.0, HL = 0.0, NL = 0.0;
        for (b = 0; b < B - 1; b++) {
            double GR, HR, NR, gv;
            GL += col[b * 3];
            HL += col[b * 3 + 1];
            NL += col[b * 3 + 2];
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
 * 2 max_leaf_nodes - 1 entries (order: n).
 *
 * Histograms live only while needed: a node's is taken from the pool when the node is made,
 * returned when the node cannot be split, and handed to the larger child when it is (that
 * child's histogram is the parent's minus the smaller child's, computed in place). At most
 * one per leaf is alive. With wide data (d x B cells of 24 bytes each, 10 MB at 2 000
 * features) one block for every possible node was hundreds of MB, mapped afresh (and
 * page-faulted) for every tree. ``pool`` comes from hgb_pool_new and outlives the call. */
ML_EXPORT int64_t hgb_grow_tree(const uint8_t *XbT, int64_t n, int64_t d, const double *g,
                                const double *h, double const_h, int64_t B,
                                int64_t max_leaf_nodes, int64_t max_depth, int64_t msl,
                                double min_hess, double lam, int64_t *order, int64_t *start,
                                int64_t *end, int64_t *depth, int64_t *left, int64_t *right,
                                int64_t *split_j, int64_t *split_b, double *gain, void *pool_handle) {
    Pool *pool = pool_handle;
    int64_t max_nodes = 2 * max_leaf_nodes - 1, n_nodes = 1, n_leaves = 1, i, s, status = 0;
    size_t hsize = (size_t)d * (size_t)B * 3;
    double **hist = calloc((size_t)max_nodes, sizeof(double *));
    int64_t *buf = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
    double *gb = malloc(sizeof(double) * (n > 0 ? n : 1));
    double *hb = malloc(sizeof(double) * (n > 0 ? n : 1));
    unsigned char *cand = calloc((size_t)max_nodes, 1);
    if (!hist || !buf || !cand || !gb || !hb) {
        status = -1;
        goto done;
    }
    for (i = 0; i < n; i++) order[i] = i;
    for (s = 0; s < max_nodes; s++) {
        start[s] = end[s] = depth[s] = 0;
        left[s] = right[s] = split_j[s] = split_b[s] = -1;
        gain[s] = -INFINITY;
    }
    end[0] = n;
    hist[0] = pool_get(pool, hsize);
    if (!hist[0]) {
        status = -1;
        goto done;
    }
    histogram(XbT, n, d, NULL, n, g, h, B, const_h, hist[0], gb, hb);
    cand[0] = (unsigned char)evaluate(hist[0], d, B, n, 0, max_depth, (double)msl, min_hess,
                                      lam, &gain[0], &split_j[0], &split_b[0]);
    if (!cand[0]) {
        pool_put(pool, hist[0]);
        hist[0] = NULL;
    }
    while (n_leaves < max_leaf_nodes) {
        int64_t t = -1, j, b, lo, hi, nl = 0, nr = 0, p, L, R, small, large;
        double *hs;
        for (s = 0; s < n_nodes; s++)
            if (cand[s] && (t < 0 || gain[s] > gain[t])) t = s;
        if (t < 0) break;
        cand[t] = 0;
        j = split_j[t];
        b = split_b[t];
        lo = start[t];
        hi = end[t];
        for (p = lo; p < hi; p++) {
            int64_t row = order[p];
            if (XbT[j * n + row] <= b)
                order[lo + nl++] = row;
            else
                buf[nr++] = row;
        }
        memcpy(order + lo + nl, buf, sizeof(int64_t) * (size_t)nr);
        L = n_nodes;
        R = n_nodes + 1;
        left[t] = L;
        right[t] = R;
        start[L] = lo;
        end[L] = lo + nl;
        start[R] = lo + nl;
        end[R] = hi;
        depth[L] = depth[R] = depth[t] + 1;
        hs = pool_get(pool, hsize);
        if (!hs) {
            status = -1;
            goto done;
        }
        small = nl <= nr ? L : R;
        large = nl <= nr ? R : L;
        histogram(XbT, n, d, order + start[small], end[small] - start[small], g, h, B, const_h,
                  hs, gb, hb);
        {
            double *hp = hist[t];
            size_t q;
            for (q = 0; q < hsize; q++) hp[q] -= hs[q];
            hist[large] = hp;
            hist[small] = hs;
            hist[t] = NULL;
        }
        n_nodes += 2;
        n_leaves++;
        cand[L] = (unsigned char)evaluate(hist[L], d, B, nl, depth[L], max_depth, (double)msl,
                                          min_hess, lam, &gain[L], &split_j[L], &split_b[L]);
        cand[R] = (unsigned char)evaluate(hist[R], d, B, nr, depth[R], max_depth, (double)msl,
                                          min_hess, lam, &gain[R], &split_j[R], &split_b[R]);
        for (s = L; s <= R; s++)
            if (!cand[s]) {
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
    free(gb);
    free(hb);
    free(cand);
    return status < 0 ? -1 : n_nodes;
}
