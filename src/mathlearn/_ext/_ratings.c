/* Both orientations of a ratings container (see mathlearn/recommender/_factor.py).
 *
 * N ratings (users[n], items[n], values[n]) in any order become their user-major CSR form
 * (rows ordered by user, then item; indptr_u, items_u, values_u) and their item-major form
 * (by item, then user; indptr_i, users_i, values_i), with the permutations perm_u and
 * perm_i: position p of the user-major (item-major) order holds rating perm_u[p]
 * (perm_i[p]) of the container. Three stable counting sorts, O(N + n_users + n_items):
 * by item (container order within an item), then that order by user (so items ascend
 * within a user), then the user-major order by item (users ascend within an item). Ties,
 * i.e. repeated (user, item) pairs, keep the container's order in both. A container already
 * in user-major order (ratings_user_major) is its own user-major form: then only the sort
 * by item runs, and perm_u, items_u, values_u and perm_i are not formed (passed as NULL).
 * User and item indices (users, items, items_u, users_i) are 32-bit, as Ratings stores them;
 * offsets and permutations, which count ratings, are 64-bit. */

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int ratings_abi_version(void) { return 5; }

/* indptr[0..m] from the keys' counts; cursor[0..m-1] = indptr[0..m-1] (the next free slot of
 * each key), returned through cursor. */
static void offsets(int64_t n, int64_t m, const int32_t *keys, int64_t *indptr,
                    int64_t *cursor) {
    for (int64_t j = 0; j <= m; ++j) indptr[j] = 0;
    for (int64_t t = 0; t < n; ++t) indptr[keys[t] + 1] += 1;
    for (int64_t j = 0; j < m; ++j) indptr[j + 1] += indptr[j];
    for (int64_t j = 0; j < m; ++j) cursor[j] = indptr[j];
}

/* 1 when the container is in user-major order (users ascending, items ascending within a
 * user, repeated pairs in any order), else 0. */
ML_EXPORT int64_t ratings_user_major(int64_t n, const int32_t *users, const int32_t *items) {
    for (int64_t t = 1; t < n; ++t)
        if (users[t] < users[t - 1] || (users[t] == users[t - 1] && items[t] < items[t - 1]))
            return 0;
    return 1;
}

/* cursor holds max(n_users, n_items) numbers; perm_u, items_u, values_u and perm_i NULL for
 * a container in user-major order. The item-major values go to values_i, or, where it is
 * NULL, rounded to single precision into values_i32 (the single-precision sweeps' copy). */
ML_EXPORT void ratings_orders(int64_t n, int64_t n_users, int64_t n_items, const int32_t *users,
                              const int32_t *items, const double *values, int64_t *indptr_u,
                              int64_t *perm_u, int32_t *items_u, int64_t *indptr_i,
                              int64_t *perm_i, int32_t *users_i, int64_t *cursor,
                              double *values_u, double *values_i, float *values_i32) {
    if (perm_u == NULL) {
        /* The container is the user-major order: one sort by item keeps users ascending. */
        offsets(n, n_users, users, indptr_u, cursor);
        offsets(n, n_items, items, indptr_i, cursor);
        for (int64_t t = 0; t < n; ++t) {
            int64_t p = cursor[items[t]]++;
            users_i[p] = users[t];
            if (values_i != NULL) {
                values_i[p] = values[t];
            } else {
                values_i32[p] = (float)values[t];
            }
        }
        return;
    }
    /* by item, container order within an item (perm_i serves as the first order) */
    offsets(n, n_items, items, indptr_i, cursor);
    for (int64_t t = 0; t < n; ++t) perm_i[cursor[items[t]]++] = t;
    /* that order by user: items ascend within a user */
    offsets(n, n_users, users, indptr_u, cursor);
    for (int64_t p = 0; p < n; ++p) {
        int64_t t = perm_i[p];
        perm_u[cursor[users[t]]++] = t;
    }
    /* the user-major order by item: users ascend within an item */
    for (int64_t j = 0; j < n_items; ++j) cursor[j] = indptr_i[j];
    for (int64_t p = 0; p < n; ++p) {
        int64_t t = perm_u[p];
        perm_i[cursor[items[t]]++] = t;
    }
    for (int64_t p = 0; p < n; ++p) {
        int64_t t = perm_u[p], s = perm_i[p];
        items_u[p] = items[t];
        values_u[p] = values[t];
        users_i[p] = users[s];
        if (values_i != NULL) {
            values_i[p] = values[s];
        } else {
            values_i32[p] = (float)values[s];
        }
    }
}
