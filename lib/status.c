/* status.c: the MPI-free part of libbbench's API (status and stage names,
 * version, memory); the text itself is include/private/bbtext.h's, which the record
 * library includes too. */
#include "config.h"
#include "private/bbtext.h"

#include <stdlib.h>

const char *bb_status_string(bb_status_t status) { return bb_text_status(status); }

const char *bb_version(void) { return PACKAGE_VERSION; }

void bb_free(void *ptr) { free(ptr); }

const char *bb_stage_name(bb_stage_t stage) { return bb_text_stage(stage); }
