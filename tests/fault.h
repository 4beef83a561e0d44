/* fault.h: the interposer's counters, for test programs linked with fault.c. */
#ifndef BB_TESTS_FAULT_H
#define BB_TESTS_FAULT_H
#include <stdint.h>
/* Calls so far of the MPI function name ("MPI_Iallreduce"), faulted or not;
 * -1 for a name the interposer does not wrap. */
long bbfault_calls(const char *name);
/* The n-th call from now (n >= 1) of the MPI function name fails, on this
 * rank, as BB_FAULT's do; n <= 0 disarms it.  -1 for a name not wrapped. */
int bbfault_arm(const char *name, long n);
/* Cross-rank checks on MPI_COMM_WORLD through PMPI_, so that they are not
 * counted: 1 iff v is the same on every rank / is nonzero on every rank. */
int bbfault_same_everywhere(int64_t v);

/* The collective calls of the agreements and the sum payload, counted so
 * far: a snapshot, and what was made since one. */
typedef struct bbfault_collectives {
    long allreduce, init, start, request_free;  /* MPI_Allreduce, MPI_Allreduce_init,
                                                   MPI_Start, MPI_Request_free */
} bbfault_collectives_t;
bbfault_collectives_t bbfault_collectives(void);
bbfault_collectives_t bbfault_collectives_since(bbfault_collectives_t before);
int bbfault_all_true(int v);

/* The bytes of the buffers handed to MPI_Allreduce and MPI_Allreduce_init in
 * any type but MPI_DOUBLE since the last reset (the union of their ranges,
 * each counted once): what the agreements' collectives were handed.  -1
 * when more distinct buffers came than it keeps. */
void bbfault_buffers_reset(void);
int64_t bbfault_buffer_bytes(void);
#endif
