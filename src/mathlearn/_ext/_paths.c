/* Shortest paths from many sources on a weighted undirected graph: Dijkstra's algorithm with
 * an indexed binary heap, the compiled route of mathlearn/utils/graph.py
 * (geodesic_distances), which Isomap's geodesics take.
 *
 * The graph comes as two CSR adjacencies (w >= 0, 32-bit column indices): G, and the
 * reverse edges (v, u) of G's entries G_uv that G does not already hold at the same or a
 * smaller length (paths_reverse_edges; for a k-nearest-neighbour graph, whose mutual
 * neighbours are stored both ways, about half of them). A settled vertex u relaxes its
 * edges in both, so every stored edge is usable either way. Where a pair is relaxed more
 * than once, the least candidate is fl(d(u) + min w): addition is monotone, so that is
 * the sum with the smaller weight, as a symmetrised graph with one (the least) weight per
 * pair would give. For each source s in [lo, hi), row s - lo of `out`
 * receives d(s, v) for every vertex v (infinity where no path reaches v). Dijkstra settles
 * the vertices in order of distance; a vertex's tentative distance is lowered through an
 * edge (u, v) to d(u) + w(u, v) when that is smaller, and each vertex sits in the heap at
 * most once, its position kept in pos (-1: never reached, -2: settled), so a lowered key is
 * sifted up in place: O((n + m) log n) per source for n vertices and m edges.
 *
 * Rounding: every distance is a sum d(u) + w(u, v) formed once, with d(u) final; the result
 * for v is the least such sum over its settled neighbours, which is the least solution of
 * d(v) = min_u fl(d(u) + w(u, v)), d(s) = 0. SciPy's Dijkstra (scipy.sparse.csgraph)
 * computes the same least solution (the same sums, another heap), so both give the same
 * numbers.
 *
 * Sources are independent: the caller splits them over threads (ctypes releases the
 * interpreter lock), each with its own scratch (heap and pos, n entries each).
 *
 * Plain C99 without the Python C API; loaded with ctypes (mathlearn/_ext/__init__.py). */

#include <math.h>
#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int paths_abi_version(void) { return 3; }

/* A heap entry: the vertex's tentative distance, kept beside it so that the sifts compare
 * entries of the heap array itself rather than reading the distances of their vertices. */
typedef struct {
    double key;
    int64_t v;
} Entry;

/* Move entry e, placed at heap position i with its key lowered or newly inserted, up to its
 * place. */
static void sift_up(Entry *heap, int64_t *pos, Entry e, int64_t i) {
    while (i > 0) {
        const int64_t parent = (i - 1) >> 1;
        if (heap[parent].key <= e.key) break;
        heap[i] = heap[parent];
        pos[heap[i].v] = i;
        i = parent;
    }
    heap[i] = e;
    pos[e.v] = i;
}

/* Place entry e, taken from the end of the heap, at the root of a heap of `size` entries
 * and move it down to its place. */
static void sift_down(Entry *heap, int64_t *pos, Entry e, int64_t size) {
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= size) break;
        if (c + 1 < size && heap[c + 1].key < heap[c].key) c++;
        if (e.key <= heap[c].key) break;
        heap[i] = heap[c];
        pos[heap[i].v] = i;
        i = c;
    }
    heap[i] = e;
    pos[e.v] = i;
}

/* The reverse edges of G (n vertices; indptr, indices, weights) that G lacks: the edges
 * (v, u) for the entries G_uv, less those where G holds (u, v) at a length at most G_uv,
 * as a CSR adjacency (indptr_r with n + 1 offsets, indices_r and weights_r with room for
 * all of G's entries; rows hold their columns in ascending order). stamp (n) and least
 * (n) are scratch: stamp[v] = u marks the columns of row u of G, least[v] their smallest
 * length there. Returns the number of edges kept. */
ML_EXPORT int64_t paths_reverse_edges(int64_t n, const int64_t *indptr, const int32_t *indices,
                                      const double *weights, int64_t *indptr_r,
                                      int32_t *indices_r, double *weights_r, int32_t *stamp,
                                      double *least) {
    /* The transpose by counting: row v of the reverse holds the u with an entry G_uv, in
     * ascending order of u. */
    for (int64_t v = 0; v <= n; v++) indptr_r[v] = 0;
    for (int64_t e = 0; e < indptr[n]; e++) indptr_r[indices[e] + 1]++;
    for (int64_t v = 0; v < n; v++) indptr_r[v + 1] += indptr_r[v];
    for (int64_t u = 0; u < n; u++)
        for (int64_t e = indptr[u]; e < indptr[u + 1]; e++) {
            const int64_t at = indptr_r[indices[e]]++;
            indices_r[at] = (int32_t)u;
            weights_r[at] = weights[e];
        }
    for (int64_t v = n; v > 0; v--) indptr_r[v] = indptr_r[v - 1]; /* (each moved one on) */
    indptr_r[0] = 0;
    /* Drop, in place, the reverse edges that row u of G holds at the same or a smaller
     * length. */
    for (int64_t v = 0; v < n; v++) stamp[v] = -1;
    int64_t kept = 0, lo = 0;
    for (int64_t u = 0; u < n; u++) {
        for (int64_t e = indptr[u]; e < indptr[u + 1]; e++) {
            const int64_t v = indices[e];
            if (stamp[v] != u || weights[e] < least[v]) least[v] = weights[e];
            stamp[v] = (int32_t)u;
        }
        const int64_t hi = indptr_r[u + 1];
        indptr_r[u] = kept;
        for (int64_t p = lo; p < hi; p++) {
            const int64_t v = indices_r[p];
            if (stamp[v] == u && least[v] <= weights_r[p]) continue;
            indices_r[kept] = indices_r[p];
            weights_r[kept] = weights_r[p];
            kept++;
        }
        lo = hi;
    }
    indptr_r[n] = kept;
    return kept;
}

/* Lower the tentative distances of the neighbours of u (distance du) along the edges
 * [lo_e, hi_e) of one adjacency, inserting or sifting their heap entries; returns the heap's
 * new size. */
static int64_t relax(const int32_t *indices, const double *weights, int64_t lo_e, int64_t hi_e,
                     double du, double *dist, Entry *heap, int64_t *pos, int64_t size) {
    for (int64_t e = lo_e; e < hi_e; e++) {
        const int64_t v = indices[e];
        if (pos[v] == -2) continue;
        const double candidate = du + weights[e];
        if (candidate < dist[v]) {
            dist[v] = candidate;
            int64_t at = pos[v];
            if (at == -1) at = size++;
            Entry entry = {candidate, v};
            sift_up(heap, pos, entry, at);
        }
    }
    return size;
}

/* Rows lo .. hi - 1 of the n x n distance matrix into out ((hi - lo) x n, row-major), for
 * the graph G (indptr, indices, weights) and its reverse edges (indptr_t, indices_t,
 * weights_t, from paths_reverse_edges); heap and pos: scratch of 2 n and n 64-bit
 * entries. */
ML_EXPORT void paths_dijkstra(int64_t n, const int64_t *indptr, const int32_t *indices,
                              const double *weights, const int64_t *indptr_t,
                              const int32_t *indices_t, const double *weights_t, int64_t lo,
                              int64_t hi, double *out, int64_t *heap_scratch, int64_t *pos) {
    Entry *heap = (Entry *)heap_scratch;
    for (int64_t s = lo; s < hi; s++) {
        double *dist = out + (s - lo) * n;
        for (int64_t v = 0; v < n; v++) {
            dist[v] = INFINITY;
            pos[v] = -1;
        }
        dist[s] = 0.0;
        heap[0].key = 0.0;
        heap[0].v = s;
        pos[s] = 0;
        int64_t size = 1;
        while (size > 0) {
            const int64_t u = heap[0].v;
            pos[u] = -2;
            if (--size > 0) sift_down(heap, pos, heap[size], size);
            const double du = dist[u];
            size = relax(indices, weights, indptr[u], indptr[u + 1], du, dist, heap, pos, size);
            size = relax(indices_t, weights_t, indptr_t[u], indptr_t[u + 1], du, dist, heap, pos,
                         size);
        }
    }
}
