/* CART growing on presorted features (see mathlearn/tree/_tree.py, which documents the
 * algorithm and holds the NumPy route computing the same tree).
 *
 * Layout: entry (sample s, feature f) of X is X[s * sx + f * sf] (the caller's array as it is,
 * row- or column-major: no copy); order (d x n, 32-bit: at most 2^31 - 1 samples) holds,
 * for every feature f, sample ids sorted by x_f. A node owns the positions [start, end) of
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

ML_EXPORT int cart_abi_version(void) { return 5; }

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

typedef struct {
    int64_t start, end, depth, parent;
    int is_left;
} Frame;

/* Grow the tree; returns the number of nodes, or -1 when out of memory (nothing written
 * beyond max_nodes: the caller sizes the outputs for 2 n - 1 nodes, the most a binary
 * tree with non-empty leaves can have). ``order`` is modified (partitioned in place). */
ML_EXPORT int64_t cart_grow(
    const double *X, int64_t sx, int64_t sf, const double *Yw, const double *w, int32_t *order, int64_t n, int64_t d,
    int64_t C, int crit, int64_t max_depth, int64_t min_samples_split, int64_t min_samples_leaf,
    double min_weight_leaf, int64_t max_features, double min_impurity_decrease, uint64_t seed,
    int64_t max_nodes, int64_t *left, int64_t *right, int64_t *feature, double *threshold,
    double *value, double *impurity_out, int64_t *n_node_samples, double *weighted_n,
    int64_t *depth_reached) {
    const double EPS = 2.220446049250313e-16;
    int64_t V = crit == CRIT_SQUARED ? 1 : C;
    double *stat = malloc(sizeof(double) * C);
    double *total = malloc(sizeof(double) * C);
    double *sL = malloc(sizeof(double) * C);
    double *sR = malloc(sizeof(double) * C);
    double *cL = malloc(sizeof(double) * C);
    double *cR = malloc(sizeof(double) * C);
    int64_t *feats = malloc(sizeof(int64_t) * (d > 0 ? d : 1));
    int64_t *perm = malloc(sizeof(int64_t) * (d > 0 ? d : 1));
    unsigned char *nonconst = malloc(d > 0 ? d : 1);
    unsigned char *go = calloc(n > 0 ? n : 1, 1);
    int32_t *tmp = malloc(sizeof(int32_t) * (n > 0 ? n : 1));
    Frame *stack = malloc(sizeof(Frame) * (max_nodes + 1));
    int64_t node_count = 0, sp = 0, c, f, i, k, d_part;
    uint64_t rng = seed;
    double W_total = 0.0;
    if (!stat || !total || !sL || !sR || !cL || !cR || !feats || !perm || !nonconst || !go ||
        !tmp || !stack) {
        node_count = -1;
        goto done;
    }
    *depth_reached = 0;
    if (crit == CRIT_SQUARED) {
        for (i = 0; i < n; i++) W_total += w[i];
    } else {
        for (i = 0; i < n; i++)
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
        if (node >= max_nodes) {
            node_count = -1;
            goto done;
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
            W < 2 * min_weight_leaf || imp <= EPS)
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
                for (c = 0; c < C; c++) {
                    sR[c] = total[c] - sL[c];
                    /* a class absent from the right child: clear the rounding residue */
                    if (crit != CRIT_SQUARED && sR[c] < 0.0) sR[c] = 0.0;
                }
                score = proxy(sL, WL, sR, WR, (int)C, crit);
                if (score > best_score) {
                    double thr = xlo / 2.0 + xhi / 2.0;
                    if (thr == xhi || !isfinite(thr)) thr = xlo;
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
                            nL < 2 * min_samples_leaf || WLs < 2 * min_weight_leaf || iL <= EPS;
                int leafR = cd >= max_depth || nR < min_samples_split ||
                            nR < 2 * min_samples_leaf || WRs < 2 * min_weight_leaf || iR <= EPS;
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
    return node_count;
}

/* The "random" splitter (extremely randomised trees, Geurts et al. 2006): at each node every
 * candidate feature gets one threshold drawn uniformly in the node's range of that feature,
 * and the best of those splits by the same proxy is kept. Nothing is presorted: ``idx`` (n
 * sample ids) holds the node's samples in [start, end) and is partitioned stably in place.
 * The candidate features are the first max_features non-constant ones of a random order of
 * all features (all non-constant features, in index order, when max_features >= d), as in
 * the NumPy route (tree/_tree.py, _grow_numpy); the node ranges are computed only for the
 * features examined. ``buf`` is n doubles of workspace. Same outputs and return value as
 * cart_grow. */
ML_EXPORT int64_t cart_grow_random(
    const double *X, int64_t sx, int64_t sf, const double *Yw, const double *w, int64_t *idx, int64_t n, int64_t d,
    int64_t C, int crit, int64_t max_depth, int64_t min_samples_split, int64_t min_samples_leaf,
    double min_weight_leaf, int64_t max_features, double min_impurity_decrease, uint64_t seed,
    int64_t max_nodes, int64_t *left, int64_t *right, int64_t *feature, double *threshold,
    double *value, double *impurity_out, int64_t *n_node_samples, double *weighted_n,
    int64_t *depth_reached) {
    const double EPS = 2.220446049250313e-16;
    int64_t V = crit == CRIT_SQUARED ? 1 : C;
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
    Frame *stack = malloc(sizeof(Frame) * (max_nodes + 1));
    int64_t node_count = 0, sp = 0, c, f, i;
    uint64_t rng = seed;
    double W_total = 0.0;
    if (!stat || !sL || !sR || !cL || !cR || !perm || !buf || !Yp || !wp || !Ytmp || !wtmp ||
        !tmp || !go || !stack) {
        node_count = -1;
        goto done;
    }
    *depth_reached = 0;
    for (f = 0; f < d; f++) perm[f] = f;
    for (i = 0; i < n; i++) {
        for (c = 0; c < C; c++) Yp[i * C + c] = Yw[idx[i] * C + c];
        wp[i] = w[idx[i]];
    }
    if (crit == CRIT_SQUARED) {
        for (i = 0; i < n; i++) W_total += w[i];
    } else {
        for (i = 0; i < n; i++)
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
        if (node >= max_nodes) {
            node_count = -1;
            goto done;
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
            W < 2 * min_weight_leaf || imp <= EPS)
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
            for (c = 0; c < C; c++) {
                sR[c] = stat[c] - sL[c];
                if (crit != CRIT_SQUARED && sR[c] < 0.0) sR[c] = 0.0;
            }
            score = proxy(sL, WL, sR, WR, (int)C, crit);
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
