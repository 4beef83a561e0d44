/* common.h: MPI-free helpers shared by libbbench, the record library and the
 * harness (not installed, not exported). */
#ifndef BB_COMMON_H
#define BB_COMMON_H

#include <stddef.h>
#include "bbench/status.h"

/* snprintf into err if err is not NULL. */
void bb_errorf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
