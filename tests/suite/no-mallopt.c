/* no-mallopt.c: preloaded into one rank of a test launch (never installed):
 * mallopt() refuses every setting, as a C library tuned otherwise on one
 * host would, so that a test sees --malloc no-trim refused on that rank
 * alone (tests/mpi/sum-allocator.sh). */
int mallopt(int param, int value);

int mallopt(int param, int value)
{
    (void)param;
    (void)value;
    return 0;
}
