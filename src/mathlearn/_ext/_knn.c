/* Pairwise similarities of neighbourhood collaborative filtering (see
 * mathlearn/recommender/_knn.py, similarity_matrix).
 *
 * The n rows of a sparse matrix (users or items) are compared over the columns both observe.
 * The row-major CSR form gives each row a's columns (indptr_r, cols_r; indices 32-bit,
 * offsets 64-bit) and deviations
 * d_ao (dev_r); the column-major form gives each column o's rows (indptr_c, rows_c, in
 * ascending order) and the same deviations in that order (dev_c). For every row a, the
 * pairs (a, b), b != a, with a co-observed column are accumulated in a dense scratch row
 * (Gustavson's order for the product of a sparse matrix with its transpose):
 *
 *     n_ab = |I_ab|,   num_ab = sum_{o in I_ab} d_ao d_bo,
 *     S_ab = sum_{o in I_ab} d_ao^2,   S_ba = sum_{o in I_ab} d_bo^2,
 *
 * each sum in ascending order of the column o, so that num_ab, S_ab S_ba and n_ab are the
 * same numbers, bit for bit, when the pair is reached from row b. The similarity
 *
 *     kappa_ab = num_ab / sqrt(S_ab S_ba)       (exactly sign(num_ab) when n_ab = 1),
 *
 * times n_ab / (n_ab + shrinkage) where shrinkage > 0, is stored for the pairs with a
 * positive denominator (0 / 0 is undefined: no such entry), in row-major order with
 * ascending columns. Time O(sum_o m_o^2) (m_o rows in column o), plus a sort or a scan
 * of each row's partners; scratch O(n). */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int knn_abi_version(void) { return 2; }

/* counts[a] = the number of rows b != a that share a column with row a; returns their sum.
 * mark holds n numbers (scratch). */
ML_EXPORT int64_t knn_pair_counts(int64_t n, const int64_t *indptr_r, const int32_t *cols_r,
                                  const int64_t *indptr_c, const int32_t *rows_c,
                                  int64_t *counts, int64_t *mark) {
    int64_t total = 0;
    for (int64_t b = 0; b < n; ++b) mark[b] = -1;
    for (int64_t a = 0; a < n; ++a) {
        int64_t count = 0;
        mark[a] = a;
        for (int64_t e = indptr_r[a]; e < indptr_r[a + 1]; ++e) {
            int64_t o = cols_r[e];
            for (int64_t q = indptr_c[o]; q < indptr_c[o + 1]; ++q) {
                int64_t b = rows_c[q];
                if (mark[b] != a) {
                    mark[b] = a;
                    ++count;
                }
            }
        }
        counts[a] = count;
        total += count;
    }
    return total;
}

static int cmp_index(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The similarities (see the file's comment) into indptr (n + 1), indices and data (room
 * for the total of knn_pair_counts); returns the number stored. mark (n numbers), partners
 * (the largest of knn_pair_counts's counts) and acc (4 n doubles) are scratch. */
ML_EXPORT int64_t knn_similarities(int64_t n, const int64_t *indptr_r, const int32_t *cols_r,
                                   const double *dev_r, const int64_t *indptr_c,
                                   const int32_t *rows_c, const double *dev_c,
                                   double shrinkage, int64_t *indptr,
                                   int64_t *indices, double *data, int64_t *mark,
                                   int64_t *partners, double *acc) {
    int64_t stored = 0;
    for (int64_t b = 0; b < n; ++b) mark[b] = -1;
    indptr[0] = 0;
    for (int64_t a = 0; a < n; ++a) {
        int64_t found = 0;
        for (int64_t e = indptr_r[a]; e < indptr_r[a + 1]; ++e) {
            int64_t o = cols_r[e];
            double da = dev_r[e], da2 = da * da;
            for (int64_t q = indptr_c[o]; q < indptr_c[o + 1]; ++q) {
                int64_t b = rows_c[q];
                if (b == a) continue;
                double *s = acc + 4 * b, db = dev_c[q];
                if (mark[b] != a) {
                    mark[b] = a;
                    partners[found++] = b;
                    s[0] = 0.0;
                    s[1] = 0.0;
                    s[2] = 0.0;
                    s[3] = 0.0;
                }
                s[0] += 1.0;
                s[1] += da * db;
                s[2] += da2;
                s[3] += db * db;
            }
        }
        /* the partners in ascending order: a scan of the marks when they are many */
        if (found > n / 8) {
            int64_t f = 0;
            for (int64_t b = 0; b < n && f < found; ++b)
                if (mark[b] == a) partners[f++] = b;
        } else {
            qsort(partners, (size_t)found, sizeof(int64_t), cmp_index);
        }
        for (int64_t f = 0; f < found; ++f) {
            int64_t b = partners[f];
            const double *s = acc + 4 * b;
            double den = sqrt(s[2] * s[3]);
            if (!(den > 0.0)) continue;
            double k = (s[0] == 1.0) ? (s[1] > 0.0) - (s[1] < 0.0) : s[1] / den;
            if (shrinkage > 0.0) k *= s[0] / (s[0] + shrinkage);
            indices[stored] = b;
            data[stored++] = k;
        }
        indptr[a + 1] = stored;
    }
    return stored;
}
