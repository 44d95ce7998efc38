/* One epoch of plain (one rating at a time) SGD for biased matrix factorisation (see
 * mathlearn/recommender/_sgd.py).
 *
 * For the ratings n = 0 .. n_ratings - 1, in the order given (the caller permutes them: one
 * gather of 16-byte records, after which the kernel reads them in sequence), with
 * (u, i, r) = ratings[n], p = P[u], q = Q[i] (k numbers each):
 *
 *     e = r - mu - bu[u] - bi[i] - p . q
 *     bu[u] += lr (e - lam bu[u]),  bi[i] += lr (e - lam bi[i])      (with biases only)
 *     p_f <- p_f + lr (e q_f - lam p_f),  q_f <- q_f + lr (e p_f - lam q_f)   (old p_f, q_f)
 *
 * in place. The dot product p . q is four sequential partial sums over the coordinates
 * f = j mod 4 (the tail beyond the last multiple of 4 added to the first), combined as
 * (s0 + s1) + (s2 + s3): a fixed order, which the NumPy route reproduces exactly. Every
 * other operation is one IEEE operation at a time in the order written (C99, no
 * contraction into fused multiply-adds). */

#include <stddef.h>
#include <stdint.h>

/* One rating; NumPy's structured dtype [("u", "<i4"), ("i", "<i4"), ("r", "<f8")]. */
struct sgdmf_rating {
    int32_t u, i;
    double r;
};

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int sgdmf_abi_version(void) { return 6; }

/* p . q in the fixed order described above (four sequential partial sums, the tail into
 * the first, combined as (s0 + s1) + (s2 + s3)): the epoch and the objective share it. */
static double dot_fixed(const double *p, const double *q, int64_t k) {
    int64_t m = k - k % 4, f = 0;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (; f < m; f += 4) {
        s0 += p[f] * q[f];
        s1 += p[f + 1] * q[f + 1];
        s2 += p[f + 2] * q[f + 2];
        s3 += p[f + 3] * q[f + 3];
    }
    for (; f < k; ++f) s0 += p[f] * q[f];
    return (s0 + s1) + (s2 + s3);
}

/* The visiting order of shuffle="users": the users' segments [indptr[u], indptr[u + 1]) of
 * src (the ratings' indices in user-major order) in the order user_order, each segment
 * shuffled by Fisher-Yates with the draws given: for a = n - 1 down to 1, the entries at
 * a and swap[lo + a] (a number in [0, a]) of the segment's copy are exchanged. The
 * caller draws swap; the same exchanges in Python give the same order. */
ML_EXPORT void sgdmf_user_order(int64_t n_users, const int64_t *user_order,
                                const int64_t *indptr, const int64_t *src,
                                const int64_t *swap, int64_t *out) {
    int64_t c = 0;
    for (int64_t s = 0; s < n_users; ++s) {
        int64_t u = user_order[s], lo = indptr[u], n = indptr[u + 1] - lo;
        int64_t *o = out + c;
        for (int64_t a = 0; a < n; ++a) o[a] = src[lo + a];
        for (int64_t a = n - 1; a > 0; --a) {
            int64_t b = swap[lo + a], tmp = o[a];
            o[a] = o[b];
            o[b] = tmp;
        }
        c += n;
    }
}

/* The same order written as rating records: out[c] = records[the c-th index above], where
 * records holds the ratings in user-major order (records[a] is rating src[a]). One pass
 * builds the epoch's visiting sequence, without the index array and its gather. */
ML_EXPORT void sgdmf_user_records(int64_t n_users, const int64_t *user_order,
                                  const int64_t *indptr, const struct sgdmf_rating *records,
                                  const int64_t *swap, struct sgdmf_rating *out) {
    int64_t c = 0;
    for (int64_t s = 0; s < n_users; ++s) {
        int64_t u = user_order[s], lo = indptr[u], n = indptr[u + 1] - lo;
        struct sgdmf_rating *o = out + c;
        for (int64_t a = 0; a < n; ++a) o[a] = records[lo + a];
        for (int64_t a = n - 1; a > 0; --a) {
            int64_t b = swap[lo + a];
            struct sgdmf_rating tmp = o[a];
            o[a] = o[b];
            o[b] = tmp;
        }
        c += n;
    }
}

/* The sum of squared residuals sum_n e_n^2, e_n = r - mu - bu[u] - bi[i] - p . q (the
 * epoch's residual, its dot product in the same fixed order), added sequentially over the
 * ratings in the order given (bu, bi may be all zeros). */
ML_EXPORT double sgdmf_sse(int64_t n_ratings, int64_t k, const int32_t *users,
                           const int32_t *items, const double *values, const double *P,
                           const double *Q, const double *bu, const double *bi, double mu) {
    double total = 0.0;
    for (int64_t n = 0; n < n_ratings; ++n) {
        int64_t u = users[n], i = items[n];
        double dot = dot_fixed(P + u * k, Q + i * k, k);
        double e = values[n] - mu - bu[u] - bi[i] - dot;
        total += e * e;
    }
    return total;
}

ML_EXPORT void sgdmf_epoch(int64_t n_ratings, int64_t k, const struct sgdmf_rating *ratings,
                           double *P, double *Q, double *bu, double *bi, double mu, double lr,
                           double lam, int biases) {
    for (int64_t n = 0; n < n_ratings; ++n) {
        int64_t u = ratings[n].u, i = ratings[n].i;
        double *p = P + u * k, *q = Q + i * k;
        double e = ratings[n].r - mu - bu[u] - bi[i] - dot_fixed(p, q, k);
        if (biases) {
            bu[u] += lr * (e - lam * bu[u]);
            bi[i] += lr * (e - lam * bi[i]);
        }
        for (int64_t f = 0; f < k; ++f) {
            double pf = p[f], qf = q[f];
            p[f] = pf + lr * (e * qf - lam * pf);
            q[f] = qf + lr * (e * pf - lam * qf);
        }
    }
}

/* sum_j n[j] (p_j . p_j + b_j^2) over the n_rows rows of P (k numbers each), the dot
 * product in the fixed order above, the rows added sequentially (b NULL: no bias). */
static double weighted_norms(int64_t n_rows, int64_t k, const double *P, const double *b,
                             const double *n) {
    double total = 0.0;
    for (int64_t j = 0; j < n_rows; ++j) {
        double s = dot_fixed(P + j * k, P + j * k, k);
        if (b != NULL) s += b[j] * b[j];
        total += n[j] * s;
    }
    return total;
}

static int all_finite(const double *a, int64_t n) {
    for (int64_t t = 0; t < n; ++t)
        if (!(a[t] - a[t] == 0.0)) return 0;
    return 1;
}

/* Epochs of plain SGD with their visiting orders, divergence checks and objectives, in one
 * call (mathlearn/recommender/_sgd.py, SGDMatrixFactorization.fit, which draws the orders).
 * Epoch e visits: mode 0, the records in stored order; mode 1, records[orders[e N + p]];
 * mode 2 (shuffle="users"), the order of sgdmf_user_records with user_order
 * orders + e n_users and swap swaps + e N, built into visit. After each epoch: P and Q
 * must be finite (else *status = 2 and the call returns); then, where record_all or e is
 * last_epoch, the objective sse + lam (sum_u n_u[u] (|p_u|^2 + b_u^2) + sum_i n_i[i] (...)),
 * the sse as sgdmf_sse over the stored ratings (users, items, values), is written to
 * history[(*n_history)++], and with tol > 0 the epochs stop (*status = 1) once it falls by
 * at most tol times the previous one. Returns the number of epochs run. */
ML_EXPORT int64_t sgdmf_fit(int64_t n_ratings, int64_t k, int64_t n_users, int64_t n_items,
                            int mode, int64_t n_epochs, const struct sgdmf_rating *records,
                            const struct sgdmf_rating *records_um, const int64_t *indptr,
                            const int64_t *orders, const int64_t *swaps,
                            struct sgdmf_rating *visit, const int32_t *users,
                            const int32_t *items, const double *values, const double *n_u,
                            const double *n_i, double *P, double *Q, double *bu, double *bi,
                            double mu, double lr, double lam, int biases, int record_all,
                            int64_t last_epoch, double tol, double *history,
                            int64_t *n_history, int64_t *status) {
    *status = 0;
    for (int64_t e = 0; e < n_epochs; ++e) {
        const struct sgdmf_rating *seq = records;
        if (mode == 1) {
            const int64_t *perm = orders + e * n_ratings;
            for (int64_t p = 0; p < n_ratings; ++p) visit[p] = records[perm[p]];
            seq = visit;
        } else if (mode == 2) {
            sgdmf_user_records(n_users, orders + e * n_users, indptr, records_um,
                               swaps + e * n_ratings, visit);
            seq = visit;
        }
        sgdmf_epoch(n_ratings, k, seq, P, Q, bu, bi, mu, lr, lam, biases);
        if (!all_finite(P, n_users * k) || !all_finite(Q, n_items * k)) {
            *status = 2;
            return e + 1;
        }
        if (!(record_all || e == last_epoch)) continue;
        double rss = sgdmf_sse(n_ratings, k, users, items, values, P, Q, bu, bi, mu);
        double pen = weighted_norms(n_users, k, P, bu, n_u) + weighted_norms(n_items, k, Q, bi, n_i);
        double obj = rss + lam * pen;
        int64_t h = (*n_history)++;
        history[h] = obj;
        if (tol > 0.0 && h > 0 && history[h - 1] - obj <= tol * history[h - 1]) {
            *status = 1;
            return e + 1;
        }
    }
    return n_epochs;
}
