/* common.h: MPI-free helpers of libbbench and the harness (not installed,
 * not exported); the text the record library shares is in bbtext.h. */
#ifndef BB_COMMON_H
#define BB_COMMON_H

#include "bbtext.h"

#endif
