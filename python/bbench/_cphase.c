/* bbench._cphase: libbbench's sum and transfer phases called from Python
 * without ctypes.
 *
 * Why an extension: at 8 bytes the sum phase costs about 3 us, and ctypes'
 * call, its callback into Python and its objects cost twice that
 * (doc/python.md).  Here one C call runs a phase: the callbacks
 * are called through the C API, the provider's array read through NumPy's
 * C API (no copy), and the sum comes back as a NumPy array, the
 * transfer as the consumer's own value.
 *
 * The GIL is held across the collective: the phase calls back into Python
 * (prepare) and is MPI_THREAD_FUNNELED, one thread's, anyway.
 *
 * The phase, its world and the metrics structs are made and owned by the
 * ctypes side (bbench/_clib.py), which passes their addresses: the call's
 * own struct, and the record the Python phase's metrics mapping reads
 * (copied from the call's after a success; for the transfer also after a
 * refusal or an MPI error, never after a misuse that took no part); this
 * module keeps, across calls, the callers (below), each holding its
 * metrics objects. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stddef.h>
#include <string.h>
#include <time.h>

#include <bbench.h>

/* Results of this many doubles or more are lent to NumPy (no copy), smaller
 * ones copied into a fresh array: a copy costs less than a lender then. */
#define LEND_FROM 8192

/* ------------------------------------------------------------------ lender
 * Owns a fresh result (bb_free on dealloc): the base object of the NumPy
 * array that lends it. */
typedef struct {
    PyObject_HEAD
    double *data;
} lender_t;

static void lender_dealloc(PyObject *self)
{
    bb_free(((lender_t *)self)->data);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject lender_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bbench._cphase.lender",
    .tp_basicsize = sizeof(lender_t),
    .tp_dealloc = lender_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a libbbench result lent to NumPy",
};

/* ------------------------------------------------------------------ callbacks
 * One call's callables (borrowed: the caller's) and what they gave. */
typedef struct {
    PyObject *prepare, *consume, *compute;
    PyObject *held;     /* the array handed to the phase, until release */
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
 * phase's element (float64 for the sum, uint8 for the transfer, in this
 * machine's byte order), else it is a provider failure (a local refusal).
 * A non-contiguous one is made contiguous; the array is held until
 * release. */
static int hold_prepared(call_t *c, int typenum, const void **data_out, int64_t *len_out)
{
    PyObject *got = PyObject_CallNoArgs(c->prepare);
    if (got == NULL) {
        take_failure(c);
        return 1;
    }
    if (!PyArray_Check(got)) {
        Py_DECREF(got);
        return 1;
    }
    PyArrayObject *arr = (PyArrayObject *)got;
    if (PyArray_NDIM(arr) != 1 || PyArray_TYPE(arr) != typenum || !PyArray_ISNOTSWAPPED(arr)) {
        Py_DECREF(got);
        return 1;
    }
    if (!PyArray_IS_C_CONTIGUOUS(arr)) { /* a contiguous copy, as the reference */
        PyObject *copy = PyArray_NewCopy(arr, NPY_CORDER);
        Py_DECREF(got);
        if (copy == NULL) {
            take_failure(c);
            return 1;
        }
        got = copy;
        arr = (PyArrayObject *)copy;
    }
    c->held = got;
    *data_out = PyArray_DATA(arr);
    *len_out = (int64_t)PyArray_DIM(arr, 0);
    return 0;
}

static void release_held(call_t *c)
{
    Py_CLEAR(c->held);
}

static int sum_prepare_cb(void *arg, const double **data_out, int64_t *len_out)
{
    const void *data = NULL;
    int rc = hold_prepared(arg, NPY_DOUBLE, &data, len_out);
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
    return hold_prepared(arg, NPY_UINT8, data_out, len_out);
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
    npy_intp n = (npy_intp)nbytes;
    PyObject *got = PyArray_SimpleNew(1, &n, NPY_UINT8);
    if (got != NULL) {
        if (nbytes > 0)
            memcpy(PyArray_DATA((PyArrayObject *)got), data, (size_t)nbytes);
        PyArray_CLEARFLAGS((PyArrayObject *)got, NPY_ARRAY_WRITEABLE);
    }
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
        int isint = PyLong_Check(o) || PyArray_IsScalar(o, Integer);
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
 * small, else lent without a copy (a lender frees it with the array). */
static PyObject *result_array(double *res, int64_t count)
{
    npy_intp n = (npy_intp)count;
    if (count < LEND_FROM) {
        PyObject *out = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
        if (out != NULL && count > 0)
            memcpy(PyArray_DATA((PyArrayObject *)out), res, (size_t)count * sizeof(double));
        bb_free(res);
        return out;
    }
    lender_t *l = PyObject_New(lender_t, &lender_type);
    if (l == NULL) {
        bb_free(res);
        return NULL;
    }
    l->data = res;
    PyObject *out = PyArray_SimpleNewFromData(1, &n, NPY_DOUBLE, res);
    if (out == NULL || PyArray_SetBaseObject((PyArrayObject *)out, (PyObject *)l) != 0) {
        Py_XDECREF(out);  /* SetBaseObject took l even when it failed */
        if (out == NULL)
            Py_DECREF(l);
        return NULL;
    }
    return out;
}

/* The phase's own result buffer (retained or borrowed buffers), lent until
 * its next call: a read-only array over it, no copy. */
static PyObject *lent_array(double *res, int64_t count)
{
    npy_intp n = (npy_intp)count;
    PyObject *out = PyArray_SimpleNewFromData(1, &n, NPY_DOUBLE, res);
    if (out != NULL)
        PyArray_CLEARFLAGS((PyArrayObject *)out, NPY_ARRAY_WRITEABLE);
    return out;
}

/* ------------------------------------------------------------------ callers
 * A phase's sum() or run() as a C callable (vectorcall): the Python class
 * puts it in the instance's dict, so phase.sum(prepare, phase_id=...) goes
 * from the interpreter straight here, with no Python frame of its own
 * (that frame and its attribute lookups cost as much as the rest of the
 * binding at 8 bytes).  The phase, its world and the metrics struct are
 * the Python object's (bbench/_clib.py): the caller keeps the metrics
 * object alive, and the phase object by a weak reference, to publish the
 * metrics and to raise what a status means (its _raise_run method). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    void *phase;           /* bb_sum_phase_t * or bb_transfer_phase_t *; NULL once closed */
    void *metrics;         /* inside metrics_obj: the call's own */
    void *record;          /* inside record_obj: what metrics shows */
    PyObject *metrics_obj; /* the ctypes metrics structs */
    PyObject *record_obj;
    PyObject *owner;       /* a weak reference to the Python phase */
    int lent;              /* sum: the result is the phase's buffer (retained, borrowed) */
} caller_t;

/* The keyword arguments names[0..n) (each required, no other), after
 * exactly npos positional ones; a TypeError as Python's own otherwise, and
 * a RuntimeError once the phase is closed. */
static int parse_call(const caller_t *k, PyObject *const *args, size_t nargsf,
                      PyObject *kwnames, Py_ssize_t npos, const char *const *names,
                      PyObject *const *interned, Py_ssize_t n, PyObject **kw)
{
    if (k->phase == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the phase is closed");
        return -1;
    }
    if (PyVectorcall_NARGS(nargsf) != npos) {
        PyErr_Format(PyExc_TypeError, "takes %zd positional arguments", npos);
        return -1;
    }
    for (Py_ssize_t j = 0; j < n; j++)
        kw[j] = NULL;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        Py_ssize_t j = 0;
        while (j < n && name != interned[j]) /* interned, as literal names are */
            j++;
        if (j == n) /* a name made at run time: compare the text */
            for (j = 0; j < n && PyUnicode_CompareWithASCIIString(name, names[j]) != 0; j++)
                continue;
        if (j == n || kw[j] != NULL) {
            PyErr_Format(PyExc_TypeError, "unexpected or repeated keyword argument '%U'", name);
            return -1;
        }
        kw[j] = args[npos + i];
    }
    for (Py_ssize_t j = 0; j < n; j++)
        if (kw[j] == NULL) {
            PyErr_Format(PyExc_TypeError, "missing keyword argument '%s'", names[j]);
            return -1;
        }
    return 0;
}

/* After a call: the record the phase's metrics shows (the sum phase's
 * last success: "the last successful record is not a refusal record"; the
 * transfer phase's latest ticket, refused or fatal included), then a
 * status other than BB_OK raised by the phase object (failure, the
 * callbacks' exception or None, is stolen). */
static int publish(caller_t *k, bb_status_t st, PyObject *failure, size_t size, int took_part)
{
    if (took_part)
        memcpy(k->record, k->metrics, size);
    if (st == BB_OK) { /* the common case: nothing else to do */
        Py_XDECREF(failure);
        return 0;
    }
    PyObject *owner = PyWeakref_GetObject(k->owner); /* borrowed */
    if (owner == NULL || owner == Py_None) {
        Py_XDECREF(failure);
        if (owner != NULL)
            PyErr_SetString(PyExc_RuntimeError, "the phase object is gone");
        return -1;
    }
    Py_INCREF(owner);
    PyObject *r = PyObject_CallMethod(owner, "_raise_run", "iO", (int)st,
                                      failure != NULL ? failure : Py_None);
    Py_XDECREF(r);
    if (r != NULL) /* _raise_run always raises */
        PyErr_Format(PyExc_RuntimeError, "libbbench: status %d", (int)st);
    Py_XDECREF(failure);
    Py_DECREF(owner);
    return -1;
}

static const char *const sum_names[] = {"phase_id", "epoch", "count", "max_elements"};
static PyObject *sum_interned[4];

/* phase.sum(prepare, *, phase_id, epoch, count, max_elements) */
static PyObject *sum_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    caller_t *k = (caller_t *)self;
    PyObject *kw[4];
    if (parse_call(k, args, nargsf, kwnames, 1, sum_names, sum_interned, 4, kw) != 0)
        return NULL;
    bb_sum_contract_t contract = {field(kw[0]), field(kw[1]), field(kw[2]), field(kw[3])};
    call_t c = {.prepare = args[0]};
    bb_sum_provider_t provider = {sum_prepare_cb, sum_release_cb, &c};
    double *res = NULL;
    /* No stage: a refusal that does not name one is a library's fault
     * (_clib.py's _raise_status says so), not a stale record's. */
    ((bb_sum_metrics_t *)k->metrics)->refusal.stage = BB_STAGE_NONE;
    bb_status_t st = bb_sum_phase_run(k->phase, &provider, &contract, &res, k->metrics);
    /* Not released by the phase (a refusal before prepare ran, or
     * borrowed buffers): released here, except after an MPI error, where
     * the array stays MPI's (the phase is poisoned; abort the job). */
    if (st != BB_ERR_MPI)
        release_held(&c);
    if (publish(k, st, c.failure, sizeof(bb_sum_metrics_t), st == BB_OK) != 0) {
        if (st == BB_OK && !k->lent)
            bb_free(res);
        return NULL;
    }
    if (res == NULL) { /* count 0 */
        npy_intp zero = 0;
        return PyArray_SimpleNew(1, &zero, NPY_DOUBLE);
    }
    return k->lent ? lent_array(res, contract.count) : result_array(res, contract.count);
}

static const char *const transfer_names[] = {"source", "destination", "nbytes", "max_bytes",
                                             "phase_id", "epoch", "batches"};
static PyObject *transfer_interned[7];

/* phase.run(prepare, consume, compute_batch, *, source, destination,
 * nbytes, max_bytes, phase_id, epoch, batches): the consumer's value on
 * the destination, None elsewhere.  A callable that is not one fails when
 * called, as in the reference. */
static PyObject *transfer_call(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames)
{
    caller_t *k = (caller_t *)self;
    PyObject *kw[7];
    if (parse_call(k, args, nargsf, kwnames, 3, transfer_names, transfer_interned, 7, kw) != 0)
        return NULL;
    bb_transfer_contract_t contract = {field(kw[4]), field(kw[5]), field(kw[0]), field(kw[1]),
                                       field(kw[2]), field(kw[3]), field(kw[6])};
    call_t c = {.prepare = args[0], .consume = args[1], .compute = args[2]};
    bb_transfer_provider_t provider = {transfer_prepare_cb, transfer_release_cb, &c};
    bb_transfer_consumer_t consumer = {consume_cb, discard_cb, &c};
    bb_transfer_compute_t compute = {batch_cb, &c};
    void *value = NULL;
    bb_status_t st = bb_transfer_phase_run(k->phase, &provider, &consumer, &compute, &contract,
                                           &value, k->metrics);
    if (st != BB_ERR_MPI) /* as in sum_call */
        release_held(&c);
    int took_part = st == BB_OK || st == BB_REFUSED || st == BB_ERR_MPI;
    if (publish(k, st, c.failure, sizeof(bb_transfer_metrics_t), took_part) != 0) {
        if (st == BB_OK)
            Py_XDECREF((PyObject *)value);
        return NULL;
    }
    return value != NULL ? (PyObject *)value : Py_NewRef(Py_None);
}

static PyObject *caller_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    ((caller_t *)self)->phase = NULL;
    Py_RETURN_NONE;
}

static void caller_dealloc(PyObject *self)
{
    caller_t *k = (caller_t *)self;
    Py_XDECREF(k->metrics_obj);
    Py_XDECREF(k->record_obj);
    Py_XDECREF(k->owner);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef caller_methods[] = {
    {"close", caller_close, METH_NOARGS, "forget the phase (the Python phase's close())"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject caller_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bbench._cphase.caller",
    .tp_basicsize = sizeof(caller_t),
    .tp_dealloc = caller_dealloc,
    .tp_vectorcall_offset = offsetof(caller_t, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_methods = caller_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "a C phase's sum() or run()",
};

/* caller(kind, phase, metrics_address, metrics, owner, lent,
 * record_address, record): kind "sum" or "transfer"; phase and the
 * addresses are addresses (metrics and record the objects they point
 * into); owner the Python phase. */
static PyObject *make_caller(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "caller(kind, phase, metrics_address, metrics, owner, "
                                         "lent, record_address, record)");
        return NULL;
    }
    int transfer = PyUnicode_CompareWithASCIIString(args[0], "transfer") == 0;
    if (!transfer && PyUnicode_CompareWithASCIIString(args[0], "sum") != 0) {
        PyErr_SetString(PyExc_ValueError, "kind: sum or transfer");
        return NULL;
    }
    void *phase = PyLong_AsVoidPtr(args[1]);
    void *metrics = PyLong_AsVoidPtr(args[2]);
    int lent = PyObject_IsTrue(args[5]);
    void *record = PyLong_AsVoidPtr(args[6]);
    if (PyErr_Occurred() || lent < 0)
        return NULL;
    PyObject *owner = PyWeakref_NewRef(args[4], NULL);
    if (owner == NULL)
        return NULL;
    caller_t *k = PyObject_New(caller_t, &caller_type);
    if (k == NULL) {
        Py_DECREF(owner);
        return NULL;
    }
    k->vectorcall = transfer ? transfer_call : sum_call;
    k->phase = phase;
    k->metrics = metrics;
    k->metrics_obj = Py_NewRef(args[3]);
    k->record = record;
    k->record_obj = Py_NewRef(args[7]);
    k->owner = owner;
    k->lent = lent;
    return (PyObject *)k;
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

/* block(kind, phase, metrics, array, lent, reps, *fields) -> mean seconds a
 * call over reps calls from C.  kind "sum": fields phase_id, epoch, count,
 * max_elements (a fresh result is bb_free'd, as bbench-sum's protocol row
 * does; lent: the phase keeps it).  kind "transfer": fields phase_id,
 * epoch, source, destination, nbytes, max_bytes, batches; run() with the
 * array lent by the source, no compute callback and a consumer that takes
 * the bytes as they are (no value). */
static PyObject *c_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    int transfer = nargs > 0 && PyUnicode_Check(args[0]) &&
                   PyUnicode_CompareWithASCIIString(args[0], "transfer") == 0;
    if (nargs != (transfer ? 13 : 10)) {
        PyErr_SetString(PyExc_TypeError, "block(kind, phase, metrics, array, lent, reps, *fields)");
        return NULL;
    }
    void *phase = PyLong_AsVoidPtr(args[1]);
    void *metrics = PyLong_AsVoidPtr(args[2]);
    int lent = PyObject_IsTrue(args[4]);
    long long reps = PyLong_AsLongLong(args[5]);
    if (PyErr_Occurred() || lent < 0)
        return NULL;
    Py_buffer view;
    lend_t l;
    if (lend_of(args[3], &view, &l, transfer ? 1 : (Py_ssize_t)sizeof(double)) != 0)
        return NULL;
    int64_t f[7];
    for (Py_ssize_t i = 6; i < nargs; i++)
        f[i - 6] = field(args[i]);
    bb_sum_contract_t sc = {f[0], f[1], f[2], f[3]};
    bb_sum_provider_t sp = {lend_sum_cb, NULL, &l};
    bb_transfer_contract_t tc = {f[0], f[1], f[2], f[3], f[4], f[5], f[6]};
    bb_transfer_provider_t tp = {lend_transfer_cb, NULL, &l};
    bb_transfer_consumer_t consumer = {ignore_cb, NULL, NULL};
    bb_transfer_compute_t compute = {NULL, NULL};
    bb_status_t st = BB_OK;
    double t0 = now_s();
    for (long long i = 0; i < reps && st == BB_OK; i++) {
        if (transfer) {
            void *value = NULL;
            st = bb_transfer_phase_run(phase, &tp, &consumer, &compute, &tc, &value, metrics);
        } else {
            double *res = NULL;
            st = bb_sum_phase_run(phase, &sp, &sc, &res, metrics);
            if (st == BB_OK && !lent)
                bb_free(res);
        }
    }
    double dt = now_s() - t0;
    PyBuffer_Release(&view);
    if (st != BB_OK) {
        PyErr_Format(PyExc_RuntimeError, "%s: %s",
                     transfer ? "bb_transfer_phase_run" : "bb_sum_phase_run",
                     bb_status_string(st));
        return NULL;
    }
    return PyFloat_FromDouble(reps > 0 ? dt / (double)reps : 0.0);
}

static PyMethodDef cphase_methods[] = {
    {"caller", (PyCFunction)(void (*)(void))make_caller, METH_FASTCALL,
     "caller(kind, phase, metrics_address, metrics, owner, lent, record_address, record): "
     "a phase's sum() or run()"},
    {"block", (PyCFunction)(void (*)(void))c_block, METH_FASTCALL,
     "block(kind, phase, metrics, array, lent, reps, *fields): reps calls from C, their "
     "mean seconds"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cphase_module = {
    PyModuleDef_HEAD_INIT, "_cphase", "libbbench's sum and transfer phases from Python (bbench._clib)",
    -1, cphase_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cphase(void);
PyMODINIT_FUNC PyInit__cphase(void)
{
    if (PyType_Ready(&lender_type) < 0 || PyType_Ready(&caller_type) < 0)
        return NULL;
    for (int j = 0; j < 4; j++)
        if ((sum_interned[j] = PyUnicode_InternFromString(sum_names[j])) == NULL)
            return NULL;
    for (int j = 0; j < 7; j++)
        if ((transfer_interned[j] = PyUnicode_InternFromString(transfer_names[j])) == NULL)
            return NULL;
    import_array();
    return PyModule_Create(&cphase_module);
}
