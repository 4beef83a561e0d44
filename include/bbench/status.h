/*
 * bbench/status.h: the MPI-free part of libbbench's API, included by
 * <bbench.h>: status codes, the exit codes of bbench's programs, refusal
 * provenance, and the export marker.  A tool that reads records needs no
 * MPI and can include this header alone.
 */
#ifndef BBENCH_STATUS_H
#define BBENCH_STATUS_H

#include <stdint.h>

/* BB_EXPORT marks the library's API.  libbbench is built with
 * -fvisibility=hidden and BB_BUILDING_LIBBBENCH defined, so only marked
 * functions are exported; for users of the header it expands to nothing. */
#if defined(BB_BUILDING_LIBBBENCH) && defined(__GNUC__)
#define BB_EXPORT __attribute__((visibility("default")))
#else
#define BB_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bb_status {
    BB_OK = 0,
    BB_REFUSED,        /* collective refusal: every rank returns it, identical
                          diagnostics, no payload published */
    BB_ERR_ARG,        /* invalid argument, found locally before any MPI call */
    BB_ERR_THREAD,     /* caller is not the thread that bound the world */
    BB_ERR_REENTRY,    /* call from inside a callback of the same object */
    BB_ERR_STATE,      /* wrong state (finished ticket, active phase, ...) */
    BB_ERR_POISONED,   /* poisoned by an earlier MPI error: abort the job */
    BB_ERR_MPI,        /* an MPI call failed now; the object is poisoned and
                          retained: abort the job */
    BB_ERR_NOMEM,      /* allocation failed */
    BB_ERR_IO,         /* file system error */
    BB_ERR_PARSE,      /* malformed text (option value, JSON) */
    BB_ERR_VALIDATION  /* a measured result was wrong (checksum, pattern) */
} bb_status_t;

/* Static string naming the status; never NULL. */
BB_EXPORT const char *bb_status_string(bb_status_t status);

/* Exit codes of every bbench executable. */
enum {
    BB_EXIT_OK = 0,       /* everything measured as asked */
    BB_EXIT_FAILURE = 1,  /* measured failure: unrequested refusal, validation */
    BB_EXIT_USAGE = 2,    /* bad command line or unusable input */
    BB_EXIT_FATAL = 3     /* fatal: MPI error, poisoned phase, internal error */
};

/* Version string of the library, e.g. "0.1.0"; static. */
BB_EXPORT const char *bb_version(void);

/* Release memory the library handed to the caller (results, lists). */
BB_EXPORT void bb_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Refusal provenance (shared by every phase)                               */
/* ------------------------------------------------------------------------ */

/* Stage codes 1..4 are the packed codes of the transfer status word
 * (8*rank + stage); contract and transport are never packed. */
typedef enum bb_stage {
    BB_STAGE_NONE = 0,
    BB_STAGE_PREFLIGHT = 1,
    BB_STAGE_COMPUTE = 2,
    BB_STAGE_CONSUMER = 3,
    BB_STAGE_RECEIPT = 4,
    BB_STAGE_CONTRACT = 5,   /* fields disagree, no local refusal */
    BB_STAGE_TRANSPORT = 6   /* local MPI failure: fatal, not agreed */
} bb_stage_t;

/* Static name ("preflight", ...); "none" for BB_STAGE_NONE. */
BB_EXPORT const char *bb_stage_name(bb_stage_t stage);

typedef struct bb_refusal {
    bb_stage_t stage;
    int rank;          /* -1: none (pure contract mismatch, or not carried) */
    int64_t sequence;  /* the maximum presented sequence: same on every rank */
} bb_refusal_t;

#ifdef __cplusplus
}
#endif
#endif /* BBENCH_STATUS_H */
