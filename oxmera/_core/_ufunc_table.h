/* A NumPy ufunc's loop table, read from C (autograd.pyx's small-array path,
 * _kernels.pyx's ufuncs made from NumPy's). Needs NumPy's headers and
 * import_ufunc() before use. */
#ifndef OXMERA_UFUNC_TABLE_H
#define OXMERA_UFUNC_TABLE_H

#include <Python.h>
#include "numpy/ufuncobject.h"

/* A ufunc's fields: NumPy 2.5 moved them behind _PyUFuncObject_GET_ITEM_DATA
   (its Cython declarations no longer expose ``types``); before, they are
   the PyUFuncObject itself. */
#ifdef _PyUFuncObject_GET_ITEM_DATA
#define OXMERA_UFUNC(u) _PyUFuncObject_GET_ITEM_DATA(u)
#else
#define OXMERA_UFUNC(u) ((PyUFuncObject *)(u))
#endif

/* The index of the first loop of ufunc ``u`` whose operands all are of
   ``typenum`` (NumPy's legacy selection), or -1: none, or not a ufunc of
   one or two inputs and one output. */
static inline int oxmera_ufunc_loop(PyObject *u, int typenum) {
    int i, k, nargs = OXMERA_UFUNC(u)->nargs;
    if (OXMERA_UFUNC(u)->nout != 1 || OXMERA_UFUNC(u)->nin < 1 || OXMERA_UFUNC(u)->nin > 2)
        return -1;
    for (i = 0; i < OXMERA_UFUNC(u)->ntypes; i++) {
        for (k = 0; k < nargs; k++) {
            if ((int)OXMERA_UFUNC(u)->types[i * nargs + k] != typenum) break;
        }
        if (k == nargs) return i;
    }
    return -1;
}
static inline int oxmera_ufunc_nin(PyObject *u) { return OXMERA_UFUNC(u)->nin; }
static inline void *oxmera_ufunc_function(PyObject *u, int i) {
    return (void *)OXMERA_UFUNC(u)->functions[i];
}
static inline void *oxmera_ufunc_data(PyObject *u, int i) { return OXMERA_UFUNC(u)->data[i]; }

/* A new ufunc of one input and one output, ``name``, with the loops of
   ``base`` (same types, same order, so NumPy resolves dtypes as for
   ``base``), except that every loop whose operands all are of ``typenum``
   is ``loop``. The tables live as long as the process (a ufunc keeps
   pointers to them); NULL with an exception set on failure. */
static inline PyObject *oxmera_ufunc_replacing(PyObject *base, int typenum,
                                        PyUFuncGenericFunction loop,
                                        const char *name, const char *doc) {
    int i, k, n, nargs;
    PyUFuncGenericFunction *functions;
    void **data;
    char *types;
    if (OXMERA_UFUNC(base)->nin != 1 || OXMERA_UFUNC(base)->nout != 1) {
        PyErr_SetString(PyExc_ValueError, "oxmera_ufunc_replacing: a ufunc of one input "
                        "and one output only");
        return NULL;
    }
    n = OXMERA_UFUNC(base)->ntypes;
    nargs = OXMERA_UFUNC(base)->nargs;
    functions = (PyUFuncGenericFunction *)PyMem_RawMalloc(n * sizeof *functions);
    data = (void **)PyMem_RawMalloc(n * sizeof *data);
    types = (char *)PyMem_RawMalloc(n * nargs);
    if (!functions || !data || !types) {
        PyMem_RawFree(functions);
        PyMem_RawFree(data);
        PyMem_RawFree(types);
        return PyErr_NoMemory();
    }
    for (i = 0; i < n; i++) {
        int mine = 1;
        for (k = 0; k < nargs; k++) {
            types[i * nargs + k] = OXMERA_UFUNC(base)->types[i * nargs + k];
            mine = mine && (int)types[i * nargs + k] == typenum;
        }
        functions[i] = mine ? loop : OXMERA_UFUNC(base)->functions[i];
        data[i] = mine ? NULL : OXMERA_UFUNC(base)->data[i];
    }
    return PyUFunc_FromFuncAndData(functions, data, types, n, 1, 1, PyUFunc_None,
                                   name, doc, 0);
}

#endif
