/* The word-order bonus's pair counts (bot/search/query/proximity.py): how often each of a few
 * papers holds one term right before another, from the terms' postings and positions. Per
 * paper: a binary search in each term's postings, the run of offsets found from a checkpoint
 * every `checkpoint` postings, then a merge of the two runs. numpy needs a dozen calls per
 * term for the same (proximity.occurrences); here it is a few microseconds per paper.
 */
#include "common.h"

/* Position of doc in doc_ids[lo:hi] (ascending), or -1. */
static int64_t find_doc(const int32_t *doc_ids, int64_t lo, int64_t hi, int64_t doc) {
    int64_t at = halve(doc_ids, lo, hi, doc);
    return at < hi && doc_ids[at] == doc ? at : -1;
}

static inline int64_t unsigned_at(const void *buf, Py_ssize_t itemsize, int64_t i) {
    return itemsize == 2 ? ((const uint16_t *)buf)[i] : ((const uint32_t *)buf)[i];
}

/* Where posting j (from the term's first) starts in the positions: the remembered start of
 * its checkpoint plus the tfs of the postings between. */
static int64_t run_start(const void *tfs, Py_ssize_t tf_size, int64_t lo, int64_t first_pos,
                         const int64_t *checkpoints, int64_t checkpoint, int64_t j) {
    int64_t base = j / checkpoint, at = first_pos + checkpoints[base];
    for (int64_t p = lo + base * checkpoint; p < lo + j; p++)
        at += unsigned_at(tfs, tf_size, p);
    return at;
}

const char kernel_pair_counts_doc[] =
"pair_counts(doc_ids, tfs, positions, first, second, checkpoint, docs, out) -> None\n\n"
"out[i] = how often document docs[i] (ascending) holds term `first` right before term\n"
"`second`. Each term is (lo, hi, pos, checkpoints): its postings doc_ids/tfs[lo:hi], its\n"
"positions from positions[pos], and checkpoints[c] where the run of offsets of its posting\n"
"c * checkpoint starts (relative to pos). tfs and positions: uint16 or uint32; out: int64.";

PyObject *kernel_pair_counts(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[7];
    long long lo[2], hi[2], pos[2];
    Py_ssize_t checkpoint;
    if (!PyArg_ParseTuple(args, "OOO(LLLO)(LLLO)nOO", &obj[0], &obj[1], &obj[2], &lo[0], &hi[0],
                          &pos[0], &obj[3], &lo[1], &hi[1], &pos[1], &obj[4], &checkpoint,
                          &obj[5], &obj[6]))
        return NULL;
    Py_buffer doc_ids, tfs, positions, marks[2], docs, out;
    Py_buffer *views[7] = {&doc_ids, &tfs, &positions, &marks[0], &marks[1], &docs, &out};
    for (int j = 0; j < 7; j++)
        views[j]->obj = NULL;
    PyObject *result = NULL;
    Py_ssize_t tf_size = 0, pos_size = 0;
    if (take(obj[0], &doc_ids, 4, 'i', 0, "doc_ids") < 0)
        goto release;
    if (PyObject_GetBuffer(obj[1], &tfs, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0 ||
        PyObject_GetBuffer(obj[2], &positions, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        goto release;
    tf_size = tfs.itemsize, pos_size = positions.itemsize;
    if ((tf_size != 2 && tf_size != 4) || (pos_size != 2 && pos_size != 4) ||
        strchr("HI", tfs.format ? tfs.format[strlen(tfs.format) - 1] : 'B') == NULL ||
        strchr("HI", positions.format ? positions.format[strlen(positions.format) - 1] : 'B') ==
            NULL) {
        PyErr_SetString(PyExc_TypeError, "tfs and positions: uint16 or uint32 expected");
        goto release;
    }
    if (take(obj[3], &marks[0], 8, 'i', 0, "checkpoints") < 0 ||
        take(obj[4], &marks[1], 8, 'i', 0, "checkpoints") < 0 ||
        take(obj[5], &docs, 8, 'i', 0, "docs") < 0 ||
        take(obj[6], &out, 8, 'i', 1, "out") < 0)
        goto release;
    int64_t n_postings = doc_ids.len / 4, n_positions = positions.len / pos_size;
    int64_t n_docs = docs.len / 8;
    const char *bad = NULL;
    if (tfs.len / tf_size != n_postings)
        bad = "doc_ids and tfs differ in length";
    else if (out.len / 8 != n_docs)
        bad = "out needs one count per document";
    else if (checkpoint < 1)
        bad = "checkpoint must be 1 or more";
    for (int t = 0; t < 2 && bad == NULL; t++)
        if (lo[t] < 0 || lo[t] > hi[t] || hi[t] > n_postings || pos[t] < 0 ||
            marks[t].len / 8 < (hi[t] - lo[t] + checkpoint - 1) / checkpoint)
            bad = "a term's postings or checkpoints are out of range";
    if (bad != NULL) {
        PyErr_SetString(PyExc_ValueError, bad);
        goto release;
    }
    const int32_t *ids = doc_ids.buf;
    const int64_t *wanted = docs.buf;
    int64_t *counts = out.buf;
    int damaged = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n_docs && !damaged; i++) {
        counts[i] = 0;
        int64_t at[2], start[2], end[2];
        for (int t = 0; t < 2; t++) {
            at[t] = find_doc(ids, lo[t], hi[t], wanted[i]);
            if (at[t] < 0)
                break;
            start[t] = run_start(tfs.buf, tf_size, lo[t], pos[t], marks[t].buf, checkpoint,
                                 at[t] - lo[t]);
            end[t] = start[t] + unsigned_at(tfs.buf, tf_size, at[t]);
            if (start[t] < 0 || end[t] > n_positions)
                damaged = 1;
        }
        if (at[0] < 0 || at[1] < 0 || damaged)
            continue;
        /* Both runs ascend: count offsets x of the first with x + 1 in the second. */
        int64_t p = start[0], q = start[1], hits = 0;
        while (p < end[0] && q < end[1]) {
            int64_t x = unsigned_at(positions.buf, pos_size, p) + 1;
            int64_t y = unsigned_at(positions.buf, pos_size, q);
            if (x == y)
                hits++, p++, q++;
            else if (x < y)
                p++;
            else
                q++;
        }
        counts[i] = hits;
    }
    Py_END_ALLOW_THREADS
    if (damaged)
        PyErr_SetString(PyExc_ValueError, "positions out of range: a damaged index");
    else
        result = Py_NewRef(Py_None);
release:
    for (int j = 0; j < 7; j++)
        if (views[j]->obj != NULL)
            PyBuffer_Release(views[j]);
    return result;
}
