/* bbench._csum: libbbench's sum phase called from Python without ctypes.
 *
 * Why an extension: at 8 bytes the phase costs about 3 us, and ctypes'
 * call, its callback into Python and its objects cost twice that
 * (README, "From Python").  Here one C call runs the phase: prepare() is
 * called through the C API, its array read through the buffer protocol
 * (no copy), and the result comes back as a NumPy array.
 *
 * The GIL is held across the collective: the phase calls back into Python
 * (prepare) and is MPI_THREAD_FUNNELED, one thread's, anyway.
 *
 * The phase, its world and the metrics struct are made and owned by the
 * ctypes side (bbench/_clib.py), which passes their addresses; this module
 * owns nothing across calls but the NumPy callables it looks up once. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include <bbench.h>

/* Results of this many doubles or more are lent to NumPy (no copy), smaller
 * ones copied into a fresh array: a copy costs less than a lender then. */
#define LEND_FROM 8192

static PyObject *np_ndarray, *np_empty, *np_frombuffer, *np_float64;

/* ------------------------------------------------------------------ lender
 * Owns a fresh result (bb_free on dealloc) and exposes it, writable, to
 * np.frombuffer, which keeps it alive as the array's base. */
typedef struct {
    PyObject_HEAD
    double *data;
    Py_ssize_t count;
} lender_t;

static int lender_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    lender_t *l = (lender_t *)self;
    return PyBuffer_FillInfo(view, self, l->data, l->count * (Py_ssize_t)sizeof(double), 0,
                             flags);
}

static void lender_dealloc(PyObject *self)
{
    bb_free(((lender_t *)self)->data);
    Py_TYPE(self)->tp_free(self);
}

static PyBufferProcs lender_buffer = {lender_getbuffer, NULL};

static PyTypeObject lender_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bbench._csum.lender",
    .tp_basicsize = sizeof(lender_t),
    .tp_dealloc = lender_dealloc,
    .tp_as_buffer = &lender_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a libbbench result lent to NumPy",
};

/* ------------------------------------------------------------------ prepare */
typedef struct {
    PyObject *prepare;  /* borrowed: the caller's callable */
    PyObject *held;     /* the array handed to the phase, until release */
    Py_buffer view;
    int have_view;
    PyObject *failure;  /* the exception prepare raised, or NULL */
} call_t;

static void take_failure(call_t *c)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    c->failure = value;
    Py_XDECREF(type);
    Py_XDECREF(tb);
}

/* As the reference: a one-dimensional float64 NumPy array, or a provider
 * failure (a local refusal).  A non-contiguous one is made contiguous. */
static int prepare_cb(void *arg, const double **data_out, int64_t *len_out)
{
    call_t *c = arg;
    PyObject *arr = PyObject_CallNoArgs(c->prepare);
    if (arr == NULL) {
        take_failure(c);
        return 1;
    }
    int ok = PyObject_IsInstance(arr, np_ndarray);
    if (ok != 1) {
        if (ok < 0)
            take_failure(c);
        Py_DECREF(arr);
        return 1;
    }
    if (PyObject_GetBuffer(arr, &c->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear(); /* not contiguous: a contiguous copy, as the reference */
        PyObject *copy = PyObject_CallMethod(arr, "copy", NULL);
        Py_DECREF(arr);
        if (copy == NULL) {
            take_failure(c);
            return 1;
        }
        arr = copy;
        if (PyObject_GetBuffer(arr, &c->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
            take_failure(c);
            Py_DECREF(arr);
            return 1;
        }
    }
    if (c->view.ndim != 1 || c->view.itemsize != (Py_ssize_t)sizeof(double) ||
        c->view.format == NULL || strcmp(c->view.format, "d") != 0) {
        PyBuffer_Release(&c->view);
        Py_DECREF(arr);
        return 1;
    }
    c->have_view = 1;
    c->held = arr;
    *data_out = c->view.buf;
    *len_out = (int64_t)c->view.shape[0];
    return 0;
}

static void release_cb(void *arg, const double *data)
{
    call_t *c = arg;
    (void)data;
    if (c->have_view) {
        PyBuffer_Release(&c->view);
        c->have_view = 0;
    }
    Py_CLEAR(c->held);
}

/* A contract field: a Python int that fits int64, else -1, which the
 * library refuses on every rank (as the reference refuses it). */
static int64_t field(PyObject *o)
{
    if (!PyLong_Check(o))
        return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    return (int64_t)v;
}

/* The fresh result (the caller's, bb_free) as a NumPy array: copied when
 * small, else lent without a copy. */
static PyObject *result_array(double *res, int64_t count)
{
    PyObject *n = PyLong_FromLongLong((long long)count);
    if (n == NULL) {
        bb_free(res);
        return NULL;
    }
    if (count < LEND_FROM) {
        PyObject *out = PyObject_CallOneArg(np_empty, n);
        Py_DECREF(n);
        Py_buffer v;
        if (out != NULL && PyObject_GetBuffer(out, &v, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) == 0) {
            if (count > 0)
                memcpy(v.buf, res, (size_t)count * sizeof(double));
            PyBuffer_Release(&v);
        } else {
            Py_CLEAR(out);
        }
        bb_free(res);
        return out;
    }
    Py_DECREF(n);
    lender_t *l = PyObject_New(lender_t, &lender_type);
    if (l == NULL) {
        bb_free(res);
        return NULL;
    }
    l->data = res;
    l->count = (Py_ssize_t)count;
    PyObject *out = PyObject_CallFunctionObjArgs(np_frombuffer, (PyObject *)l, np_float64, NULL);
    Py_DECREF(l); /* the array holds it as its base */
    return out;
}

/* The phase's own result buffer (retained or borrowed buffers), lent until
 * its next call: a read-only view, no copy. */
static PyObject *lent_array(double *res, int64_t count)
{
    PyObject *mem = PyMemoryView_FromMemory((char *)res, (Py_ssize_t)count * 8, PyBUF_READ);
    if (mem == NULL)
        return NULL;
    PyObject *out = PyObject_CallFunctionObjArgs(np_frombuffer, mem, np_float64, NULL);
    Py_DECREF(mem);
    return out;
}

/* run(phase, prepare, phase_id, epoch, count, max_elements, metrics, lent)
 * -> the result (a float64 array) on BB_OK, else (status, prepare's
 * exception or None).  phase and metrics are addresses (bb_sum_phase_t *,
 * a bb_sum_metrics_t the caller owns); lent is true when the phase keeps
 * its result buffer (retained, borrowed), false when the result is the
 * caller's (fresh). */
static PyObject *csum_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "run takes 8 arguments");
        return NULL;
    }
    int lent = PyObject_IsTrue(args[7]);
    if (lent < 0)
        return NULL;
    bb_sum_phase_t *phase = PyLong_AsVoidPtr(args[0]);
    bb_sum_metrics_t *metrics = PyLong_AsVoidPtr(args[6]);
    if (PyErr_Occurred())
        return NULL;
    if (!PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "prepare must be callable");
        return NULL;
    }
    bb_sum_contract_t contract = {field(args[2]), field(args[3]), field(args[4]),
                                  field(args[5])};
    call_t c = {.prepare = args[1]};
    bb_sum_provider_t provider = {prepare_cb, release_cb, &c};
    double *res = NULL;
    bb_status_t st = bb_sum_phase_run(phase, &provider, &contract, &res, metrics);
    /* Not released by the phase (a refusal before prepare ran, or
     * borrowed buffers): released here, except after an MPI error, where
     * the array stays MPI's (the phase is poisoned; abort the job). */
    if (st != BB_ERR_MPI)
        release_cb(&c, NULL);
    if (st == BB_OK) {
        Py_XDECREF(c.failure);
        if (res == NULL) { /* count 0 */
            PyObject *zero = PyLong_FromLong(0);
            PyObject *out = zero != NULL ? PyObject_CallOneArg(np_empty, zero) : NULL;
            Py_XDECREF(zero);
            return out;
        }
        return lent ? lent_array(res, contract.count) : result_array(res, contract.count);
    }
    PyObject *failure = c.failure != NULL ? c.failure : Py_NewRef(Py_None);
    return Py_BuildValue("(iN)", (int)st, failure);
}

static PyMethodDef csum_methods[] = {
    {"run", (PyCFunction)(void (*)(void))csum_run, METH_FASTCALL,
     "run(phase, prepare, phase_id, epoch, count, max_elements, metrics, lent)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef csum_module = {
    PyModuleDef_HEAD_INIT, "_csum", "libbbench's sum phase from Python (bbench._clib)", -1,
    csum_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csum(void);
PyMODINIT_FUNC PyInit__csum(void)
{
    if (PyType_Ready(&lender_type) < 0)
        return NULL;
    PyObject *np = PyImport_ImportModule("numpy");
    if (np == NULL)
        return NULL;
    np_ndarray = PyObject_GetAttrString(np, "ndarray");
    np_empty = PyObject_GetAttrString(np, "empty");
    np_frombuffer = PyObject_GetAttrString(np, "frombuffer");
    np_float64 = PyObject_GetAttrString(np, "float64");
    Py_DECREF(np);
    if (!np_ndarray || !np_empty || !np_frombuffer || !np_float64)
        return NULL;
    return PyModule_Create(&csum_module);
}
