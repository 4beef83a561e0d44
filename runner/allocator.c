/* allocator.c: the C library's allocator, stated in the record and set by
 * --malloc.  glibc returns freed memory at the heap's top to the system
 * once it exceeds the trim threshold, and raises its mmap threshold after
 * the first large free; a call that then takes a temporary from the heap
 * faults its pages in again.  no-trim keeps both fixed, so that a reader
 * can see how much of a fresh-buffer row is that refaulting. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* smpicc makes every file include SMPI's helpers first, whose malloc and
 * calloc macros malloc.h's declarations cannot follow; SMPI intercepts
 * the allocator anyway. */
#if defined(HAVE_MALLOC_H) && !defined(BB_SMPI)
#define BB_HAVE_MALLOPT_H 1
#include <malloc.h>
#endif
#ifdef HAVE_GNU_LIBC_VERSION_H
#include <gnu/libc-version.h>
#endif

#include "runner-int.h"

extern char **environ;

/* A sanitizer build allocates through the sanitizer, whatever the C library. */
#if defined(__SANITIZE_ADDRESS__)
#define BB_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BB_SANITIZER_ALLOCATOR 1
#endif
#endif

/* The largest mmap threshold glibc takes on a 64-bit system (half its heap
 * size, 32 MiB), and a trim threshold no benchmark buffer reaches. */
#define NO_TRIM_MMAP_THRESHOLD (32 * 1024 * 1024)
#define NO_TRIM_TRIM_THRESHOLD INT_MAX

const char *bb_malloc_name(bb_malloc_t policy)
{
    return policy == BB_MALLOC_NO_TRIM ? "no-trim" : "default";
}

int bb_malloc_apply(bb_malloc_t policy, char *why, size_t len)
{
    if (policy == BB_MALLOC_DEFAULT)
        return 0;
#if defined(BB_SANITIZER_ALLOCATOR)
    snprintf(why, len, "--malloc no-trim: this build allocates through AddressSanitizer, "
             "which has no trim to turn off (configure without --enable-sanitizers)");
#elif defined(BB_SMPI)
    snprintf(why, len, "--malloc no-trim: under SMPI every rank shares one process and "
             "SimGrid intercepts the allocator (use an MPI build)");
#elif defined(BB_HAVE_MALLOPT_H) && defined(HAVE_MALLOPT) && defined(M_TRIM_THRESHOLD) \
    && defined(M_MMAP_THRESHOLD)
    if (mallopt(M_TRIM_THRESHOLD, NO_TRIM_TRIM_THRESHOLD) == 1
        && mallopt(M_MMAP_THRESHOLD, NO_TRIM_MMAP_THRESHOLD) == 1)
        return 0;
    snprintf(why, len, "--malloc no-trim: mallopt refused M_TRIM_THRESHOLD %d or "
             "M_MMAP_THRESHOLD %d", NO_TRIM_TRIM_THRESHOLD, NO_TRIM_MMAP_THRESHOLD);
#else
    snprintf(why, len, "--malloc no-trim: this C library has no mallopt(M_TRIM_THRESHOLD, "
             "M_MMAP_THRESHOLD) (glibc's)");
#endif
    return -1;
}

/* The variables that change glibc's allocator: MALLOC_* and GLIBC_TUNABLES. */
static int tunes_allocator(const char *entry)
{
    return strncmp(entry, "MALLOC_", 7) == 0 || strncmp(entry, "GLIBC_TUNABLES=", 15) == 0;
}

cJSON *bb_malloc_json(bb_malloc_t policy)
{
    cJSON *a = cJSON_CreateObject();
    if (a == NULL)
        return NULL;
#if defined(BB_SANITIZER_ALLOCATOR)
    cJSON_AddStringToObject(a, "library", "AddressSanitizer");
#elif defined(HAVE_GNU_GET_LIBC_VERSION)
    cJSON_AddStringToObject(a, "library", "glibc");
    cJSON_AddStringToObject(a, "version", gnu_get_libc_version());
#else
    cJSON_AddNullToObject(a, "library");
    cJSON_AddStringToObject(a, "library_reason", "not glibc (no gnu_get_libc_version)");
#endif
    cJSON_AddStringToObject(a, "policy", bb_malloc_name(policy));
    if (policy == BB_MALLOC_NO_TRIM) {
        cJSON_AddNumberToObject(a, "trim_threshold_bytes", NO_TRIM_TRIM_THRESHOLD);
        cJSON_AddNumberToObject(a, "mmap_threshold_bytes", NO_TRIM_MMAP_THRESHOLD);
    } else {
        cJSON_AddStringToObject(a, "thresholds", "the library's (glibc: dynamic, raised by "
                                "the first large free, unless the environment fixes them)");
    }
    cJSON *env = cJSON_AddObjectToObject(a, "environment");
    for (char **e = environ; env != NULL && e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (eq == NULL || !tunes_allocator(*e))
            continue;
        char name[64];
        size_t n = (size_t)(eq - *e) < sizeof name - 1 ? (size_t)(eq - *e) : sizeof name - 1;
        memcpy(name, *e, n);
        name[n] = '\0';
        cJSON_AddStringToObject(env, name, eq + 1);
    }
    return a;
}

int bb_malloc_tuned(bb_malloc_t policy)
{
    if (policy != BB_MALLOC_DEFAULT)
        return 1;
    for (char **e = environ; e != NULL && *e != NULL; e++)
        if (tunes_allocator(*e))
            return 1;
    return 0;
}
