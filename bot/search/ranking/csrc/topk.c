/* The pruned top-k traversal: block-max pruning over the index's own arrays (postings
 * doc ids, saturations, idf, per-term and per-block bounds), block at a time.
 *
 * Built by the project's own install (setup.py, an optional extension: without a compiler the
 * install still succeeds and queries take the numpy traversal, bot/search/ranking/pruning.py). Loaded
 * through bot/search/ranking/kernel.py, which checks the arrays' types; this file checks every size
 * and index it relies on, so a damaged index raises ValueError instead of reading astray.
 *
 * Why compiled: the numpy traversal pays a fixed ~0.5 ms of vectorised calls per query, about
 * all of bm25s's query time at 100k papers. Here a query costs one pass over its terms' block
 * bounds and the blocks it scores. Why C rather than numba: a few kilobytes of machine code
 * where numba adds ~50 MB of private memory to every bot process.
 *
 * How: every block of 32 documents gets the query's bound there (block_bounds). Rounds score
 * the best-bounded blocks first (about `seeds`, then 4x more per round, found from a count of
 * blocks per bound level) so the k-th best score, the threshold, is high early; then one sweep
 * in id order scores the blocks whose bound still reaches it. Inside a block each term's
 * postings are found from a guess of where the block starts in them (ids are spread evenly),
 * and a term whose stored block maximum is 0 is absent there (no probe at all): each probe is
 * a likely cache miss, the main cost left.
 *
 * Exactness, as the numpy path: a document's score is summed term by term in query order from
 * 0.0 with the exhaustive path's float64 operations ((sat * idf) * weight), so it is the same
 * to the bit (setup.py forbids contracting them into fused multiply-adds); only bounds (with a
 * relative slack far above float64 rounding) decide what to skip; equal scores keep corpus
 * order (the top k is a heap ordered by score, then id).
 */
#include "common.h"

/* Bound levels: blocks are counted per level once, so each round's floor (the bound that
 * takes about the next `batch` blocks) is found without sorting the blocks. */
#define LEVELS 256

typedef struct {
    /* the index */
    const int32_t *doc_ids;
    const double *sat;
    const uint8_t *maxima; /* n_rows x n_blocks */
    int64_t n_blocks;
    int shift;
    /* the query: one entry per term occurrence, in query order */
    int64_t n_terms;
    int64_t *starts, *ends, *cur, *rows;
    double *idf, *weights, *unit;
    double *acc; /* one block's scores */
    const uint8_t *allowed;
    int64_t n_allowed; /* -1: no mask */
    /* the top k: a heap whose root is the worst kept entry */
    int32_t *ids;
    double *scores;
    int64_t cap, size;
    int64_t scored; /* blocks scored, for tests */
    int damaged;    /* a doc id out of order or out of range */
} Run;

/* First position in [lo, hi) holding target or more: gallop, then halve (a cursor mostly
 * moves a little, sometimes jumps far). */
static int64_t next_geq(const int32_t *doc_ids, int64_t lo, int64_t hi, int64_t target) {
    if (lo >= hi || doc_ids[lo] >= target)
        return lo;
    int64_t step = 1;
    while (lo + step < hi && doc_ids[lo + step] < target) {
        lo += step;
        step *= 2;
    }
    return halve(doc_ids, lo + 1, lo + step < hi ? lo + step : hi, target);
}

/* next_geq from a guessed position: a few probes near the answer instead of a gallop across
 * the list, each a cache miss. */
static int64_t seek(const int32_t *doc_ids, int64_t lo, int64_t hi, int64_t target, int64_t guess) {
    if (guess <= lo)
        return next_geq(doc_ids, lo, hi, target);
    if (guess > hi - 1)
        guess = hi - 1;
    if (doc_ids[guess] < target)
        return next_geq(doc_ids, guess, hi, target);
    int64_t top = guess; /* doc_ids[top] >= target: the answer is in [lo, top] */
    int64_t step = 1;
    while (top - step >= lo && doc_ids[top - step] >= target) {
        top -= step;
        step *= 2;
    }
    return halve(doc_ids, top - step > lo ? top - step : lo, top, target);
}

/* Entry a ranks below entry b: a lower score, or the same score and a later document. */
static inline int worse(const Run *r, int64_t a, int64_t b) {
    return r->scores[a] < r->scores[b] || (r->scores[a] == r->scores[b] && r->ids[a] > r->ids[b]);
}

static inline void swap(Run *r, int64_t a, int64_t b) {
    int32_t id = r->ids[a];
    double score = r->scores[a];
    r->ids[a] = r->ids[b];
    r->scores[a] = r->scores[b];
    r->ids[b] = id;
    r->scores[b] = score;
}

static void sift_down(Run *r, int64_t size, int64_t at) {
    for (;;) {
        int64_t child = 2 * at + 1;
        if (child >= size)
            return;
        if (child + 1 < size && worse(r, child + 1, child))
            child += 1;
        if (!worse(r, child, at))
            return;
        swap(r, at, child);
        at = child;
    }
}

/* Keep (doc, score) if the top k has room or it beats the worst kept entry (equal scores: the
 * earlier document wins). */
static void offer(Run *r, int32_t doc, double score) {
    if (r->size < r->cap) {
        int64_t at = r->size++;
        r->ids[at] = doc;
        r->scores[at] = score;
        while (at > 0) {
            int64_t parent = (at - 1) >> 1;
            if (!worse(r, at, parent))
                return;
            swap(r, at, parent);
            at = parent;
        }
        return;
    }
    if (score > r->scores[0] || (score == r->scores[0] && doc < r->ids[0])) {
        r->ids[0] = doc;
        r->scores[0] = score;
        sift_down(r, r->size, 0);
    }
}

/* Every block's bound of the query's score there: stored rows times their unit, and for the
 * short lists (no stored row) the largest contribution of their postings in the block. */
static void block_bounds(Run *r, double *bounds, double scale) {
    for (int64_t i = 0; i < r->n_terms; i++) {
        if (r->rows[i] >= 0) {
            const uint8_t *row = r->maxima + r->rows[i] * r->n_blocks;
            double unit = r->unit[i];
            for (int64_t b = 0; b < r->n_blocks; b++)
                bounds[b] += row[b] * unit;
            continue;
        }
        int64_t block = -1;
        double best = 0.0;
        for (int64_t p = r->starts[i]; p < r->ends[i]; p++) {
            int64_t here = (int64_t)r->doc_ids[p] >> r->shift;
            if (here != block) {
                if (here < 0 || here >= r->n_blocks) {
                    r->damaged = 1;
                    return;
                }
                if (block >= 0)
                    bounds[block] += best * scale;
                block = here;
                best = 0.0;
            }
            double contribution = r->sat[p] * r->idf[i] * r->weights[i];
            if (contribution > best)
                best = contribution;
        }
        if (block >= 0)
            bounds[block] += best * scale;
    }
}

/* Score one block exactly into acc (each term's contribution added in query order from 0.0,
 * as the exhaustive path does), then offer its documents to the top k. Cursors move past the
 * block (blocks come in ascending order between resets). */
static void score_block(Run *r, int64_t block) {
    int64_t width = (int64_t)1 << r->shift;
    int64_t lo = block * width, hi = lo + width, span = r->n_blocks * width;
    double *acc = r->acc;
    memset(acc, 0, (size_t)width * sizeof(double));
    r->scored++;
    for (int64_t i = 0; i < r->n_terms; i++) {
        if (r->rows[i] >= 0 && r->maxima[r->rows[i] * r->n_blocks + block] == 0)
            continue; /* absent from this block: no probe */
        int64_t p = r->cur[i], end = r->ends[i];
        if (p < end && r->doc_ids[p] < lo) {
            int64_t guess = r->starts[i] + (end - r->starts[i]) * lo / span;
            p = seek(r->doc_ids, p, end, lo, guess);
        }
        double idf = r->idf[i], weight = r->weights[i];
        for (; p < end && r->doc_ids[p] < hi; p++) {
            uint64_t d = (uint64_t)((int64_t)r->doc_ids[p] - lo);
            if (d >= (uint64_t)width) {
                r->damaged = 1; /* postings out of order */
                return;
            }
            acc[d] += r->sat[p] * idf * weight;
        }
        r->cur[i] = p;
    }
    int full = r->size == r->cap;
    for (int64_t d = 0; d < width; d++) {
        double score = acc[d];
        if (score <= 0.0 || (full && score < r->scores[0]))
            continue;
        if (r->n_allowed >= 0 && (lo + d >= r->n_allowed || !r->allowed[lo + d]))
            continue;
        offer(r, (int32_t)(lo + d), score);
        full = r->size == r->cap;
    }
}

/* The traversal; 0, or -1 when out of memory. The top k is left in the heap. */
static int traverse(Run *r, int64_t seeds, double slack) {
    double *bounds = calloc((size_t)r->n_blocks, sizeof(double));
    uint8_t *done = calloc((size_t)r->n_blocks, 1);
    if (bounds == NULL || done == NULL) {
        free(bounds);
        free(done);
        return -1;
    }
    block_bounds(r, bounds, 1.0 + slack);
    double top = 0.0;
    for (int64_t b = 0; b < r->n_blocks; b++)
        if (bounds[b] > top)
            top = bounds[b];
    if (r->damaged || top <= 0.0)
        goto end;
    /* Blocks by bound in LEVELS buckets: how high a floor takes about n blocks, in one pass. */
    double per_level = LEVELS / top;
    int64_t above[LEVELS + 2] = {0}; /* above[j]: blocks in levels >= j */
    for (int64_t b = 0; b < r->n_blocks; b++)
        if (bounds[b] > 0.0) {
            int64_t level = (int64_t)(bounds[b] * per_level);
            above[level > LEVELS + 1 ? LEVELS + 1 : level] += 1;
        }
    for (int j = LEVELS; j >= 0; j--)
        above[j] += above[j + 1];
    int64_t taken = 0, batch = seeds < 1 ? 1 : seeds, level = LEVELS + 1;
    while (level > 0) {
        /* A round: the blocks of the next levels down, about `batch` of them, in id order. */
        while (level > 0 && above[level] - taken < batch)
            level--;
        double floor = level > 0 ? level / per_level : 0.0;
        memcpy(r->cur, r->starts, (size_t)r->n_terms * sizeof(int64_t));
        for (int64_t b = 0; b < r->n_blocks; b++) {
            if (done[b] || bounds[b] < floor || bounds[b] <= 0.0)
                continue;
            done[b] = 1;
            taken++;
            if (r->size == r->cap && bounds[b] < r->scores[0])
                continue; /* nothing here can reach the k-th best score */
            score_block(r, b);
            if (r->damaged)
                goto end;
        }
        if (batch < r->n_blocks)
            batch *= 4;
        if (r->size < r->cap)
            continue;
        /* Blocks left whose bound reaches the threshold: few, then one sweep in id order. */
        int64_t at = (int64_t)(r->scores[0] * per_level);
        if (above[at > LEVELS ? LEVELS : at] - taken <= batch)
            break;
    }
    memcpy(r->cur, r->starts, (size_t)r->n_terms * sizeof(int64_t));
    for (int64_t b = 0; b < r->n_blocks; b++) {
        if (done[b] || bounds[b] <= 0.0 || (r->size == r->cap && bounds[b] < r->scores[0]))
            continue;
        score_block(r, b);
        if (r->damaged)
            break;
    }
end:
    free(bounds);
    free(done);
    return 0;
}


enum { DOC_IDS, SAT, INDPTR, IDF, TERM_MAX, ROWS, MAXIMA, TIDS, WEIGHTS, ALLOWED, OUT_IDS,
       OUT_SCORES, N_BUFFERS };

const char kernel_top_k_doc[] =
"top_k(doc_ids, sat, indptr, idf, term_max, rows, maxima, n_blocks, shift, tids, weights,\n"
"      k, seeds, allowed, out_ids, out_scores, slack, quant) -> (n, blocks_scored)\n\n"
"The k best documents for the query (tids, weights: int64 and float64, one entry per term\n"
"occurrence in query order), best first, equal scores in corpus order, written into out_ids\n"
"(int32) and out_scores (float64); n of them. The index arrays: doc_ids int32, sat float64,\n"
"indptr int64, idf float64, term_max float64, rows int32, maxima uint8 (rows x n_blocks).\n"
"allowed: None, or a bool per document (others are left out).";

PyObject *kernel_top_k(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[N_BUFFERS];
    Py_ssize_t n_blocks, k, seeds;
    int shift;
    double slack, quant;
    if (!PyArg_ParseTuple(args, "OOOOOOOniOOnnOOOdd", &obj[DOC_IDS], &obj[SAT], &obj[INDPTR],
                          &obj[IDF], &obj[TERM_MAX], &obj[ROWS], &obj[MAXIMA], &n_blocks, &shift,
                          &obj[TIDS], &obj[WEIGHTS], &k, &seeds, &obj[ALLOWED], &obj[OUT_IDS],
                          &obj[OUT_SCORES], &slack, &quant))
        return NULL;
    static const struct {
        Py_ssize_t itemsize;
        char kind;
        int writable;
        const char *name;
    } spec[N_BUFFERS] = {
        {4, 'i', 0, "doc_ids"},  {8, 'f', 0, "sat"},   {8, 'i', 0, "indptr"},
        {8, 'f', 0, "idf"},      {8, 'f', 0, "term_max"}, {4, 'i', 0, "rows"},
        {1, 'u', 0, "maxima"},   {8, 'i', 0, "tids"},  {8, 'f', 0, "weights"},
        {1, 'b', 0, "allowed"},  {4, 'i', 1, "out_ids"}, {8, 'f', 1, "out_scores"},
    };
    Py_buffer view[N_BUFFERS];
    Py_ssize_t len[N_BUFFERS];
    PyObject *result = NULL;
    Run r;
    memset(&r, 0, sizeof r);
    memset(view, 0, sizeof view);
    for (int j = 0; j < N_BUFFERS; j++) {
        if (j == ALLOWED && obj[j] == Py_None) {
            len[j] = -1;
            continue;
        }
        if (take(obj[j], &view[j], spec[j].itemsize, spec[j].kind, spec[j].writable,
                 spec[j].name) < 0)
            goto release;
        len[j] = view[j].len / spec[j].itemsize;
    }
    /* Every size and index the traversal relies on. */
    const char *bad = NULL;
    Py_ssize_t vocab = len[INDPTR] - 1;
    if (shift < 0 || shift > 20)
        bad = "shift out of range";
    else if (n_blocks < 1 || len[MAXIMA] % n_blocks != 0)
        bad = "maxima is not a whole number of rows of n_blocks";
    else if (vocab < 0 || len[IDF] < vocab || len[TERM_MAX] < vocab || len[ROWS] < vocab)
        bad = "indptr, idf, term_max and rows disagree on the vocabulary";
    else if (len[WEIGHTS] != len[TIDS])
        bad = "one weight per term is needed";
    else if (k < 0 || len[OUT_IDS] < k || len[OUT_SCORES] < k)
        bad = "out_ids and out_scores need room for k entries";
    if (bad != NULL) {
        PyErr_SetString(PyExc_ValueError, bad);
        goto release;
    }
    const int64_t *indptr = view[INDPTR].buf, *tids = view[TIDS].buf;
    const int32_t *rows = view[ROWS].buf;
    const double *idf = view[IDF].buf, *term_max = view[TERM_MAX].buf, *weights = view[WEIGHTS].buf;
    int64_t n_terms = len[TIDS], n_rows = len[MAXIMA] / n_blocks, total = 0;
    r.n_terms = n_terms;
    r.doc_ids = view[DOC_IDS].buf;
    r.sat = view[SAT].buf;
    r.maxima = view[MAXIMA].buf;
    r.n_blocks = n_blocks;
    r.shift = shift;
    r.allowed = len[ALLOWED] >= 0 ? view[ALLOWED].buf : NULL;
    r.n_allowed = len[ALLOWED];
    r.ids = view[OUT_IDS].buf; /* the heap lives in the output until it is sorted */
    r.scores = view[OUT_SCORES].buf;
    size_t n = (size_t)(n_terms > 0 ? n_terms : 1);
    int64_t *ints = malloc(4 * n * sizeof(int64_t));
    double *reals = malloc((3 * n + ((size_t)1 << shift)) * sizeof(double));
    if (ints == NULL || reals == NULL) {
        free(ints);
        free(reals);
        PyErr_NoMemory();
        goto release;
    }
    r.starts = ints, r.ends = ints + n, r.cur = ints + 2 * n, r.rows = ints + 3 * n;
    r.idf = reals, r.weights = reals + n, r.unit = reals + 2 * n, r.acc = reals + 3 * n;
    for (int64_t i = 0; i < n_terms && bad == NULL; i++) {
        int64_t t = tids[i];
        if (t < 0 || t >= vocab) {
            bad = "a term id is out of range";
            break;
        }
        r.starts[i] = indptr[t];
        r.ends[i] = indptr[t + 1];
        r.rows[i] = rows[t];
        r.idf[i] = idf[t];
        r.weights[i] = weights[i];
        r.unit[i] = idf[t] * weights[i] * term_max[t] * ((1.0 + slack) / quant);
        if (r.starts[i] < 0 || r.starts[i] > r.ends[i] || r.ends[i] > len[DOC_IDS] ||
            r.ends[i] > len[SAT])
            bad = "indptr points outside the postings";
        else if (r.rows[i] < -1 || r.rows[i] >= n_rows)
            bad = "a block row is out of range";
        else if (!(weights[i] >= 0.0))
            bad = "weights must be 0 or more";
        total += r.ends[i] - r.starts[i];
    }
    int failed = 0;
    if (bad == NULL) {
        r.cap = k < total ? k : total;
        if (r.cap > 0) {
            Py_BEGIN_ALLOW_THREADS
            failed = traverse(&r, seeds, slack);
            /* Best first: pop the worst into the last free place. */
            for (int64_t size = r.size; size > 1;) {
                size--;
                swap(&r, 0, size);
                sift_down(&r, size, 0);
            }
            Py_END_ALLOW_THREADS
        }
    }
    free(ints);
    free(reals);
    if (bad != NULL)
        PyErr_SetString(PyExc_ValueError, bad);
    else if (failed)
        PyErr_NoMemory();
    else if (r.damaged)
        PyErr_SetString(PyExc_ValueError, "postings out of order or beyond the last block");
    else
        result = Py_BuildValue("(LL)", (long long)r.size, (long long)r.scored);
release:
    for (int j = 0; j < N_BUFFERS; j++)
        if (view[j].obj != NULL)
            PyBuffer_Release(&view[j]);
    return result;
}
