/* k-nearest-neighbour queries on the kd-tree of mathlearn/neighbors/_kd_tree.py.
 *
 * The tree is stored as a complete binary tree (children of node i: 2 i + 1, 2 i + 2) whose
 * last n_nodes - n_internal nodes are leaves; node i owns the points P[start[i]:end[i]] (rows
 * of P, the scaled points in tree order; pos_index maps a row to the point's original index)
 * and has the bounding box lo[i], hi[i]. Each query is answered by a depth-first search that
 * visits the nearer child first and skips a node whose box is farther than the current k-th
 * candidate, keeping the k best as a max-heap ordered by (squared distance, original index).
 * A box at exactly the k-th distance is still visited, so a point at that distance with a
 * smaller index replaces the k-th: the answer is the exhaustive search's, ties by index.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int kdtree_abi_version(void) { return 4; }

/* (a_d, a_i) < (b_d, b_i) lexicographically */
static int before(double ad, int64_t ai, double bd, int64_t bi) {
    return ad < bd || (ad == bd && ai < bi);
}

static void sift_down(double *hd, int64_t *hi, int64_t k, int64_t j) {
    for (;;) {
        int64_t l = 2 * j + 1, r = l + 1, big = j;
        if (l < k && before(hd[big], hi[big], hd[l], hi[l])) big = l;
        if (r < k && before(hd[big], hi[big], hd[r], hi[r])) big = r;
        if (big == j) return;
        {
            double td = hd[j];
            int64_t ti = hi[j];
            hd[j] = hd[big];
            hi[j] = hi[big];
            hd[big] = td;
            hi[big] = ti;
        }
        j = big;
    }
}

/* The max-heap (hd, hi) of k entries -> ascending order by (distance, index): repeatedly
 * move the largest to the end. */
static void heap_to_ascending(double *hd, int64_t *hi, int64_t k) {
    for (int64_t j = k - 1; j > 0; j--) {
        double td = hd[0];
        int64_t ti = hi[0];
        hd[0] = hd[j];
        hi[0] = hi[j];
        hd[j] = td;
        hi[j] = ti;
        sift_down(hd, hi, j, 0);
    }
}

static double box_sq(const double *q, const double *lo, const double *hi, int64_t d) {
    double acc = 0.0;
    int64_t j;
    for (j = 0; j < d; j++) {
        double g = 0.0;
        if (lo[j] > q[j])
            g = lo[j] - q[j];
        else if (q[j] > hi[j])
            g = q[j] - hi[j];
        acc += g * g;
    }
    return acc;
}

/* Returns 0, or -1 when out of memory. out_d: squared distances; out_i: original indices;
 * both (m, k), each row sorted by (distance, index). */
ML_EXPORT int kdtree_query(const double *P, const int64_t *pos_index, const int64_t *start,
                           const int64_t *end, const double *lo, const double *hi,
                           int64_t n_nodes, int64_t n_internal, int64_t d, const double *Q,
                           int64_t m, int64_t k, double *out_d, int64_t *out_i) {
    int64_t depth = 0, cap, q;
    int64_t *stack_node;
    double *stack_lb;
    for (cap = n_nodes; cap > 1; cap >>= 1) depth++;
    cap = 2 * (depth + 2);
    stack_node = malloc(sizeof(int64_t) * cap);
    stack_lb = malloc(sizeof(double) * cap);
    if (!stack_node || !stack_lb) {
        free(stack_node);
        free(stack_lb);
        return -1;
    }
    for (q = 0; q < m; q++) {
        const double *x = Q + q * d;
        double *hd = out_d + q * k;
        int64_t *hi_ = out_i + q * k, sp = 0, j;
        for (j = 0; j < k; j++) {
            hd[j] = INFINITY;
            hi_[j] = INT64_MAX;
        }
        stack_node[sp] = 0;
        stack_lb[sp++] = box_sq(x, lo, hi, d);
        while (sp > 0) {
            int64_t node = stack_node[--sp];
            double lb = stack_lb[sp];
            if (lb > hd[0]) continue;
            if (node >= n_internal) {
                int64_t p;
                for (p = start[node]; p < end[node]; p++) {
                    const double *y = P + p * d;
                    double acc = 0.0;
                    int64_t t, idx = pos_index[p];
                    for (t = 0; t < d; t++) {
                        double diff = x[t] - y[t];
                        acc += diff * diff;
                    }
                    if (before(acc, idx, hd[0], hi_[0])) {
                        hd[0] = acc;
                        hi_[0] = idx;
                        sift_down(hd, hi_, k, 0);
                    }
                }
            } else {
                int64_t a = 2 * node + 1, b = a + 1;
                double la = box_sq(x, lo + a * d, hi + a * d, d);
                double lbb = box_sq(x, lo + b * d, hi + b * d, d);
                /* push the farther child first: the nearer one is searched first */
                if (la <= lbb) {
                    stack_node[sp] = b;
                    stack_lb[sp++] = lbb;
                    stack_node[sp] = a;
                    stack_lb[sp++] = la;
                } else {
                    stack_node[sp] = a;
                    stack_lb[sp++] = la;
                    stack_node[sp] = b;
                    stack_lb[sp++] = lbb;
                }
            }
        }
        heap_to_ascending(hd, hi_, k);
    }
    free(stack_node);
    free(stack_lb);
    return 0;
}

/* The k smallest entries of each of the m rows of the row-major m x n block D (1 <= k <= n),
 * as values out_d and columns out_i (both m x k), each row sorted by (value, column): the
 * exhaustive search's answer from a block of distances, ties by index. One pass per row
 * keeps the k best in a max-heap (built from the first k entries in O(k)); each later entry
 * is compared with the k-th best only, and about k ln(n / k) of them displace it in a row
 * in random order: O(n + k log k log(n / k)) a row. NaN entries are never chosen; +inf ones
 * (a point set aside) only where fewer than k entries are finite. */
ML_EXPORT void kdtree_select(const double *D, int64_t m, int64_t n, int64_t k, double *out_d,
                             int64_t *out_i) {
    for (int64_t q = 0; q < m; q++) {
        const double *row = D + q * n;
        double *hd = out_d + q * k;
        int64_t *hi_ = out_i + q * k, j;
        for (j = 0; j < k; j++) {
            /* (a NaN as +inf: never before a finite entry) */
            hd[j] = (row[j] == row[j]) ? row[j] : INFINITY;
            hi_[j] = (row[j] == row[j]) ? j : INT64_MAX;
        }
        for (j = k / 2; j-- > 0;) sift_down(hd, hi_, k, j);
        for (j = k; j < n; j++) {
            double v = row[j];
            if (before(v, j, hd[0], hi_[0])) {
                hd[0] = v;
                hi_[0] = j;
                sift_down(hd, hi_, k, 0);
            }
        }
        heap_to_ascending(hd, hi_, k);
    }
}

/* Points within squared radius r2[q] (inclusive) of each query. With out_pos == NULL only the
 * counts are written (out_count, m entries); otherwise the hits of query q are written at
 * out_pos[offset[q] ...] (tree positions) and out_d2 (squared distances), offset being the
 * running sum of the counts. */
ML_EXPORT int kdtree_radius(const double *P, const int64_t *start, const int64_t *end,
                            const double *lo, const double *hi, int64_t n_nodes,
                            int64_t n_internal, int64_t d, const double *Q, int64_t m,
                            const double *r2, int64_t *out_count, const int64_t *offset,
                            int64_t *out_pos, double *out_d2) {
    int64_t depth = 0, cap, q;
    int64_t *stack;
    for (cap = n_nodes; cap > 1; cap >>= 1) depth++;
    cap = 2 * (depth + 2);
    stack = malloc(sizeof(int64_t) * cap);
    if (!stack) return -1;
    for (q = 0; q < m; q++) {
        const double *x = Q + q * d;
        int64_t sp = 0, c = 0;
        stack[sp++] = 0;
        while (sp > 0) {
            int64_t node = stack[--sp];
            if (box_sq(x, lo + node * d, hi + node * d, d) > r2[q]) continue;
            if (node >= n_internal) {
                int64_t p;
                for (p = start[node]; p < end[node]; p++) {
                    const double *y = P + p * d;
                    double acc = 0.0;
                    int64_t t;
                    for (t = 0; t < d; t++) {
                        double diff = x[t] - y[t];
                        acc += diff * diff;
                    }
                    if (acc <= r2[q]) {
                        if (out_pos) {
                            out_pos[offset[q] + c] = p;
                            out_d2[offset[q] + c] = acc;
                        }
                        c++;
                    }
                }
            } else {
                stack[sp++] = 2 * node + 2;
                stack[sp++] = 2 * node + 1;
            }
        }
        if (!out_pos) out_count[q] = c;
    }
    free(stack);
    return 0;
}

/* Rearrange perm[lo..hi) so that perm[k] holds the point with the (k - lo)-th smallest key
 * x[perm[.] * d + dim], smaller-or-equal keys before it and larger-or-equal after
 * (quickselect, median-of-three pivot). */
static void select_kth(const double *X, int64_t d, int64_t dim, int64_t *perm, int64_t lo,
                       int64_t hi, int64_t k) {
    hi -= 1;
    while (hi > lo) {
        int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi, t;
        double a = X[perm[lo] * d + dim], b = X[perm[mid] * d + dim], c = X[perm[hi] * d + dim];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        while (i <= j) {
            while (X[perm[i] * d + dim] < pivot) i++;
            while (X[perm[j] * d + dim] > pivot) j--;
            if (i <= j) {
                t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* Build the tree of the given node ranges: every node's bounding box (lo, hi: n_nodes x d)
 * and, for internal nodes, the median split along its widest coordinate, which reorders
 * perm (the caller passes the identity). Nodes are visited in index order, so a parent is
 * split before its children. */
ML_EXPORT void kdtree_build(const double *X, int64_t n, int64_t d, const int64_t *start,
                            const int64_t *end, int64_t n_nodes, int64_t n_internal,
                            int64_t *perm, double *lo, double *hi) {
    int64_t node, p, j;
    (void)n;
    for (node = 0; node < n_nodes; node++) {
        double *l = lo + node * d, *h = hi + node * d;
        int64_t s = start[node], e = end[node], dim = 0;
        double widest = -1.0;
        for (j = 0; j < d; j++) {
            l[j] = INFINITY;
            h[j] = -INFINITY;
        }
        for (p = s; p < e; p++) {
            const double *x = X + perm[p] * d;
            for (j = 0; j < d; j++) {
                if (x[j] < l[j]) l[j] = x[j];
                if (x[j] > h[j]) h[j] = x[j];
            }
        }
        if (node >= n_internal || e - s < 2) continue;
        for (j = 0; j < d; j++)
            if (h[j] - l[j] > widest) {
                widest = h[j] - l[j];
                dim = j;
            }
        select_kth(X, d, dim, perm, s, e, s + (e - s) / 2);
    }
}
