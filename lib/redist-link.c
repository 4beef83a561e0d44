/* redist-link.c: the link between two codes in one world (the MDI model:
 * a driver and an engine code, or one code with two layouts of its own). */
#include "config.h"
#include "redist-private.h"

#include <stdlib.h>

/* auto measures its candidates on each plan's own executions now: nothing
 * is calibrated (see bbench.h). */
double bb_redist_link_auto_threshold(const bb_redist_link_t *link)
{
    (void)link;
    return 0.0;
}

bb_status_t bb_redist_link_create(bb_world_t *world, bb_redist_mode_t mode,
                                  int driver_ranks, bb_redist_link_t **link_out)
{
    if (world == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(world) != BB_OK)
        return BB_ERR_THREAD;
    int p = bb_world_size(world);
    /* A bad or differing argument on one rank is refused on every rank
     * after one agreement, so that no rank is left in the split. */
    int bad = link_out == NULL
              || (mode == BB_REDIST_MODE_MDI && (driver_ranks < 1 || driver_ranks >= p))
              || (mode != BB_REDIST_MODE_MDI && mode != BB_REDIST_MODE_INTRA);
    int64_t dr = mode == BB_REDIST_MODE_MDI ? driver_ranks : 0;
    int64_t args[5] = {bad, (int64_t)mode, -(int64_t)mode, dr, -dr}, all[5];
    bb_redist_link_t *l = calloc(1, sizeof *l);
    if (l == NULL)
        return BB_ERR_NOMEM;
    l->world = world;
    l->mode = mode;
    l->rank = bb_world_rank(world);
    l->size = p;
    if (mode == BB_REDIST_MODE_MDI) {
        l->driver_first = 0;
        l->driver_n = driver_ranks;
        l->engine_first = driver_ranks;
        l->engine_n = p - driver_ranks;
    } else {
        l->driver_n = l->engine_n = p;
    }
    l->is_driver = l->rank >= l->driver_first && l->rank < l->driver_first + l->driver_n;
    l->is_engine = l->rank >= l->engine_first && l->rank < l->engine_first + l->engine_n;
    int color = (mode == BB_REDIST_MODE_MDI && l->is_engine) ? 1 : 0;
    MPI_Comm wc = bb_world_comm(world);
    if (MPI_Comm_dup(wc, &l->comm) != MPI_SUCCESS) {
        free(l);
        return BB_ERR_MPI;
    }
    if (MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS
        || bb_agree_max(l->comm, args, 5, all) != MPI_SUCCESS)
        return BB_ERR_MPI; /* fatal: the caller aborts; the link is left behind */
    if (all[0] != 0 || all[1] != -all[2] || all[3] != -all[4]) {
        MPI_Comm_free(&l->comm);
        free(l);
        return BB_ERR_ARG;
    }
    if (MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS
        || MPI_Comm_split(wc, color, l->rank, &l->code) != MPI_SUCCESS
        || MPI_Comm_set_errhandler(l->code, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return BB_ERR_MPI; /* fatal: the caller aborts; the link is left behind */
    *link_out = l;
    return BB_OK;
}

MPI_Comm bb_redist_link_comm(const bb_redist_link_t *link) { return link->comm; }
MPI_Comm bb_redist_link_code_comm(const bb_redist_link_t *link) { return link->code; }
int bb_redist_link_is_driver(const bb_redist_link_t *link) { return link->is_driver; }
int bb_redist_link_is_engine(const bb_redist_link_t *link) { return link->is_engine; }
int bb_redist_link_code_rank(const bb_redist_link_t *link, int engine)
{
    return engine ? link->rank - link->engine_first : link->rank - link->driver_first;
}
int bb_redist_link_code_size(const bb_redist_link_t *link, int engine)
{
    return engine ? link->engine_n : link->driver_n;
}

bb_status_t bb_redist_link_destroy(bb_redist_link_t *link)
{
    if (link == NULL)
        return BB_OK;
    if (link->plans > 0)
        return BB_ERR_STATE;
    int a = MPI_Comm_free(&link->code), b = MPI_Comm_free(&link->comm);
    free(link);
    return (a == MPI_SUCCESS && b == MPI_SUCCESS) ? BB_OK : BB_ERR_MPI;
}
