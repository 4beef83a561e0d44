/* world.c: binding the world communicator and its owner thread. */
#include "config.h"
#include "internal.h"
#include "private/mpi-compat.h"

#include <stdlib.h>

bb_status_t bb_world_bind(MPI_Comm comm, bb_world_t **world_out)
{
    int initialized = 0, finalized = 0, is_main = 0, level = 0;

    if (world_out == NULL || comm == MPI_COMM_NULL)
        return BB_ERR_ARG;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return BB_ERR_STATE;
    bb_mpi_is_thread_main(&is_main);
    if (!is_main)
        return BB_ERR_THREAD;
    bb_mpi_query_thread(&level);
    if (level < MPI_THREAD_FUNNELED)
        return BB_ERR_THREAD;

    bb_world_t *world = calloc(1, sizeof *world);
    if (world == NULL)
        return BB_ERR_NOMEM;
    world->comm = comm;
    world->thread_level = level;
    world->owner = pthread_self();
    if (MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN) != MPI_SUCCESS
        || MPI_Comm_rank(comm, &world->rank) != MPI_SUCCESS
        || MPI_Comm_size(comm, &world->size) != MPI_SUCCESS) {
        free(world);
        return BB_ERR_MPI;
    }
    *world_out = world;
    return BB_OK;
}

void bb_world_release(bb_world_t *world) { free(world); }

MPI_Comm bb_world_comm(const bb_world_t *world) { return world->comm; }
int bb_world_rank(const bb_world_t *world) { return world->rank; }
int bb_world_size(const bb_world_t *world) { return world->size; }
int bb_world_thread_level(const bb_world_t *world) { return world->thread_level; }

bb_status_t bb_world_check_owner(const bb_world_t *world)
{
    if (world == NULL)
        return BB_ERR_ARG;
    return pthread_equal(pthread_self(), world->owner) ? BB_OK : BB_ERR_THREAD;
}

const char *bb_thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    }
    return "unknown";
}
