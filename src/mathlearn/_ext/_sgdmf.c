/* Plain (one rating at a time) SGD for biased matrix factorisation (see
 * mathlearn/recommender/_sgd.py): the epochs with their visiting orders, divergence checks
 * and objectives (sgdmf_prepare, sgdmf_fit), and the "users" order alone for the
 * mini-batch route (sgdmf_user_order).
 *
 * An epoch takes the ratings n = 0 .. n_ratings - 1 in its visiting order (one pass writes
 * the 16-byte records in that order, after which the kernel reads them in sequence), with
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

ML_EXPORT int sgdmf_abi_version(void) { return 7; }

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

/* An index in [0, m) (1 <= m < 2^53) from a uniform draw x in [0, 1) (NumPy's random(),
 * a multiple of 2^-53): the rounded product x m, truncated. As x <= 1 - 2^-53 the rounded
 * product stays below m; the clamp to m - 1 is a guard. Each index's probability is 1/m to
 * within a few times 2^-53. The Python route computes the same product and truncation. */
static int64_t below(double x, int64_t m) {
    int64_t b = (int64_t)(x * (double)m);
    return b < m ? b : m - 1;
}

/* Fisher-Yates on the n entries of o: for a = n - 1 down to 1, o[a] and o[below(d[a],
 * a + 1)] are exchanged (d[0] is not read). With o the identity, the result is a uniformly
 * random permutation. */
static void shuffle_indices(int64_t n, int64_t *o, const double *d) {
    for (int64_t a = n - 1; a > 0; --a) {
        int64_t b = below(d[a], a + 1), tmp = o[a];
        o[a] = o[b];
        o[b] = tmp;
    }
}

static void shuffle_records(int64_t n, struct sgdmf_rating *o, const double *d) {
    for (int64_t a = n - 1; a > 0; --a) {
        int64_t b = below(d[a], a + 1);
        struct sgdmf_rating tmp = o[a];
        o[a] = o[b];
        o[b] = tmp;
    }
}

/* The visiting order of shuffle="users" from one epoch's n_users + N uniform draws d: the
 * users 0 .. n_users - 1 shuffled by Fisher-Yates with d[0 .. n_users) (into perm), then in
 * that order each user's segment [indptr[u], indptr[u + 1]) of src (the ratings' indices in
 * user-major order), copied and shuffled by Fisher-Yates with the draws
 * d[n_users + indptr[u] ..]. The Python loop (_sgd.py, _VisitOrder) makes the same
 * exchanges. */
ML_EXPORT void sgdmf_user_order(int64_t n_users, const double *d, const int64_t *indptr,
                                const int64_t *src, int64_t *perm, int64_t *out) {
    for (int64_t u = 0; u < n_users; ++u) perm[u] = u;
    shuffle_indices(n_users, perm, d);
    int64_t c = 0;
    for (int64_t s = 0; s < n_users; ++s) {
        int64_t u = perm[s], lo = indptr[u], n = indptr[u + 1] - lo;
        for (int64_t a = 0; a < n; ++a) out[c + a] = src[lo + a];
        shuffle_indices(n, out + c, d + n_users + lo);
        c += n;
    }
}

/* The sum of squared residuals sum_n e_n^2, e_n = r - mu - bu[u] - bi[i] - p . q (the
 * epoch's residual, its dot product in the same fixed order), added sequentially over the
 * records in the order given (bu, bi may be all zeros). */
static double records_sse(int64_t n_ratings, int64_t k, const struct sgdmf_rating *rec,
                          const double *P, const double *Q, const double *bu, const double *bi,
                          double mu) {
    double total = 0.0;
    for (int64_t n = 0; n < n_ratings; ++n) {
        int64_t u = rec[n].u, i = rec[n].i;
        double dot = dot_fixed(P + u * k, Q + i * k, k);
        double e = rec[n].r - mu - bu[u] - bi[i] - dot;
        total += e * e;
    }
    return total;
}

static void sgdmf_epoch(int64_t n_ratings, int64_t k, const struct sgdmf_rating *ratings,
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

/* The caller's workspace for sgdmf_prepare and sgdmf_fit, in 8-byte words (one int64
 * array): state (2: [0] how the epochs ended, 0 running, 1 converged, 2 diverged; [1] the
 * objectives recorded), history (max_iter doubles), the records (2 words each, N), the
 * epoch's visiting sequence (N records), indptr (n_users + 1), a permutation of the users
 * (n_users), the rating counts n_u and n_i (doubles). The Python side reads state and
 * history, the first 2 + max_iter words. */
struct work {
    int64_t *state;
    double *history;
    struct sgdmf_rating *records, *visit;
    int64_t *indptr, *perm;
    double *n_u, *n_i;
};

static struct work layout(int64_t *w, int64_t n_ratings, int64_t n_users, int64_t max_iter) {
    struct work s;
    s.state = w;
    s.history = (double *)(w + 2);
    s.records = (struct sgdmf_rating *)(w + 2 + max_iter);
    s.visit = s.records + n_ratings;
    s.indptr = (int64_t *)(s.visit + n_ratings);
    s.perm = s.indptr + n_users + 1;
    s.n_u = (double *)(s.perm + n_users);
    s.n_i = s.n_u + n_users;
    return s;
}

ML_EXPORT int64_t sgdmf_work_words(int64_t n_ratings, int64_t n_users, int64_t n_items,
                                   int64_t max_iter) {
    return 2 + max_iter + 4 * n_ratings + 3 * n_users + 1 + n_items;
}

/* Fills the workspace before the first epoch: the state zeroed, the rating counts n_u and
 * n_i, and the ratings as records, in stored order (mode 0, 1) or in user-major order, each
 * user's ratings in stored order (mode 2, shuffle="users": a counting sort by user, with
 * the users' segments in indptr). */
ML_EXPORT void sgdmf_prepare(int64_t n_ratings, int64_t n_users, int64_t n_items,
                             int64_t max_iter, int mode, const int32_t *users,
                             const int32_t *items, const double *values, int64_t *w) {
    struct work s = layout(w, n_ratings, n_users, max_iter);
    s.state[0] = s.state[1] = 0;
    for (int64_t u = 0; u <= n_users; ++u) s.indptr[u] = 0;
    for (int64_t i = 0; i < n_items; ++i) s.n_i[i] = 0.0;
    for (int64_t n = 0; n < n_ratings; ++n) {
        s.indptr[users[n] + 1] += 1;
        s.n_i[items[n]] += 1.0;
    }
    for (int64_t u = 0; u < n_users; ++u) {
        s.n_u[u] = (double)s.indptr[u + 1];
        s.indptr[u + 1] += s.indptr[u];
    }
    if (mode != 2) {
        for (int64_t n = 0; n < n_ratings; ++n) {
            s.records[n].u = users[n];
            s.records[n].i = items[n];
            s.records[n].r = values[n];
        }
        return;
    }
    for (int64_t u = 0; u < n_users; ++u) s.perm[u] = s.indptr[u]; /* each segment's cursor */
    for (int64_t n = 0; n < n_ratings; ++n) {
        struct sgdmf_rating *rec = s.records + s.perm[users[n]]++;
        rec->u = users[n];
        rec->i = items[n];
        rec->r = values[n];
    }
}

/* Epochs of plain SGD with their visiting orders, divergence checks and objectives, in one
 * call (mathlearn/recommender/_sgd.py, SGDMatrixFactorization.fit, which draws the uniform
 * numbers d and calls sgdmf_prepare first). Epoch e visits: mode 0, the records in stored
 * order; mode 1 (shuffle="full"), the records shuffled by Fisher-Yates with the N draws
 * d + e N; mode 2 (shuffle="users"), the users shuffled with the draws d + e (n_users + N),
 * each user's records in turn, shuffled with the draws after those (as sgdmf_user_order).
 * After each epoch: P and Q must be finite (else state[0] = 2 and the call returns); then,
 * where record_all or e is last_epoch, the objective sse + lam (sum_u n_u[u] (|p_u|^2 +
 * b_u^2) + sum_i n_i[i] (...)), the sse over the records in their prepared order, is
 * written to history[state[1]++], and with tol > 0 the epochs stop (state[0] = 1) once it
 * falls by at most tol times the previous one. Returns the number of epochs run. */
ML_EXPORT int64_t sgdmf_fit(int64_t n_ratings, int64_t k, int64_t n_users, int64_t n_items,
                            int64_t max_iter, int mode, int64_t n_epochs, const double *d,
                            int64_t *w, double *P, double *Q, double *bu, double *bi,
                            double mu, double lr, double lam, int biases, int record_all,
                            int64_t last_epoch, double tol) {
    struct work s = layout(w, n_ratings, n_users, max_iter);
    for (int64_t e = 0; e < n_epochs; ++e) {
        const struct sgdmf_rating *seq = s.records;
        if (mode == 1) {
            for (int64_t n = 0; n < n_ratings; ++n) s.visit[n] = s.records[n];
            shuffle_records(n_ratings, s.visit, d + e * n_ratings);
            seq = s.visit;
        } else if (mode == 2) {
            const double *de = d + e * (n_users + n_ratings);
            for (int64_t u = 0; u < n_users; ++u) s.perm[u] = u;
            shuffle_indices(n_users, s.perm, de);
            int64_t c = 0;
            for (int64_t t = 0; t < n_users; ++t) {
                int64_t u = s.perm[t], lo = s.indptr[u], n = s.indptr[u + 1] - lo;
                for (int64_t a = 0; a < n; ++a) s.visit[c + a] = s.records[lo + a];
                shuffle_records(n, s.visit + c, de + n_users + lo);
                c += n;
            }
            seq = s.visit;
        }
        sgdmf_epoch(n_ratings, k, seq, P, Q, bu, bi, mu, lr, lam, biases);
        if (!all_finite(P, n_users * k) || !all_finite(Q, n_items * k)) {
            s.state[0] = 2;
            return e + 1;
        }
        if (!(record_all || e == last_epoch)) continue;
        double rss = records_sse(n_ratings, k, s.records, P, Q, bu, bi, mu);
        double pen = weighted_norms(n_users, k, P, bu, s.n_u) +
                     weighted_norms(n_items, k, Q, bi, s.n_i);
        double obj = rss + lam * pen;
        int64_t h = s.state[1]++;
        s.history[h] = obj;
        if (tol > 0.0 && h > 0 && s.history[h - 1] - obj <= tol * s.history[h - 1]) {
            s.state[0] = 1;
            return e + 1;
        }
    }
    return n_epochs;
}
