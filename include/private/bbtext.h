/* bbtext.h: the MPI-free text that libbbench, the record library and the
 * programs share: status and stage names and bounded error messages.
 *
 * Header-only on purpose: every library that includes it gets its own
 * internal copy, so no function is defined in two libraries and the record
 * library needs nothing from lib/.  Not installed. */
#ifndef BB_TEXT_H
#define BB_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "bbench/status.h"

/* Static text; "unknown status" for a value outside the enum. */
static inline const char *bb_text_status(bb_status_t status)
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

/* Static name, as records spell it ("preflight", ...). */
static inline const char *bb_text_stage(bb_stage_t stage)
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

/* snprintf into err if err is not NULL; a message that does not fit ends
 * in "..." rather than mid-word. */
static inline void bb_errorf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void bb_errorf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= errlen && errlen > 4)
        memcpy(err + errlen - 4, "...", 4);
}

#endif
