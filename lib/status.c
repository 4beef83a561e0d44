/* status.c: the MPI-free part of the library (status and stage names,
 * version, memory, error messages).  Compiled into libbbench and, as its
 * own copy, into the record library, which must not need MPI. */
#include "config.h"
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

const char *bb_status_string(bb_status_t status)
{
    switch (status) {
    case BB_OK: return "ok";
    case BB_REFUSED: return "collective refusal";
    case BB_ERR_ARG: return "invalid argument";
    case BB_ERR_THREAD: return "called from a thread that does not own MPI";
    case BB_ERR_REENTRY: return "reentrant call from a callback";
    case BB_ERR_STATE: return "object in the wrong state for this call";
    case BB_ERR_POISONED: return "poisoned by an earlier MPI error";
    case BB_ERR_MPI: return "MPI error (object poisoned)";
    case BB_ERR_NOMEM: return "out of memory";
    case BB_ERR_IO: return "I/O error";
    case BB_ERR_PARSE: return "parse error";
    case BB_ERR_VALIDATION: return "validation failed";
    }
    return "unknown status";
}

const char *bb_version(void) { return PACKAGE_VERSION; }

void bb_free(void *ptr) { free(ptr); }

const char *bb_stage_name(bb_stage_t stage)
{
    switch (stage) {
    case BB_STAGE_NONE: return "none";
    case BB_STAGE_PREFLIGHT: return "preflight";
    case BB_STAGE_COMPUTE: return "compute";
    case BB_STAGE_CONSUMER: return "consumer";
    case BB_STAGE_RECEIPT: return "receipt";
    case BB_STAGE_CONTRACT: return "contract";
    case BB_STAGE_TRANSPORT: return "transport";
    }
    return "unknown";
}

void bb_errorf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* A message that did not fit says so rather than ending mid-word. */
    if (n >= 0 && (size_t)n >= errlen && errlen > 4)
        memcpy(err + errlen - 4, "...", 4);
}
