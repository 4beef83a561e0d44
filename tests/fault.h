/* fault.h: the interposer's counters, for test programs linked with fault.c. */
#ifndef BB_TESTS_FAULT_H
#define BB_TESTS_FAULT_H
/* Calls so far of the MPI function name ("MPI_Iallreduce"), faulted or not;
 * -1 for a name the interposer does not wrap. */
long bbfault_calls(const char *name);
#endif
