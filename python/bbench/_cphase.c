/* bbench._cphase: libbbench's sum and transfer phases called from Python
 * without ctypes.
 *
 * Why an extension: at 8 bytes the sum phase costs about 3 us, and ctypes'
 * call, its callback into Python and its objects cost twice that
 * (README, "From Python").  Here one C call runs a phase: the callbacks
 * are called through the C API, the provider's array read through the
 * buffer protocol (no copy), and the sum comes back as a NumPy array, the
 * transfer as the consumer's own value.
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
#include <time.h>

#include <bbench.h>

/* Results of this many doubles or more are lent to NumPy (no copy), smaller
 * ones copied into a fresh array: a copy costs less than a lender then. */
#define LEND_FROM 8192

static PyObject *np_ndarray, *np_integer, *np_empty, *np_frombuffer, *np_float64, *np_uint8;

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
    .tp_name = "bbench._cphase.lender",
    .tp_basicsize = sizeof(lender_t),
    .tp_dealloc = lender_dealloc,
    .tp_as_buffer = &lender_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a libbbench result lent to NumPy",
};

/* ------------------------------------------------------------------ callbacks
 * One call's callables (borrowed: the caller's) and what they gave. */
typedef struct {
    PyObject *prepare, *consume, *compute;
    PyObject *held;     /* the array handed to the phase, until release */
    Py_buffer view;
    int have_view;
    PyObject *failure;  /* the first exception a callback raised, or NULL */
} call_t;

static void take_failure(call_t *c)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    if (c->failure == NULL)
        c->failure = value;
    else
        Py_XDECREF(value);
    Py_XDECREF(type);
    Py_XDECREF(tb);
}

/* As the reference: prepare() gives a one-dimensional NumPy array of the
 * phase's element (format "d" float64 for the sum, "B" uint8 for the
 * transfer), else it is a provider failure (a local refusal).  A
 * non-contiguous one is made contiguous; the buffer is held until
 * release. */
static int hold_prepared(call_t *c, const char *format, Py_ssize_t itemsize, const void **data_out,
                         int64_t *len_out)
{
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
    if (c->view.ndim != 1 || c->view.itemsize != itemsize || c->view.format == NULL ||
        strcmp(c->view.format, format) != 0) {
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

static void release_held(call_t *c)
{
    if (c->have_view) {
        PyBuffer_Release(&c->view);
        c->have_view = 0;
    }
    Py_CLEAR(c->held);
}

static int sum_prepare_cb(void *arg, const double **data_out, int64_t *len_out)
{
    const void *data = NULL;
    int rc = hold_prepared(arg, "d", (Py_ssize_t)sizeof(double), &data, len_out);
    *data_out = data;
    return rc;
}

static void sum_release_cb(void *arg, const double *data)
{
    (void)data;
    release_held(arg);
}

static int transfer_prepare_cb(void *arg, const void **data_out, int64_t *len_out)
{
    return hold_prepared(arg, "B", 1, data_out, len_out);
}

static void transfer_release_cb(void *arg, const void *data)
{
    (void)data;
    release_held(arg);
}

/* compute_batch(index); an exception is a compute failure. */
static int batch_cb(void *arg, int64_t index)
{
    call_t *c = arg;
    PyObject *i = PyLong_FromLongLong((long long)index);
    PyObject *r = i != NULL ? PyObject_CallOneArg(c->compute, i) : NULL;
    Py_XDECREF(i);
    if (r == NULL) {
        take_failure(c);
        return 1;
    }
    Py_DECREF(r);
    return 0;
}

/* consume(view) with a read-only NumPy array of the received bytes.  A copy,
 * not a view of the phase's buffer: the document lets the consumer return
 * an alias of it ("a returned alias becomes caller-owned storage after
 * retirement"), and the phase frees or reuses its buffer at retirement.
 * The consumer's value (a new reference) is the ticket's until the
 * terminal agreement: run() returns it, discard_cb drops it on a refusal. */
static int consume_cb(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    call_t *c = arg;
    /* bytes, then frombuffer: one copy, and read-only by construction */
    PyObject *bytes = PyBytes_FromStringAndSize(nbytes > 0 ? data : NULL, (Py_ssize_t)nbytes);
    PyObject *got = bytes != NULL
                        ? PyObject_CallFunctionObjArgs(np_frombuffer, bytes, np_uint8, NULL)
                        : NULL;
    Py_XDECREF(bytes);
    PyObject *value = got != NULL ? PyObject_CallOneArg(c->consume, got) : NULL;
    Py_XDECREF(got);
    if (value == NULL) {
        take_failure(c);
        return 1;
    }
    *value_out = value;
    return 0;
}

static void discard_cb(void *arg, void *value)
{
    (void)arg;
    Py_XDECREF((PyObject *)value);
}

/* A contract field: a Python int or NumPy integer (not a bool) that fits
 * int64, else -1, which the library refuses on every rank (as the reference
 * refuses it). */
static int64_t field(PyObject *o)
{
    PyObject *num;
    if (PyLong_CheckExact(o)) {
        num = Py_NewRef(o);
    } else {
        int isint = PyLong_Check(o) || PyObject_IsInstance(o, np_integer) == 1;
        if (!isint || PyBool_Check(o) || (num = PyNumber_Index(o)) == NULL) {
            PyErr_Clear();
            return -1;
        }
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(num, &overflow);
    Py_DECREF(num);
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

/* sum_run(phase, prepare, phase_id, epoch, count, max_elements, metrics, lent)
 * -> the result (a float64 array) on BB_OK, else (status, prepare's
 * exception or None).  phase and metrics are addresses (bb_sum_phase_t *,
 * a bb_sum_metrics_t the caller owns); lent is true when the phase keeps
 * its result buffer (retained, borrowed), false when the result is the
 * caller's (fresh). */
static PyObject *sum_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "sum_run takes 8 arguments");
        return NULL;
    }
    int lent = PyObject_IsTrue(args[7]);
    if (lent < 0)
        return NULL;
    bb_sum_phase_t *phase = PyLong_AsVoidPtr(args[0]);
    bb_sum_metrics_t *metrics = PyLong_AsVoidPtr(args[6]);
    if (PyErr_Occurred())
        return NULL;
    bb_sum_contract_t contract = {field(args[2]), field(args[3]), field(args[4]),
                                  field(args[5])};
    call_t c = {.prepare = args[1]};
    bb_sum_provider_t provider = {sum_prepare_cb, sum_release_cb, &c};
    double *res = NULL;
    bb_status_t st = bb_sum_phase_run(phase, &provider, &contract, &res, metrics);
    /* Not released by the phase (a refusal before prepare ran, or
     * borrowed buffers): released here, except after an MPI error, where
     * the array stays MPI's (the phase is poisoned; abort the job). */
    if (st != BB_ERR_MPI)
        release_held(&c);
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

/* transfer_run(phase, prepare, consume, compute_batch, phase_id, epoch,
 * source, destination, nbytes, max_bytes, batches, metrics) -> (status,
 * x): x is the consumer's value on BB_OK (None off the destination), else
 * the exception a callback raised, or None.  phase and metrics are
 * addresses (bb_transfer_phase_t *, a bb_transfer_metrics_t the caller
 * owns).  A callable that is not one fails when called, as in the
 * reference. */
static PyObject *transfer_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "transfer_run takes 12 arguments");
        return NULL;
    }
    bb_transfer_phase_t *phase = PyLong_AsVoidPtr(args[0]);
    bb_transfer_metrics_t *metrics = PyLong_AsVoidPtr(args[11]);
    if (PyErr_Occurred())
        return NULL;
    bb_transfer_contract_t contract = {field(args[4]), field(args[5]), field(args[6]),
                                       field(args[7]), field(args[8]), field(args[9]),
                                       field(args[10])};
    call_t c = {.prepare = args[1], .consume = args[2], .compute = args[3]};
    bb_transfer_provider_t provider = {transfer_prepare_cb, transfer_release_cb, &c};
    bb_transfer_consumer_t consumer = {consume_cb, discard_cb, &c};
    bb_transfer_compute_t compute = {batch_cb, &c};
    void *value = NULL;
    bb_status_t st =
        bb_transfer_phase_run(phase, &provider, &consumer, &compute, &contract, &value, metrics);
    if (st != BB_ERR_MPI) /* as in sum_run */
        release_held(&c);
    if (st == BB_OK) {
        Py_XDECREF(c.failure);
        return Py_BuildValue("(iN)", 0, value != NULL ? (PyObject *)value : Py_NewRef(Py_None));
    }
    PyObject *failure = c.failure != NULL ? c.failure : Py_NewRef(Py_None);
    return Py_BuildValue("(iN)", (int)st, failure);
}

/* ------------------------------------------------------------------ C loops
 * The same phases called from C in this process, for the benchmark's c-in
 * row: a C provider lends the array given (no Python in the loop), so
 * c-py / c-in is the binding's cost measured in one run, free of this
 * machine's launch-to-launch swings. */
typedef struct {
    const void *data;
    int64_t len;
} lend_t;

static int lend_sum_cb(void *arg, const double **data_out, int64_t *len_out)
{
    const lend_t *l = arg;
    *data_out = l->data;
    *len_out = l->len;
    return 0;
}

static int lend_transfer_cb(void *arg, const void **data_out, int64_t *len_out)
{
    const lend_t *l = arg;
    *data_out = l->data;
    *len_out = l->len;
    return 0;
}

static int ignore_cb(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    (void)arg, (void)data, (void)nbytes, (void)value_out;
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The array's bytes (C-contiguous), held in *view until PyBuffer_Release. */
static int lend_of(PyObject *arr, Py_buffer *view, lend_t *l, Py_ssize_t itemsize)
{
    if (PyObject_GetBuffer(arr, view, PyBUF_C_CONTIGUOUS) != 0)
        return -1;
    l->data = view->buf;
    l->len = (int64_t)(view->len / itemsize);
    return 0;
}

static PyObject *loop_failed(Py_buffer *view, const char *call, bb_status_t st)
{
    PyBuffer_Release(view);
    PyErr_Format(PyExc_RuntimeError, "%s: %s", call, bb_status_string(st));
    return NULL;
}

/* sum_block(phase, array, phase_id, epoch, count, max_elements, metrics,
 * lent, reps) -> mean seconds a call over reps calls from C (a fresh
 * result is bb_free'd, as bbench-sum's protocol row does). */
static PyObject *sum_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "sum_block takes 9 arguments");
        return NULL;
    }
    bb_sum_phase_t *phase = PyLong_AsVoidPtr(args[0]);
    bb_sum_metrics_t *metrics = PyLong_AsVoidPtr(args[6]);
    int lent = PyObject_IsTrue(args[7]);
    long long reps = PyLong_AsLongLong(args[8]);
    if (PyErr_Occurred() || lent < 0)
        return NULL;
    Py_buffer view;
    lend_t l;
    if (lend_of(args[1], &view, &l, (Py_ssize_t)sizeof(double)) != 0)
        return NULL;
    bb_sum_contract_t contract = {field(args[2]), field(args[3]), field(args[4]),
                                  field(args[5])};
    bb_sum_provider_t provider = {lend_sum_cb, NULL, &l};
    double t0 = now_s();
    for (long long i = 0; i < reps; i++) {
        double *res = NULL;
        bb_status_t st = bb_sum_phase_run(phase, &provider, &contract, &res, metrics);
        if (st != BB_OK)
            return loop_failed(&view, "bb_sum_phase_run", st);
        if (!lent)
            bb_free(res);
    }
    double dt = now_s() - t0;
    PyBuffer_Release(&view);
    return PyFloat_FromDouble(reps > 0 ? dt / (double)reps : 0.0);
}

/* transfer_block(phase, array, phase_id, epoch, source, destination,
 * nbytes, max_bytes, batches, metrics, reps) -> mean seconds a call over
 * reps calls of run() from C: the array lent by the source, no compute
 * callback, a consumer that takes the bytes as they are (no value). */
static PyObject *transfer_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "transfer_block takes 11 arguments");
        return NULL;
    }
    bb_transfer_phase_t *phase = PyLong_AsVoidPtr(args[0]);
    bb_transfer_metrics_t *metrics = PyLong_AsVoidPtr(args[9]);
    long long reps = PyLong_AsLongLong(args[10]);
    if (PyErr_Occurred())
        return NULL;
    Py_buffer view;
    lend_t l;
    if (lend_of(args[1], &view, &l, 1) != 0)
        return NULL;
    bb_transfer_contract_t contract = {field(args[2]), field(args[3]), field(args[4]),
                                       field(args[5]), field(args[6]), field(args[7]),
                                       field(args[8])};
    bb_transfer_provider_t provider = {lend_transfer_cb, NULL, &l};
    bb_transfer_consumer_t consumer = {ignore_cb, NULL, NULL};
    bb_transfer_compute_t compute = {NULL, NULL};
    double t0 = now_s();
    for (long long i = 0; i < reps; i++) {
        void *value = NULL;
        bb_status_t st =
            bb_transfer_phase_run(phase, &provider, &consumer, &compute, &contract, &value, metrics);
        if (st != BB_OK)
            return loop_failed(&view, "bb_transfer_phase_run", st);
    }
    double dt = now_s() - t0;
    PyBuffer_Release(&view);
    return PyFloat_FromDouble(reps > 0 ? dt / (double)reps : 0.0);
}

static PyMethodDef cphase_methods[] = {
    {"sum_run", (PyCFunction)(void (*)(void))sum_run, METH_FASTCALL,
     "sum_run(phase, prepare, phase_id, epoch, count, max_elements, metrics, lent)"},
    {"transfer_run", (PyCFunction)(void (*)(void))transfer_run, METH_FASTCALL,
     "transfer_run(phase, prepare, consume, compute_batch, phase_id, epoch, source, "
     "destination, nbytes, max_bytes, batches, metrics)"},
    {"sum_block", (PyCFunction)(void (*)(void))sum_block, METH_FASTCALL,
     "sum_block(phase, array, phase_id, epoch, count, max_elements, metrics, lent, reps)"},
    {"transfer_block", (PyCFunction)(void (*)(void))transfer_block, METH_FASTCALL,
     "transfer_block(phase, array, phase_id, epoch, source, destination, nbytes, max_bytes, "
     "batches, metrics, reps)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cphase_module = {
    PyModuleDef_HEAD_INIT, "_cphase", "libbbench's sum and transfer phases from Python (bbench._clib)",
    -1, cphase_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cphase(void);
PyMODINIT_FUNC PyInit__cphase(void)
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
    np_integer = PyObject_GetAttrString(np, "integer");
    np_uint8 = PyObject_GetAttrString(np, "uint8");
    Py_DECREF(np);
    if (!np_ndarray || !np_empty || !np_frombuffer || !np_float64 || !np_integer || !np_uint8)
        return NULL;
    return PyModule_Create(&cphase_module);
}
