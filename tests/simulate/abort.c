/* abort.c: rank 1 calls MPI_Abort (tests/simulate/smpi-sum.sh: smpirun exits 0
 * after MPI_Abort; bbench-smpirun must not). */
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
