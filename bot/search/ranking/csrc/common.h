/* What both kernels share: Python's headers, a binary search over ascending doc ids, and
 * taking an argument's buffer with its item size and kind checked. Static inline: each
 * file gets its own copy of one source (no calls across files on the hot path). */
#ifndef PAPERBOT_KERNEL_COMMON_H
#define PAPERBOT_KERNEL_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* First position in [lo, hi] holding target or more (hi: known to, or the end). */
static inline int64_t halve(const int32_t *doc_ids, int64_t lo, int64_t hi, int64_t target) {
    while (lo < hi) {
        int64_t mid = (lo + hi) >> 1;
        if (doc_ids[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* An argument's buffer, C-contiguous, of the given item size and kind ('i' signed integer,
 * 'u' unsigned, 'f' float, 'b' bool); 0, or -1 with TypeError set. */
static inline int take(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, char kind, int writable,
                const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    const char *format = view->format ? view->format : "B";
    if (*format == '<' || *format == '=' || *format == '@')
        format++;
    const char *kinds = kind == 'i' ? "bhilq" : kind == 'u' ? "BHILQ" : kind == 'f' ? "d" : "?";
    if (view->itemsize != itemsize || strlen(format) != 1 || strchr(kinds, *format) == NULL) {
        PyErr_Format(PyExc_TypeError, "%s: expected %zd-byte items of kind '%c', got format '%s'",
                     name, itemsize, kind, view->format ? view->format : "B");
        PyBuffer_Release(view);
        view->obj = NULL;
        return -1;
    }
    return 0;
}

PyObject *kernel_top_k(PyObject *self, PyObject *args);
PyObject *kernel_pair_counts(PyObject *self, PyObject *args);
extern const char kernel_top_k_doc[];
extern const char kernel_pair_counts_doc[];

#endif
