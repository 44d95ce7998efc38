/* CART growing on presorted features (see mathlearn/tree/_tree.py, which documents the
 * algorithm and holds the NumPy route computing the same tree).
 *
 * Layout: entry (sample s, feature f) of X is X[s * sx + f * sf] (the caller's array as it is,
 * row- or column-major: no copy); order (d x n, 32-bit: at most 2^31 - 1 samples) holds,
 * for every feature f, sample ids sorted by x_f. The tree may be grown on n of the n_data
 * samples of X, Yw and w (a bootstrap sample, without copying its rows of X): order then
 * holds those ids only, and the other samples' rows of Yw and w must be zero (they enter
 * only the total weight, where adding +0.0 changes nothing). A node owns the positions [start, end) of
 * every row of order: its samples, sorted by each feature. Splitting a node partitions each
 * row's segment stably (left samples first), so the children's segments stay sorted.
 *
 * Statistics: Yw (n x C) is w_i times the one-hot class of sample i (classification,
 * C classes) or (w_i y_i, w_i y_i^2) (squared error, C = 2, with w given separately).
 * A split at sorted position p of feature f sends the first p samples left; its score is a
 * proxy whose maximiser minimises W_L i(L) + W_R i(R):
 *   gini: |s_L|^2 / W_L + |s_R|^2 / W_R; squared error: (s_L,0)^2 / W_L + (s_R,0)^2 / W_R;
 *   entropy: (W_L sum p log p (L) + W_R sum p log p (R)) / log 2.
 * Ties go to the first feature in the candidate order, then the first position.
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

#define CRIT_GINI 0
#define CRIT_ENTROPY 1
#define CRIT_SQUARED 2

ML_EXPORT int cart_abi_version(void) { return 10; }

/* splitmix64: the feature draws when max_features < n_features, and the random splitter's
 * thresholds. */
static uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int64_t below(uint64_t *s, int64_t k) { /* in [0, k); bias below k / 2^64 */
    return (int64_t)(next_u64(s) % (uint64_t)k);
}

static double uniform01(uint64_t *s) { /* in [0, 1), 53 random bits */
    return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static double xlogx(double p) { return p > 0.0 ? p * log(p) : 0.0; }

/* Impurity of a node from its statistics s (C values) and weight W. */
static double impurity(const double *s, double W, int C, int crit) {
    int c;
    if (crit == CRIT_SQUARED) {
        double mean = s[0] / W;
        double v = s[1] / W - mean * mean;
        return v > 0.0 ? v : 0.0;
    }
    if (crit == CRIT_GINI) {
        double acc = 0.0;
        for (c = 0; c < C; c++) {
            double p = s[c] / W;
            acc += p * p;
        }
        return 1.0 - acc;
    }
    {
        double acc = 0.0;
        for (c = 0; c < C; c++) acc += xlogx(s[c] / W);
        return -acc / log(2.0);
    }
}

/* Whether a node is pure: its impurity at the level of rounding. Below eps for the class
 * criteria (impurities in [0, 1]); below eps E[y^2] for the squared error, whose impurity
 * E[y^2] - E[y]^2 is computed with errors of at least that order, so that the test means
 * the same at any scale of the targets. (An absolute eps left nodes of distinct targets
 * small beside the data's largest unsplit: the regressor grows on targets scaled into
 * [-1, 1], and among targets 2^0 ... 2^29 the node {1, 2, 4, 8, 16}, of variance 2^-54 or
 * so after scaling, was a leaf.) */
static inline int pure(double imp, const double *s, double W, int crit) {
    const double eps = 2.220446049250313e-16;
    return imp <= (crit == CRIT_SQUARED ? eps * (s[1] / W) : eps);
}

static double proxy(const double *sL, double WL, const double *sR, double WR, int C, int crit) {
    int c;
    if (crit == CRIT_SQUARED) return sL[0] * sL[0] / WL + sR[0] * sR[0] / WR;
    if (crit == CRIT_GINI) {
        double a = 0.0, b = 0.0;
        for (c = 0; c < C; c++) a += sL[c] * sL[c];
        for (c = 0; c < C; c++) b += sR[c] * sR[c];
        return a / WL + b / WR;
    }
    {
        double a = 0.0, b = 0.0;
        for (c = 0; c < C; c++) a += xlogx(sL[c] / WL);
        for (c = 0; c < C; c++) b += xlogx(sR[c] / WR);
        return (WL * a + WR * b) / log(2.0);
    }
}

/* The proxy score of a split from the left child's statistics: the right child's are the
 * node's totals minus the left's (for class counts, a negative rounding residue of a class
 * absent from the right child is cleared). sR is scratch of C numbers. */
static inline double split_score(const double *total, const double *sL, double WL, double WR,
                                 double *sR, int64_t C, int crit) {
    int64_t c;
    for (c = 0; c < C; c++) {
        sR[c] = total[c] - sL[c];
        if (crit != CRIT_SQUARED && sR[c] < 0.0) sR[c] = 0.0;
    }
    return proxy(sL, WL, sR, WR, (int)C, crit);
}

/* The threshold between two consecutive distinct values xlo < xhi: their midpoint, or xlo
 * where the midpoint rounds to xhi or overflows. */
static inline double midpoint(double xlo, double xhi) {
    double thr = xlo / 2.0 + xhi / 2.0;
    if (thr == xhi || !isfinite(thr)) thr = xlo;
    return thr;
}

/* Sample s's row of a two-column Yw for cart_grow_levels' two-statistic scan, or that row
 * formed on the fly: given class indices yidx (two classes), its weight ws at its class,
 * +0.0 at the other; given the targets yv (squared error), [ws y_s, (y_s y_s) ws], the
 * products the caller's Yw would hold. */
static inline void two_stats(const int32_t *yidx, const double *yv, const double *Yw, double ws,
                             int64_t s, double *a0, double *a1) {
    if (yidx) {
        *a0 = ws * (double)(yidx[s] == 0);
        *a1 = ws * (double)(yidx[s] == 1);
    } else if (yv) {
        const double ys = yv[s];
        *a0 = ws * ys;
        *a1 = (ys * ys) * ws;
    } else {
        *a0 = Yw[2 * s];
        *a1 = Yw[2 * s + 1];
    }
}

typedef struct {
    int64_t start, end, depth, parent;
    int is_left;
} Frame;

/* Capacity for ``need`` nodes, from ``cap``: doubled (from 8) until it suffices, at most
 * ``limit`` (the bound on the number of nodes) unless ``need`` is above it. Sized for the
 * worst case from the start (2 n - 1 nodes, a chain or a tree with one sample per leaf), the
 * node arrays were 9 x 8 bytes per sample of every tree grown, where most trees have far
 * fewer nodes. */
static int64_t grown_capacity(int64_t cap, int64_t need, int64_t limit) {
    int64_t c = cap > 0 ? cap : 8;
    while (c < need) c *= 2;
    if (c > limit) c = limit > need ? limit : need;
    return c;
}

/* A tree's nodes as the caller keeps them: one buffer of cap * (7 + V) doubles holding, for
 * capacity cap, the segments left, right, feature, threshold, impurity, n_node_samples,
 * weighted_n (cap entries each, at k * cap; the integers as int64_t) and value (cap x V,
 * at 7 cap). The caller owns the buffer and resizes it through ``grow`` (its contents up
 * to the old size kept, as realloc keeps them; NULL when out of memory), so that the tree
 * is grown in the array the caller keeps, with no copy at the end and no second buffer
 * alive beside it. At the end the segments are moved to k * count (out_compact) for the
 * caller to cut the buffer to count * (7 + V) doubles. */
typedef double *(*grow_fn)(void *ctx, int64_t n_doubles);
typedef struct {
    double *buf;
    int64_t cap, V;
    grow_fn grow;
    void *ctx;
} Out;

/* Room for ``need`` nodes; 0 when out of memory (the buffer as it was). */
static int out_reserve(Out *o, int64_t need, int64_t limit) {
    int64_t c, k;
    double *p;
    if (need <= o->cap) return 1;
    c = grown_capacity(o->cap, need, limit);
    p = o->grow(o->ctx, c * (7 + o->V));
    if (!p) return 0;
    /* segment k from k cap to k c, the last first (each moves up, past none not yet moved) */
    if (o->cap > 0)
        for (k = 7; k >= 1; k--)
            memmove(p + k * c, p + k * o->cap, sizeof(double) * (size_t)(o->cap * (k == 7 ? o->V : 1)));
    o->buf = p;
    o->cap = c;
    return 1;
}

/* The segments moved from k cap to k count, the first first. */
static void out_compact(Out *o, int64_t count) {
    int64_t k;
    if (count >= o->cap) return;
    for (k = 1; k <= 7; k++)
        memmove(o->buf + k * count, o->buf + k * o->cap, sizeof(double) * (size_t)(count * (k == 7 ? o->V : 1)));
    o->cap = count;
}

/* A grower's names for the segments, refreshed after each growth. */
#define VIEW_OUT(o)                                                            \
    do {                                                                       \
        left = (int64_t *)(o).buf;                                             \
        right = (int64_t *)((o).buf + (o).cap);                                \
        feature = (int64_t *)((o).buf + 2 * (o).cap);                          \
        threshold = (o).buf + 3 * (o).cap;                                     \
        impurity_out = (o).buf + 4 * (o).cap;                                  \
        n_node_samples = (int64_t *)((o).buf + 5 * (o).cap);                   \
        weighted_n = (o).buf + 6 * (o).cap;                                    \
        value = (o).buf + 7 * (o).cap;                                         \
    } while (0)

/* The breadth-first node store of cart_grow_levels (its own, freed at the end): eight arrays
 * of 8-byte entries, V per node for N_VALUE. */
enum { N_LEFT, N_RIGHT, N_FEATURE, N_THRESHOLD, N_VALUE, N_IMPURITY, N_SAMPLES, N_WEIGHT };
typedef struct {
    int64_t cap, V;
    void *a[8];
} Nodes;

static void nodes_free(Nodes *t) {
    int j;
    if (!t) return;
    for (j = 0; j < 8; j++) free(t->a[j]);
    free(t);
}

/* Room for ``need`` nodes; 0 when out of memory (the arrays already grown stay valid). */
static int nodes_reserve(Nodes *t, int64_t need, int64_t limit) {
    int64_t c;
    int j;
    if (need <= t->cap) return 1;
    c = grown_capacity(t->cap, need, limit);
    for (j = 0; j < 8; j++) {
        void *p = realloc(t->a[j], 8 * (size_t)c * (size_t)(j == N_VALUE ? t->V : 1));
        if (!p) return 0;
        t->a[j] = p;
    }
    t->cap = c;
    return 1;
}

static Nodes *nodes_new(int64_t V, int64_t need, int64_t limit) {
    Nodes *t = calloc(1, sizeof(Nodes));
    if (!t) return NULL;
    t->V = V;
    if (!nodes_reserve(t, need, limit)) {
        nodes_free(t);
        return NULL;
    }
    return t;
}

/* Room for ``need`` frames on a depth-first stack of capacity *cap, doubled on demand. The
 * stack holds the pending right siblings of the current path, at most depth + 2 frames;
 * sizing it for the worst case (a chain, 2 n - 1 nodes) reserved 40 bytes a node of every
 * tree. 0 when out of memory (the stack is then left as it was, for the caller to free). */
static int frames_reserve(Frame **stack, int64_t *cap, int64_t need) {
    int64_t c = *cap;
    Frame *grown;
    if (need <= c) return 1;
    while (c < need) c *= 2;
    grown = realloc(*stack, sizeof(Frame) * (size_t)c);
    if (!grown) return 0;
    *stack = grown;
    *cap = c;
    return 1;
}

/* Grow the tree into the caller's buffer (see Out: ``grow`` resizes it, called with
 * ``grow_ctx``); returns the number of nodes, the buffer then holding them at k * count, or
 * -1 when out of memory or past max_nodes nodes (2 n - 1 is the most a binary tree with
 * non-empty leaves can have). ``order`` is modified (partitioned in place). */
ML_EXPORT int64_t cart_grow(
    const double *X, int64_t sx, int64_t sf, const double *Yw, const double *w, int32_t *order, int64_t n, int64_t n_data, int64_t d,
    int64_t C, int crit, int64_t max_depth, int64_t min_samples_split, int64_t min_samples_leaf,
    double min_weight_leaf, int64_t max_features, double min_impurity_decrease, uint64_t seed,
    int64_t max_nodes, grow_fn grow, void *grow_ctx, int64_t *depth_reached) {
    const double EPS = 2.220446049250313e-16;
    int64_t V = crit == CRIT_SQUARED ? 1 : C;
    int64_t *left, *right, *feature, *n_node_samples;
    double *threshold, *value, *impurity_out, *weighted_n;
    Out T = {NULL, 0, V, grow, grow_ctx};
    double *stat = malloc(sizeof(double) * C);
    double *total = malloc(sizeof(double) * C);
    double *sL = malloc(sizeof(double) * C);
    double *sR = malloc(sizeof(double) * C);
    double *cL = malloc(sizeof(double) * C);
    double *cR = malloc(sizeof(double) * C);
    int64_t *feats = malloc(sizeof(int64_t) * (d > 0 ? d : 1));
    int64_t *perm = malloc(sizeof(int64_t) * (d > 0 ? d : 1));
    unsigned char *nonconst = malloc(d > 0 ? d : 1);
    unsigned char *go = calloc(n_data > 0 ? n_data : 1, 1);
    int32_t *tmp = malloc(sizeof(int32_t) * (n > 0 ? n : 1));
    int64_t stack_cap = 64;
    Frame *stack = malloc(sizeof(Frame) * stack_cap);
    int64_t node_count = 0, sp = 0, c, f, i, k, d_part;
    uint64_t rng = seed;
    double W_total = 0.0;
    if (!stat || !total || !sL || !sR || !cL || !cR || !feats || !perm || !nonconst || !go ||
        !tmp || !stack || !out_reserve(&T, max_nodes < 16 ? max_nodes : 16, max_nodes)) {
        node_count = -1;
        goto done;
    }
    VIEW_OUT(T);
    *depth_reached = 0;
    if (crit == CRIT_SQUARED) {
        for (i = 0; i < n_data; i++) W_total += w[i];
    } else {
        for (i = 0; i < n_data; i++)
            for (c = 0; c < C; c++) W_total += Yw[i * C + c];
    }
    if (min_samples_split < 2 * min_samples_leaf) min_samples_split = 2 * min_samples_leaf;
    stack[sp++] = (Frame){0, n, 0, -1, 0};
    while (sp > 0) {
        Frame fr = stack[--sp];
        int64_t start = fr.start, end = fr.end, nn = end - start, node = node_count++;
        const int32_t *ids = order; /* feature 0's row: the node's samples in that order */
        double W = 0.0, imp;
        int64_t n_feats = 0, best_f = -1, best_p = -1;
        double best_score = -INFINITY, best_thr = 0.0;
        if (node >= T.cap) { /* max_nodes bounds the capacity */
            if (node >= max_nodes || !out_reserve(&T, node + 1, max_nodes)) {
                node_count = -1;
                goto done;
            }
            VIEW_OUT(T);
        }
        if (fr.parent >= 0) {
            if (fr.is_left)
                left[fr.parent] = node;
            else
                right[fr.parent] = node;
        }
        for (c = 0; c < C; c++) stat[c] = 0.0;
        for (i = start; i < end; i++) {
            const double *row = Yw + ids[i] * C;
            for (c = 0; c < C; c++) stat[c] += row[c];
        }
        if (crit == CRIT_SQUARED) {
            for (i = start; i < end; i++) W += w[ids[i]];
        } else {
            for (c = 0; c < C; c++) W += stat[c];
        }
        imp = impurity(stat, W, (int)C, crit);
        left[node] = right[node] = -1;
        feature[node] = -2;
        threshold[node] = -2.0;
        impurity_out[node] = imp;
        n_node_samples[node] = nn;
        weighted_n[node] = W;
        for (c = 0; c < V; c++) value[node * V + c] = stat[c] / W;
        if (fr.depth > *depth_reached) *depth_reached = fr.depth;
        if (fr.depth >= max_depth || nn < min_samples_split || nn < 2 * min_samples_leaf ||
            W < 2 * min_weight_leaf || pure(imp, stat, W, crit))
            continue;
        for (f = 0; f < d; f++) {
            const int32_t *o = order + f * n;
            nonconst[f] = X[o[end - 1] * sx + f * sf] - X[o[start] * sx + f * sf] > 0.0;
        }
        if (max_features < d) {
            for (f = 0; f < d; f++) perm[f] = f;
            for (f = d - 1; f > 0; f--) { /* Fisher-Yates */
                int64_t j = below(&rng, f + 1), t = perm[f];
                perm[f] = perm[j];
                perm[j] = t;
            }
            for (f = 0; f < d && n_feats < max_features; f++)
                if (nonconst[perm[f]]) feats[n_feats++] = perm[f];
        } else {
            for (f = 0; f < d; f++)
                if (nonconst[f]) feats[n_feats++] = f;
        }
        if (n_feats == 0) continue;
        for (c = 0; c < C; c++) total[c] = stat[c];
        for (k = 0; k < n_feats; k++) {
            const int32_t *o = order + feats[k] * n;
            const double *x = X + feats[k] * sf;
            double WL = 0.0;
            for (c = 0; c < C; c++) sL[c] = 0.0;
            for (i = 0; i < nn - 1; i++) {
                int64_t s = o[start + i], pos = i + 1;
                const double *row = Yw + s * C;
                double WR, score, xlo, xhi;
                for (c = 0; c < C; c++) sL[c] += row[c];
                if (crit == CRIT_SQUARED) {
                    WL += w[s];
                } else {
                    WL = 0.0;
                    for (c = 0; c < C; c++) WL += sL[c];
                }
                xlo = x[s * sx];
                xhi = x[o[start + i + 1] * sx];
                if (!(xhi > xlo) || pos < min_samples_leaf || nn - pos < min_samples_leaf)
                    continue;
                WR = W - WL;
                if (!(WL > 0.0) || !(WR > 0.0) || WL < min_weight_leaf || WR < min_weight_leaf)
                    continue;
                score = split_score(total, sL, WL, WR, sR, C, crit);
                if (score > best_score) {
                    double thr = midpoint(xlo, xhi);
                    best_score = score;
                    best_f = feats[k];
                    best_p = pos;
                    best_thr = thr;
                }
            }
        }
        if (best_f < 0) continue;
        /* The children's statistics, in feature 0's order as the NumPy route sums them. */
        {
            const double *x = X + best_f * sf;
            double WLs = 0.0, WRs = 0.0, iL, iR, improvement;
            int64_t nL = 0;
            for (c = 0; c < C; c++) cL[c] = cR[c] = 0.0;
            for (i = start; i < end; i++) {
                int64_t s = ids[i];
                const double *row = Yw + s * C;
                if (x[s * sx] <= best_thr) {
                    go[s] = 1;
                    nL++;
                    for (c = 0; c < C; c++) cL[c] += row[c];
                    if (crit == CRIT_SQUARED) WLs += w[s];
                } else {
                    for (c = 0; c < C; c++) cR[c] += row[c];
                    if (crit == CRIT_SQUARED) WRs += w[s];
                }
            }
            if (crit != CRIT_SQUARED) {
                for (c = 0; c < C; c++) WLs += cL[c];
                for (c = 0; c < C; c++) WRs += cR[c];
            }
            iL = impurity(cL, WLs, (int)C, crit);
            iR = impurity(cR, WRs, (int)C, crit);
            improvement = (W / W_total) * (imp - WLs / W * iL - WRs / W * iR);
            if (improvement + EPS < min_impurity_decrease) {
                for (i = start; i < end; i++) go[ids[i]] = 0;
                continue;
            }
            /* Stable partition of every feature's segment: left samples first. Children
             * that will be leaves (the test at the top of the loop, on the statistics
             * just summed in the same order as the child would sum them) read only
             * feature 0's row, so when both are, only that row is partitioned: the last
             * level of a depth-limited tree (stumps, boosting) skips the other D - 1. */
            {
                int64_t nR = nn - nL, dd = d, cd = fr.depth + 1;
                int leafL = cd >= max_depth || nL < min_samples_split ||
                            nL < 2 * min_samples_leaf || WLs < 2 * min_weight_leaf ||
                            pure(iL, cL, WLs, crit);
                int leafR = cd >= max_depth || nR < min_samples_split ||
                            nR < 2 * min_samples_leaf || WRs < 2 * min_weight_leaf ||
                            pure(iR, cR, WRs, crit);
                if (leafL && leafR) dd = 1;
                d_part = dd;
            }
            for (f = 0; f < d_part; f++) {
                int32_t *o = order + f * n;
                int64_t a = start, b = 0;
                for (i = start; i < end; i++) {
                    int32_t s = o[i];
                    if (go[s])
                        o[a++] = s;
                    else
                        tmp[b++] = s;
                }
                memcpy(o + a, tmp, sizeof(int32_t) * b);
            }
            for (i = start; i < start + nL; i++) go[order[i]] = 0;
            feature[node] = best_f;
            threshold[node] = best_thr;
            (void)best_p;
            if (!frames_reserve(&stack, &stack_cap, sp + 2)) {
                node_count = -1;
                goto done;
            }
            stack[sp++] = (Frame){start + nL, end, fr.depth + 1, node, 0};
            stack[sp++] = (Frame){start, start + nL, fr.depth + 1, node, 1};
        }
    }
done:
    free(stat);
    free(total);
    free(sL);
    free(sR);
    free(cL);
    free(cR);
    free(feats);
    free(perm);
    free(nonconst);
    free(go);
    free(tmp);
    free(stack);
    if (node_count > 0) out_compact(&T, node_count);
    return node_count;
}

/* The "random" splitter (extremely randomised trees, Geurts et al. 2006): at each node every
 * candidate feature gets one threshold drawn uniformly in the node's range of that feature,
 * and the best of those splits by the same proxy is kept. Nothing is presorted: ``idx`` (n
 * sample ids) holds the node's samples in [start, end) and is partitioned stably in place.
 * The candidate features are the first max_features non-constant ones of a random order of
 * all features (all non-constant features, in index order, when max_features >= d), as in
 * the NumPy route (tree/_tree.py, _grow_numpy); the node ranges are computed only for the
 * features examined. ``buf`` is n doubles of workspace. ``idx`` may list n of n_data
 * samples, as cart_grow's order. Same outputs and return value as cart_grow. */
ML_EXPORT int64_t cart_grow_random(
    const double *X, int64_t sx, int64_t sf, const double *Yw, const double *w, int64_t *idx, int64_t n, int64_t n_data, int64_t d,
    int64_t C, int crit, int64_t max_depth, int64_t min_samples_split, int64_t min_samples_leaf,
    double min_weight_leaf, int64_t max_features, double min_impurity_decrease, uint64_t seed,
    int64_t max_nodes, grow_fn grow, void *grow_ctx, int64_t *depth_reached) {
    const double EPS = 2.220446049250313e-16;
    int64_t V = crit == CRIT_SQUARED ? 1 : C;
    int64_t *left, *right, *feature, *n_node_samples;
    double *threshold, *value, *impurity_out, *weighted_n;
    Out T = {NULL, 0, V, grow, grow_ctx};
    double *stat = malloc(sizeof(double) * C);
    double *sL = malloc(sizeof(double) * C);
    double *sR = malloc(sizeof(double) * C);
    double *cL = malloc(sizeof(double) * C);
    double *cR = malloc(sizeof(double) * C);
    int64_t *perm = malloc(sizeof(int64_t) * (d > 0 ? d : 1));
    double *buf = malloc(sizeof(double) * (n > 0 ? n : 1));
    /* The samples' statistics and weights in the order of idx, moved with it, so that a
     * node's are contiguous: Yp[i * C + c] = Yw[idx[i] * C + c], wp[i] = w[idx[i]]. */
    double *Yp = malloc(sizeof(double) * (n > 0 ? n * C : 1));
    double *wp = malloc(sizeof(double) * (n > 0 ? n : 1));
    double *Ytmp = malloc(sizeof(double) * (n > 0 ? n * C : 1));
    double *wtmp = malloc(sizeof(double) * (n > 0 ? n : 1));
    int64_t *tmp = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
    unsigned char *go = malloc(n > 0 ? n : 1);
    int64_t stack_cap = 64;
    Frame *stack = malloc(sizeof(Frame) * stack_cap);
    int64_t node_count = 0, sp = 0, c, f, i;
    uint64_t rng = seed;
    double W_total = 0.0;
    if (!stat || !sL || !sR || !cL || !cR || !perm || !buf || !Yp || !wp || !Ytmp || !wtmp ||
        !tmp || !go || !stack || !out_reserve(&T, max_nodes < 16 ? max_nodes : 16, max_nodes)) {
        node_count = -1;
        goto done;
    }
    VIEW_OUT(T);
    *depth_reached = 0;
    for (f = 0; f < d; f++) perm[f] = f;
    for (i = 0; i < n; i++) {
        for (c = 0; c < C; c++) Yp[i * C + c] = Yw[idx[i] * C + c];
        wp[i] = w[idx[i]];
    }
    if (crit == CRIT_SQUARED) {
        for (i = 0; i < n_data; i++) W_total += w[i];
    } else {
        for (i = 0; i < n_data; i++)
            for (c = 0; c < C; c++) W_total += Yw[i * C + c];
    }
    if (min_samples_split < 2 * min_samples_leaf) min_samples_split = 2 * min_samples_leaf;
    stack[sp++] = (Frame){0, n, 0, -1, 0};
    while (sp > 0) {
        Frame fr = stack[--sp];
        int64_t start = fr.start, end = fr.end, nn = end - start, node = node_count++;
        const double *Yn = Yp + start * C, *wn = wp + start;
        double W = 0.0, Wn = 0.0, imp, best_score = -INFINITY, best_thr = 0.0;
        int64_t n_feats = 0, best_f = -1, j;
        if (node >= T.cap) { /* max_nodes bounds the capacity */
            if (node >= max_nodes || !out_reserve(&T, node + 1, max_nodes)) {
                node_count = -1;
                goto done;
            }
            VIEW_OUT(T);
        }
        if (fr.parent >= 0) {
            if (fr.is_left)
                left[fr.parent] = node;
            else
                right[fr.parent] = node;
        }
        for (c = 0; c < C; c++) stat[c] = 0.0;
        for (i = 0; i < nn; i++) {
            for (c = 0; c < C; c++) stat[c] += Yn[i * C + c];
            Wn += wn[i];
        }
        if (crit == CRIT_SQUARED) {
            W = Wn;
        } else {
            for (c = 0; c < C; c++) W += stat[c];
        }
        imp = impurity(stat, W, (int)C, crit);
        left[node] = right[node] = -1;
        feature[node] = -2;
        threshold[node] = -2.0;
        impurity_out[node] = imp;
        n_node_samples[node] = nn;
        weighted_n[node] = W;
        for (c = 0; c < V; c++) value[node * V + c] = stat[c] / W;
        if (fr.depth > *depth_reached) *depth_reached = fr.depth;
        if (fr.depth >= max_depth || nn < min_samples_split || nn < 2 * min_samples_leaf ||
            W < 2 * min_weight_leaf || pure(imp, stat, W, crit))
            continue;
        for (j = 0; j < d && n_feats < max_features; j++) {
            const double *x;
            double lo, hi, thr, WL = 0.0, WR, score;
            int64_t nL = 0;
            if (max_features < d) { /* the next feature of a random order (Fisher-Yates) */
                int64_t r = j + below(&rng, d - j), t = perm[j];
                perm[j] = perm[r];
                perm[r] = t;
            }
            f = perm[j];
            x = X + f * sf;
            lo = hi = x[idx[start] * sx];
            for (i = start; i < end; i++) {
                double v = x[idx[i] * sx];
                buf[i - start] = v;
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            if (!(hi > lo)) continue; /* constant in this node: not a candidate */
            n_feats++;
            thr = lo + uniform01(&rng) * (hi - lo);
            if (thr >= hi) thr = lo;
            for (c = 0; c < C; c++) sL[c] = 0.0;
            /* Branch-free (the comparisons are unpredictable): a right sample adds 0. */
            if (C == 2) {
                double a0 = 0.0, a1 = 0.0;
                for (i = 0; i < nn; i++) {
                    double m = (double)(buf[i] <= thr);
                    a0 += m * Yn[2 * i];
                    a1 += m * Yn[2 * i + 1];
                    WL += m * wn[i];
                    nL += buf[i] <= thr;
                }
                sL[0] = a0;
                sL[1] = a1;
            } else {
                for (i = 0; i < nn; i++) {
                    double m = (double)(buf[i] <= thr);
                    for (c = 0; c < C; c++) sL[c] += m * Yn[i * C + c];
                    WL += m * wn[i];
                    nL += buf[i] <= thr;
                }
            }
            WR = Wn - WL;
            if (nL < min_samples_leaf || nn - nL < min_samples_leaf || !(WL > 0.0) ||
                !(WR > 0.0) || WL < min_weight_leaf || WR < min_weight_leaf)
                continue;
            score = split_score(stat, sL, WL, WR, sR, C, crit);
            if (score > best_score) {
                best_score = score;
                best_f = f;
                best_thr = thr;
            }
        }
        if (best_f < 0) continue;
        {
            const double *x = X + best_f * sf;
            double WLs = 0.0, WRs = 0.0, iL, iR, improvement;
            int64_t a = start, b = 0;
            for (c = 0; c < C; c++) cL[c] = cR[c] = 0.0;
            for (i = 0; i < nn; i++) {
                const double *row = Yn + i * C;
                go[i] = x[idx[start + i] * sx] <= best_thr;
                if (go[i]) {
                    for (c = 0; c < C; c++) cL[c] += row[c];
                    if (crit == CRIT_SQUARED) WLs += wn[i];
                } else {
                    for (c = 0; c < C; c++) cR[c] += row[c];
                    if (crit == CRIT_SQUARED) WRs += wn[i];
                }
            }
            if (crit != CRIT_SQUARED) {
                for (c = 0; c < C; c++) WLs += cL[c];
                for (c = 0; c < C; c++) WRs += cR[c];
            }
            iL = impurity(cL, WLs, (int)C, crit);
            iR = impurity(cR, WRs, (int)C, crit);
            improvement = (W / W_total) * (imp - WLs / W * iL - WRs / W * iR);
            if (improvement + EPS < min_impurity_decrease) continue;
            /* Stable partition of the node's samples (ids, statistics, weights): left first. */
            for (i = 0; i < nn; i++) {
                int64_t s = idx[start + i];
                if (go[i]) {
                    idx[a] = s;
                    for (c = 0; c < C; c++) Yp[a * C + c] = Yn[i * C + c];
                    wp[a] = wn[i];
                    a++;
                } else {
                    tmp[b] = s;
                    for (c = 0; c < C; c++) Ytmp[b * C + c] = Yn[i * C + c];
                    wtmp[b] = wn[i];
                    b++;
                }
            }
            memcpy(idx + a, tmp, sizeof(int64_t) * b);
            memcpy(Yp + a * C, Ytmp, sizeof(double) * b * C);
            memcpy(wp + a, wtmp, sizeof(double) * b);
            feature[node] = best_f;
            threshold[node] = best_thr;
            if (!frames_reserve(&stack, &stack_cap, sp + 2)) {
                node_count = -1;
                goto done;
            }
            stack[sp++] = (Frame){a, end, fr.depth + 1, node, 0};
            stack[sp++] = (Frame){start, a, fr.depth + 1, node, 1};
        }
    }
done:
    free(stat);
    free(sL);
    free(sR);
    free(cL);
    free(cR);
    free(perm);
    free(buf);
    free(Yp);
    free(wp);
    free(Ytmp);
    free(wtmp);
    free(tmp);
    free(go);
    free(stack);
    if (node_count > 0) out_compact(&T, node_count);
    return node_count;
}

/* One node's running state along a sorted row, for two statistics (binary classes, or the
 * squared error's (w y, w y^2)): the prefix sums s0, s1, the left weight wl, the count p and
 * the previous value xlo, and the best split so far. */
typedef struct {
    double s0, s1, wl, xlo, bs, bt;
    int64_t p, bf;
} Run2;

/* The next sample (value xs, statistics a0, a1, weight ws) of a node with totals tot0, tot1,
 * weight W and nn samples: the split between the previous sample and this one is scored,
 * then the sample joins the left sums. Operations and their order are cart_grow's for C = 2
 * (impurity()/proxy() unrolled: their sums start from 0.0, and 0.0 + v = v for the
 * non-negative v there, so the unrolled forms have the same bits). */
static inline void run2_step(Run2 *r, double xs, double a0, double a1, double ws, double W,
                             double tot0, double tot1, int64_t nn, int crit,
                             int64_t min_samples_leaf, double min_weight_leaf, int64_t f) {
    int64_t p = r->p;
    double xlo = r->xlo, wl = r->wl, s0 = r->s0, s1 = r->s1;
    if (p > 0 && xs > xlo && p >= min_samples_leaf && nn - p >= min_samples_leaf) {
        double WR = W - wl;
        if (wl > 0.0 && WR > 0.0 && wl >= min_weight_leaf && WR >= min_weight_leaf) {
            double r0 = tot0 - s0, r1 = tot1 - s1, score;
            if (crit == CRIT_SQUARED) {
                score = s0 * s0 / wl + r0 * r0 / WR;
            } else {
                if (r0 < 0.0) r0 = 0.0;
                if (r1 < 0.0) r1 = 0.0;
                if (crit == CRIT_GINI) {
                    score = (s0 * s0 + s1 * s1) / wl + (r0 * r0 + r1 * r1) / WR;
                } else {
                    double l2[2], q2[2];
                    l2[0] = s0;
                    l2[1] = s1;
                    q2[0] = r0;
                    q2[1] = r1;
                    score = proxy(l2, wl, q2, WR, 2, crit);
                }
            }
            if (score > r->bs) {
                double thr = midpoint(xlo, xs);
                r->bs = score;
                r->bf = f;
                r->bt = thr;
            }
        }
    }
    s0 += a0;
    s1 += a1;
    r->s0 = s0;
    r->s1 = s1;
    r->wl = crit == CRIT_SQUARED ? wl + ws : s0 + s1;
    r->p = p + 1;
    r->xlo = xs;
}

/* The "best" splitter grown level by level on a presorted order that is only read, so that
 * the trees of an ensemble (boosting's stages, AdaBoost's rounds) share one order and none
 * copies it. ``order_ids`` (d x n, row f the stable argsort of x_f; 32-bit ids, or 16-bit
 * with order16 when n <= 65536) is never written: ``node_of`` (n entries) holds the level's
 * node of every sample (-1 once its node is a leaf), and one pass over each row of order
 * visits every node's samples in the order that cart_grow's partitioned segment of that row
 * would list them (a stable partition keeps the presorted order of a node's samples). Every
 * sum is therefore formed by the same operations in the same order as in cart_grow, and the
 * tree is the same bit for bit: a node's statistics and its children's are summed over row
 * 0, the split scan of feature f accumulates each node's prefix sums over row f, and ties
 * go to the first feature, then the first position. (cart_grow skips features constant in a
 * node; here they are scanned, but a constant feature has no threshold, so the outcome is
 * the same.) Only for max_features >= d (no feature draws, whose random stream follows
 * cart_grow's pre-order) and a finite max_depth (at most 2^max_depth nodes per level, whose
 * states are held at once). Nodes are numbered in pre-order at the end, as cart_grow
 * numbers them.
 *
 * Cost per level: one pass over the d rows of order, O(d n C); memory O(n) beyond order,
 * plus O(2^max_depth C) for the nodes.
 *
 * Classification may pass ``yidx`` (n class indices) and ``w`` instead of ``Yw``: sample i
 * then adds w_i to its class and +0.0 to the others, which is its row of Yw (w_i times a
 * one-hot row), without the n x C array. Yw is then unused (may be NULL). The squared
 * error may likewise pass its targets ``yv`` (n) and ``w`` instead of the n x 2 ``Yw``: the
 * row [w_i y_i, (y_i y_i) w_i] is formed on the fly, the same products. Same outputs and
 * return value as cart_grow. */
ML_EXPORT int64_t cart_grow_levels(
    const double *X, int64_t sx, int64_t sf, const double *Yw, const int32_t *yidx,
    const double *yv, const double *w, const void *order_ids, int order16, int64_t n, int64_t d,
    int64_t C, int crit, int64_t max_depth,
    int64_t min_samples_split, int64_t min_samples_leaf, double min_weight_leaf,
    double min_impurity_decrease, int64_t max_nodes, grow_fn grow, void *grow_ctx,
    int64_t *depth_reached) {
    const double EPS = 2.220446049250313e-16;
    /* the order's ids: 32-bit, or 16-bit (order16, n <= 65536: half the shared order) */
    const int32_t *order32 = order16 ? NULL : (const int32_t *)order_ids;
    const uint16_t *order16p = order16 ? (const uint16_t *)order_ids : NULL;
    int64_t V = crit == CRIT_SQUARED ? 1 : C;
    /* nodes per level, at most: 2^depth, and n (a node holds at least one sample) */
    int64_t width_d = (int64_t)1 << (max_depth < 30 ? max_depth : 30);
    int64_t width = n < width_d ? (n > 0 ? n : 1) : width_d;
    int32_t *node_of = malloc(sizeof(int32_t) * (n > 0 ? n : 1));
    /* per node of the tree, in breadth-first order (b_ ids), grown on demand; at the end
     * the nodes are written in pre-order into the caller's buffer (T), sized to the tree */
    Nodes *B = nodes_new(V, max_nodes < 16 ? max_nodes : 16, max_nodes);
    Out T = {NULL, 0, V, grow, grow_ctx};
    int64_t *b_left, *b_right, *b_feat, *b_nn, *pre = NULL, *dfs = NULL;
    double *b_thr, *b_imp, *b_W, *b_val;
    int64_t *left, *right, *feature, *n_node_samples;
    double *threshold, *value, *impurity_out, *weighted_n;
    /* per node of the current level (level-local index t) and of the next (2t, 2t + 1) */
    double *stat = malloc(sizeof(double) * width * C), *nstat = malloc(sizeof(double) * 2 * width * C);
    double *Wl = malloc(sizeof(double) * width), *nW = malloc(sizeof(double) * 2 * width);
    int64_t *cnt = malloc(sizeof(int64_t) * width), *ncnt = malloc(sizeof(int64_t) * 2 * width);
    int64_t *id = malloc(sizeof(int64_t) * width), *nid = malloc(sizeof(int64_t) * 2 * width);
    double *sL = malloc(sizeof(double) * width * C), *WL = malloc(sizeof(double) * width);
    int64_t *pos = malloc(sizeof(int64_t) * width), *bf = malloc(sizeof(int64_t) * width);
    double *xprev = malloc(sizeof(double) * width), *bscore = malloc(sizeof(double) * width);
    double *bthr = malloc(sizeof(double) * width), *imp = malloc(sizeof(double) * width);
    double *sR = malloc(sizeof(double) * C);
    int32_t *remap = malloc(sizeof(int32_t) * 2 * width);
    Run2 *run = malloc(sizeof(Run2) * width);
    int64_t node_count = 0, n_level = 1, depth = 0, c, f, i, t, sp;
    double W_total = 0.0;
    /* Entry i of row f of the order (the width test is the same for every entry). */
#define ID(f, i) (order16 ? (int64_t)order16p[(f) * n + (i)] : (int64_t)order32[(f) * n + (i)])
    /* Sample s's row of Yw added to acc; with class indices, the row w_s e_{y_s} formed on
     * the fly (w_s at its class, +0.0 elsewhere: every entry updated, as with Yw, rather
     * than one entry at a data-dependent address, which stalls the next read of acc). */
#define ADD_ROW(acc, s)                                                        \
    do {                                                                       \
        if (yidx) {                                                            \
            int64_t yc_ = yidx[s];                                             \
            double ws_ = w[s];                                                 \
            for (c = 0; c < C; c++) (acc)[c] += ws_ * (double)(c == yc_);      \
        } else if (yv) {                                                       \
            double ys_ = yv[s], ws_ = w[s];                                    \
            (acc)[0] += ws_ * ys_;                                             \
            (acc)[1] += (ys_ * ys_) * ws_;                                     \
        } else                                                                 \
            for (c = 0; c < C; c++) (acc)[c] += Yw[(s) * C + c];               \
    } while (0)
    if (!node_of || !B || !stat || !nstat || !Wl || !nW || !cnt || !ncnt || !id ||
        !nid || !sL || !WL || !pos || !bf || !xprev || !bscore || !bthr || !imp || !sR ||
        !remap || !run || max_nodes < 1) {
        node_count = -1;
        goto done;
    }
#define B_VIEW()                                                               \
    do {                                                                       \
        b_left = B->a[N_LEFT];                                                 \
        b_right = B->a[N_RIGHT];                                               \
        b_feat = B->a[N_FEATURE];                                              \
        b_thr = B->a[N_THRESHOLD];                                             \
        b_val = B->a[N_VALUE];                                                 \
        b_imp = B->a[N_IMPURITY];                                              \
        b_nn = B->a[N_SAMPLES];                                                \
        b_W = B->a[N_WEIGHT];                                                  \
    } while (0)
    B_VIEW();
    *depth_reached = 0;
    if (crit == CRIT_SQUARED || yidx) {
        for (i = 0; i < n; i++) W_total += w[i];
    } else {
        for (i = 0; i < n; i++)
            for (c = 0; c < C; c++) W_total += Yw[i * C + c];
    }
    if (min_samples_split < 2 * min_samples_leaf) min_samples_split = 2 * min_samples_leaf;
    /* The root: its statistics over row 0. */
    for (c = 0; c < C; c++) stat[c] = 0.0;
    Wl[0] = 0.0;
    for (i = 0; i < n; i++) {
        int64_t s = ID(0, i);
        node_of[s] = 0;
        ADD_ROW(stat, s);
        if (crit == CRIT_SQUARED) Wl[0] += w[s];
    }
    if (crit != CRIT_SQUARED)
        for (c = 0; c < C; c++) Wl[0] += stat[c];
    cnt[0] = n;
    id[0] = node_count++;
    b_left[0] = b_right[0] = -1;
    while (n_level > 0) {
        int64_t n_split = 0, n_next = 0;
        /* Each node of the level: its outputs, and whether it is a leaf. */
        for (t = 0; t < n_level; t++) {
            int64_t b = id[t];
            double W = Wl[t];
            imp[t] = impurity(stat + t * C, W, (int)C, crit);
            b_left[b] = b_right[b] = -1;
            b_feat[b] = -2;
            b_thr[b] = -2.0;
            b_imp[b] = imp[t];
            b_nn[b] = cnt[t];
            b_W[b] = W;
            for (c = 0; c < V; c++) b_val[b * V + c] = stat[t * C + c] / W;
            bf[t] = -1;
            bscore[t] = -INFINITY;
            bthr[t] = 0.0;
            if (depth >= max_depth || cnt[t] < min_samples_split ||
                cnt[t] < 2 * min_samples_leaf || W < 2 * min_weight_leaf ||
                pure(imp[t], stat + t * C, W, crit))
                pos[t] = -1; /* a leaf: its samples are skipped below */
            else {
                pos[t] = 0;
                n_split++;
            }
        }
        if (depth > *depth_reached) *depth_reached = depth;
        if (n_split == 0) break;
        for (i = 0; i < n; i++) /* samples of leaves leave the tree */
            if (node_of[i] >= 0 && pos[node_of[i]] < 0) node_of[i] = -1;
        /* The split scan: feature by feature, every node's prefix sums along row f. Two
         * statistics: run2_step on each node's Run2 (one node to split, every root and all of
         * a stump's scan: a local one, held in registers). */
        if (C == 2) {
            int64_t t1 = 0;
            for (t = 0; t < n_level; t++) {
                run[t].bs = -INFINITY;
                run[t].bt = 0.0;
                run[t].bf = -1;
                if (pos[t] >= 0) t1 = t;
            }
            for (f = 0; f < d; f++) {
                const double *x = X + f * sf;
                if (n_split == 1) {
                    Run2 r = run[t1];
                    double W = Wl[t1], tot0 = stat[2 * t1], tot1 = stat[2 * t1 + 1];
                    int64_t nn = cnt[t1];
                    r.s0 = r.s1 = r.wl = r.xlo = 0.0;
                    r.p = 0;
                    for (i = 0; i < n; i++) {
                        int64_t s = ID(f, i);
                        double a0, a1, ws = w[s];
                        if (node_of[s] < 0) continue;
                        two_stats(yidx, yv, Yw, ws, s, &a0, &a1);
                        run2_step(&r, x[s * sx], a0, a1, ws, W, tot0, tot1, nn, crit,
                                  min_samples_leaf, min_weight_leaf, f);
                    }
                    run[t1] = r;
                } else {
                    for (t = 0; t < n_level; t++) {
                        run[t].s0 = run[t].s1 = run[t].wl = run[t].xlo = 0.0;
                        run[t].p = 0;
                    }
                    for (i = 0; i < n; i++) {
                        int64_t s = ID(f, i);
                        double a0, a1, ws = w[s];
                        t = node_of[s];
                        if (t < 0) continue;
                        two_stats(yidx, yv, Yw, ws, s, &a0, &a1);
                        run2_step(run + t, x[s * sx], a0, a1, ws, Wl[t], stat[2 * t],
                                  stat[2 * t + 1], cnt[t], crit, min_samples_leaf,
                                  min_weight_leaf, f);
                    }
                }
            }
            for (t = 0; t < n_level; t++) {
                bscore[t] = run[t].bs;
                bthr[t] = run[t].bt;
                bf[t] = pos[t] < 0 ? -1 : run[t].bf;
            }
        } else
        /* Otherwise per-node arrays; with one node to split, its running state in locals. */
        if (n_split == 1) {
            int64_t t1 = 0, nn;
            double W, *sl, *tot;
            while (pos[t1] < 0) t1++;
            nn = cnt[t1];
            W = Wl[t1];
            sl = sL + t1 * C;
            tot = stat + t1 * C;
            for (f = 0; f < d; f++) {
                const double *x = X + f * sf;
                double wl = 0.0, xlo = 0.0, bs = bscore[t1];
                int64_t p = 0, bfeat = bf[t1];
                double bt = bthr[t1];
                for (c = 0; c < C; c++) sl[c] = 0.0;
                for (i = 0; i < n; i++) {
                    int64_t s = ID(f, i);
                    double xs;
                    if (node_of[s] < 0) continue;
                    xs = x[s * sx];
                    if (p > 0 && xs > xlo && p >= min_samples_leaf && nn - p >= min_samples_leaf) {
                        double WR = W - wl, score;
                        if (wl > 0.0 && WR > 0.0 && wl >= min_weight_leaf && WR >= min_weight_leaf) {
                            score = split_score(tot, sl, wl, WR, sR, C, crit);
                            if (score > bs) {
                                double thr = midpoint(xlo, xs);
                                bs = score;
                                bfeat = f;
                                bt = thr;
                            }
                        }
                    }
                    ADD_ROW(sl, s);
                    if (crit == CRIT_SQUARED) {
                        wl += w[s];
                    } else {
                        double acc = 0.0;
                        for (c = 0; c < C; c++) acc += sl[c];
                        wl = acc;
                    }
                    p++;
                    xlo = xs;
                }
                bscore[t1] = bs;
                bf[t1] = bfeat;
                bthr[t1] = bt;
            }
        } else for (f = 0; f < d; f++) {
            const double *x = X + f * sf;
            for (t = 0; t < n_level; t++) {
                if (pos[t] < 0) continue;
                pos[t] = 0;
                WL[t] = 0.0;
                for (c = 0; c < C; c++) sL[t * C + c] = 0.0;
            }
            for (i = 0; i < n; i++) {
                int64_t s = ID(f, i), p;
                double xs;
                t = node_of[s];
                if (t < 0) continue;
                xs = x[s * sx];
                p = pos[t];
                if (p > 0) { /* the split between the node's previous sample and s */
                    double xlo = xprev[t], W = Wl[t], wl = WL[t], WR, score;
                    const double *sl = sL + t * C, *tot = stat + t * C;
                    if (xs > xlo && p >= min_samples_leaf && cnt[t] - p >= min_samples_leaf) {
                        WR = W - wl;
                        if (wl > 0.0 && WR > 0.0 && wl >= min_weight_leaf && WR >= min_weight_leaf) {
                            score = split_score(tot, sl, wl, WR, sR, C, crit);
                            if (score > bscore[t]) {
                                double thr = midpoint(xlo, xs);
                                bscore[t] = score;
                                bf[t] = f;
                                bthr[t] = thr;
                            }
                        }
                    }
                }
                {
                    double *sl = sL + t * C;
                    ADD_ROW(sl, s);
                    if (crit == CRIT_SQUARED) {
                        WL[t] += w[s];
                    } else {
                        double acc = 0.0;
                        for (c = 0; c < C; c++) acc += sl[c];
                        WL[t] = acc;
                    }
                }
                pos[t] = p + 1;
                xprev[t] = xs;
            }
        }
        /* The children's statistics over row 0 (as cart_grow sums them), each sample sent
         * to 2t (left) or 2t + 1 (right). */
        for (t = 0; t < 2 * n_level; t++) {
            for (c = 0; c < C; c++) nstat[t * C + c] = 0.0;
            nW[t] = 0.0;
            ncnt[t] = 0;
        }
        for (i = 0; i < n; i++) {
            int64_t s = ID(0, i), k;
            t = node_of[s];
            if (t < 0) continue;
            if (bf[t] < 0) {
                node_of[s] = -1;
                continue;
            }
            k = 2 * t + !(X[s * sx + bf[t] * sf] <= bthr[t]);
            node_of[s] = (int32_t)k;
            ncnt[k]++;
            ADD_ROW(nstat + k * C, s);
            if (crit == CRIT_SQUARED) nW[k] += w[s];
        }
        for (t = 0; t < n_level; t++) {
            double W = Wl[t], WLs, WRs, iL, iR, improvement;
            int64_t k;
            remap[2 * t] = remap[2 * t + 1] = -1;
            if (bf[t] < 0) continue;
            if (crit != CRIT_SQUARED) {
                for (k = 2 * t; k <= 2 * t + 1; k++)
                    for (c = 0; c < C; c++) nW[k] += nstat[k * C + c];
            }
            WLs = nW[2 * t];
            WRs = nW[2 * t + 1];
            iL = impurity(nstat + 2 * t * C, WLs, (int)C, crit);
            iR = impurity(nstat + (2 * t + 1) * C, WRs, (int)C, crit);
            improvement = (W / W_total) * (imp[t] - WLs / W * iL - WRs / W * iR);
            if (improvement + EPS < min_impurity_decrease) continue;
            if (node_count + 2 > B->cap) { /* max_nodes bounds the capacity */
                if (node_count + 2 > max_nodes || !nodes_reserve(B, node_count + 2, max_nodes)) {
                    node_count = -1;
                    goto done;
                }
                B_VIEW();
            }
            b_feat[id[t]] = bf[t];
            b_thr[id[t]] = bthr[t];
            for (k = 2 * t; k <= 2 * t + 1; k++) {
                int64_t j = n_next++;
                remap[k] = (int32_t)j;
                nid[j] = node_count++;
                for (c = 0; c < C; c++) sL[j * C + c] = nstat[k * C + c];
                WL[j] = nW[k];
                pos[j] = ncnt[k];
            }
            b_left[id[t]] = nid[n_next - 2];
            b_right[id[t]] = nid[n_next - 1];
        }
        for (i = 0; i < n; i++)
            if (node_of[i] >= 0) node_of[i] = remap[node_of[i]];
        /* The next level's nodes become the level's. */
        for (t = 0; t < n_next; t++) {
            for (c = 0; c < C; c++) stat[t * C + c] = sL[t * C + c];
            Wl[t] = WL[t];
            cnt[t] = pos[t];
            id[t] = nid[t];
        }
        n_level = n_next;
        depth++;
    }
    /* Pre-order numbering (a node, its left subtree, its right subtree) and the outputs. */
    pre = malloc(sizeof(int64_t) * node_count);
    dfs = malloc(sizeof(int64_t) * node_count);
    if (!pre || !dfs || !out_reserve(&T, node_count, node_count)) {
        node_count = -1;
        goto done;
    }
    VIEW_OUT(T);
    sp = 0;
    dfs[sp++] = 0;
    t = 0;
    while (sp > 0) {
        int64_t b = dfs[--sp];
        pre[b] = t++;
        if (b_left[b] >= 0) {
            dfs[sp++] = b_right[b];
            dfs[sp++] = b_left[b];
        }
    }
    for (i = 0; i < node_count; i++) {
        int64_t q = pre[i];
        left[q] = b_left[i] >= 0 ? pre[b_left[i]] : -1;
        right[q] = b_right[i] >= 0 ? pre[b_right[i]] : -1;
        feature[q] = b_feat[i];
        threshold[q] = b_thr[i];
        impurity_out[q] = b_imp[i];
        n_node_samples[q] = b_nn[i];
        weighted_n[q] = b_W[i];
        for (c = 0; c < V; c++) value[q * V + c] = b_val[i * V + c];
    }
#undef B_VIEW
#undef ADD_ROW
#undef ID
done:
    free(node_of);
    nodes_free(B);
    free(pre);
    free(dfs);
    free(stat);
    free(nstat);
    free(Wl);
    free(nW);
    free(cnt);
    free(ncnt);
    free(id);
    free(nid);
    free(sL);
    free(WL);
    free(pos);
    free(bf);
    free(xprev);
    free(bscore);
    free(bthr);
    free(imp);
    free(sR);
    free(remap);
    free(run);
    if (node_count > 0) out_compact(&T, node_count);
    return node_count;
}

/* Leaf reached by each row of X (m x d, row-major): left when x[feature] <= threshold. */
ML_EXPORT void cart_apply(const double *X, int64_t m, int64_t d, const int64_t *left,
                          const int64_t *right, const int64_t *feature,
                          const double *threshold, int64_t *out) {
    int64_t i;
    for (i = 0; i < m; i++) {
        const double *x = X + i * d;
        int64_t node = 0;
        while (left[node] != -1)
            node = x[feature[node]] <= threshold[node] ? left[node] : right[node];
        out[i] = node;
    }
}
