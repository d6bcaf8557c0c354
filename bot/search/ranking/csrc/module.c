/* The extension module `bot.search.ranking._kernel`: the compiled search kernels, built by the
 * project's own install (setup.py, optional: without a C compiler the install still succeeds
 * and bot/search/ranking/kernel.py falls back to numpy). Why C and not numba: a few kilobytes of
 * machine code where numba adds ~50 MB of private memory to every bot process. */
#include "common.h"

static PyMethodDef methods[] = {
    {"top_k", kernel_top_k, METH_VARARGS, kernel_top_k_doc},
    {"pair_counts", kernel_pair_counts, METH_VARARGS, kernel_pair_counts_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernel",
    "The compiled search kernels (see bot/search/ranking/kernel.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
