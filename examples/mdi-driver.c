/* mdi-driver.c: the driver code of an MDI launch, on libbbench's
 * redistribution layer (doc/mdi.md maps each MDI call to it).  It holds the
 * atoms in the standardized distribution of its own ranks and runs an MD
 * loop against the engine (examples/mdi-engine.c):
 *
 *   mpiexec -n 2 ./mdi-driver : -n 3 ./mdi-engine
 *
 * Setup: for each command, MDI_Set_Map on the driver (">MAP" sent to the
 * engine) is bb_redist_plan_create with the driver's map, the engine
 * joining with the map it set for the command.  Each step: "@STEP" (the
 * engine may move its atoms, telling nobody), ">COORDS" (the driver's
 * coordinates to the engine), "<FORCES" (the forces back), "<ENERGY" (one
 * element); with --update, "UPDATE_MAPS" (MDI_Update_Maps) after each move;
 * with --driver-remap K, every K steps the driver moves its own atoms and
 * sends ">MAP" again (bb_redist_plan_set_driver_map).
 * Every force and energy is checked exactly; options and exit codes in
 * examples/mdi.h. */
#include "mdi.h"

static const char *const prog = "mdi-driver";

enum { COORDS, FORCES, ENERGY, VELOCITIES, PLANS };

/* One command on every rank of both codes: its name through the channel. */
static int send_command(bb_redist_link_t *l, const char *name)
{
    char cmd[MDI_COMMAND_LEN] = {0};
    snprintf(cmd, sizeof cmd, "%s", name);
    return mdi_command(l, cmd);
}

/* Says why a library call failed, on this rank; the exit code for it. */
static int report(int rank, const char *what, bb_status_t st, const bb_redist_metrics_t *m)
{
    if (st == BB_REFUSED && m != NULL)
        fprintf(stderr, "%s: rank %d: %s refused: stage %s, sequence %lld\n", prog, rank, what,
                bb_stage_name(m->refusal.stage), (long long)m->refusal.sequence);
    else
        fprintf(stderr, "%s: rank %d: %s: %s\n", prog, rank, what, bb_status_string(st));
    return st == BB_REFUSED ? BB_EXIT_FAILURE
           : st == BB_ERR_MPI || st == BB_ERR_POISONED ? BB_EXIT_FATAL : BB_EXIT_FAILURE;
}

int main(int argc, char **argv)
{
    mdi_opts_t o;
    int rc = mdi_start(&argc, &argv, prog, &o), bad = 0;
    if (rc != 0)
        return rc;
    bb_world_t *world = NULL;
    bb_redist_link_t *l = NULL;
    bb_redist_plan_t *plan[PLANS] = {NULL};
    bb_map_t *coords_map = NULL, *scalar_map = NULL;
    double *x = NULL, *f = NULL;
    if (bb_world_bind(MPI_COMM_WORLD, &world) != BB_OK)
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    int wrank = bb_world_rank(world);
    bb_status_t st;
    rc = mdi_open(world, &o, prog, 0, &l);
    if (rc != 0)
        goto release_world;
    int me = bb_redist_link_code_rank(l, 0), pd = bb_redist_link_code_size(l, 0),
        pe = bb_redist_link_code_size(l, 1);
    MPI_Comm code = bb_redist_link_code_comm(l);

    /* MDI_Create_Map: the driver's atoms, the standardized distribution. */
    int64_t depoch = 0;
    if (mdi_driver_map(o.atoms, me, pd, depoch, &coords_map) != BB_OK
        || mdi_scalar_map(me, &scalar_map) != BB_OK) {
        fprintf(stderr, "%s: rank %d: cannot make the maps\n", prog, wrank);
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    }
    /* MDI_Set_Map on the driver: ">MAP" for each command. */
    const char *names[PLANS] = {">COORDS", "<FORCES", "<ENERGY", ">VELOCITIES"};
    int nplans = o.hostile && strcmp(o.hostile, "unset") == 0 ? PLANS : ENERGY + 1;
    for (int c = 0; c < nplans; c++) {
        char cmd[MDI_COMMAND_LEN];
        snprintf(cmd, sizeof cmd, ">MAP %s", names[c]);
        send_command(l, cmd);
        bb_redist_setup_t su;
        st = bb_redist_plan_create(l, BB_REDIST_DIRECT, names[c][0], c == ENERGY ? 8 : 24,
                                   c == ENERGY ? scalar_map : coords_map, NULL, &plan[c], &su);
        if (st != BB_OK) {
            fprintf(stderr, "%s: rank %d: %s refused: engine map missing %d, the codes "
                    "disagree on N %d\n", prog, wrank, cmd, su.engine_fault.missing,
                    su.n_mismatch);
            rc = st == BB_REFUSED ? BB_EXIT_FAILURE : BB_EXIT_FATAL;
            goto exit_engine;
        }
    }

    /* Whether the driver knows the engine's current map for each plan (the
     * test build's expected counts, doc/mdi.md): the engine moves at the
     * steps the shared --remap gives. */
    int forces_stale = 0;
    for (int s = 0; s < o.steps && rc == BB_EXIT_OK; s++) {
        send_command(l, "@STEP");
        if (o.remap > 0 && s > 0 && s % o.remap == 0) {
            forces_stale = 1;
            if (o.update) {
                send_command(l, "UPDATE_MAPS");
                for (int c = COORDS; c <= FORCES && rc == BB_EXIT_OK; c++) {
                    mdi_calls_t before = mdi_calls_now();
                    st = bb_redist_plan_update_maps(plan[c], NULL);
                    if (st != BB_OK)
                        rc = report(wrank, "UPDATE_MAPS", st, NULL);
                    else
                        bad |= mdi_calls_check(prog, wrank, "UPDATE_MAPS", before, 0, 4);
                }
                forces_stale = 0;
            }
        }
        if (rc == BB_EXIT_OK && o.driver_remap > 0 && s > 0 && s % o.driver_remap == 0) {
            /* The driver moves its atoms: MDI_Set_Map on the driver again,
             * its ">MAP" for each command (the hostile case reuses the
             * epoch). */
            bb_map_t *moved = NULL;
            int64_t d = o.hostile && strcmp(o.hostile, "driver-map") == 0 ? depoch : depoch + 1;
            if (mdi_driver_map(o.atoms, me, pd, d, &moved) != BB_OK)
                MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
            for (int c = COORDS; c <= FORCES && rc == BB_EXIT_OK; c++) {
                char cmd[MDI_COMMAND_LEN];
                snprintf(cmd, sizeof cmd, ">MAP %s", names[c]);
                send_command(l, cmd);
                bb_redist_setup_t su;
                mdi_calls_t before = mdi_calls_now();
                st = bb_redist_plan_set_driver_map(plan[c], moved, &su);
                if (st != BB_OK) {
                    fprintf(stderr, "%s: rank %d: %s refused: stale epoch %d, the codes "
                            "disagree on N %d (%s)\n", prog, wrank, cmd, su.stale_epoch,
                            su.n_mismatch, bb_status_string(st));
                    rc = st == BB_REFUSED ? BB_EXIT_FAILURE : BB_EXIT_FATAL;
                } else {
                    bad |= mdi_calls_check(prog, wrank, cmd, before, 0, MDI_DRIVER_MAP_ALLREDUCE_DRIVER);
                }
            }
            bb_map_free(coords_map);
            coords_map = moved;
            depoch = d;
            forces_stale = 0; /* the rebuilt cross part holds the engine's map */
        }
        if (rc != BB_EXIT_OK)
            break;
        int64_t count = bb_map_count(coords_map);
        const int64_t *idx = bb_map_indices(coords_map);
        double *nx = realloc(x, (size_t)(count ? count : 1) * 3 * sizeof *x);
        if (nx == NULL)
            MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
        x = nx;
        nx = realloc(f, (size_t)(count ? count : 1) * 3 * sizeof *f);
        if (nx == NULL)
            MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
        f = nx;
        for (int64_t i = 0; i < count; i++)
            for (int k = 0; k < 3; k++)
                x[3 * i + k] = mdi_coord(idx[i], k, s);
        bb_redist_metrics_t m;
        bb_redist_contract_t cx = {BB_REDIST_SEND, o.atoms, 24, o.atoms};
        send_command(l, ">COORDS");
        mdi_calls_t before = mdi_calls_now();
        st = bb_redist_plan_execute(plan[COORDS], &cx, x, NULL, &m);
        if (st != BB_OK) {
            rc = report(wrank, ">COORDS", st, &m);
            break;
        }
        /* A stale '>' crosses in the layout the driver knows: one exchange
         * here, the second inside the engine. */
        bad |= mdi_calls_check(prog, wrank, ">COORDS", before, 1, 1);

        bb_redist_contract_t cf = {BB_REDIST_RECEIVE, o.atoms, 24, o.atoms};
        for (int64_t i = 0; i < 3 * count; i++)
            f[i] = 0.5; /* no force is 0.5: an element left unwritten shows */
        send_command(l, "<FORCES");
        before = mdi_calls_now();
        st = bb_redist_plan_execute(plan[FORCES], &cf, NULL, f, &m);
        if (st != BB_OK) {
            rc = report(wrank, "<FORCES", st, &m);
            int64_t touched = 0;
            for (int64_t i = 0; i < 3 * count; i++)
                touched += f[i] != 0.5;
            fprintf(stderr, "%s: rank %d: %lld received elements written\n", prog, wrank,
                    (long long)touched);
            break;
        }
        /* The engine's new map came with the reply: three more agreements
         * to rebuild the cross part (regular maps: no index crosses). */
        bad |= mdi_calls_check(prog, wrank, "<FORCES", before, 1, forces_stale ? 4 : 1);
        if (m.map_sent != forces_stale || m.recv_dist != (forces_stale ? BB_RECV_DIST_MAP
                                                                        : BB_RECV_DIST_DATA)) {
            fprintf(stderr, "%s: rank %d: step %d <FORCES: map_sent %d recv_dist %lld\n", prog,
                    wrank, s, m.map_sent, (long long)m.recv_dist);
            bad = 1;
        }
        forces_stale = 0;
        for (int64_t i = 0; i < count; i++)
            for (int k = 0; k < 3; k++)
                if (f[3 * i + k] != -2.0 * mdi_coord(idx[i], k, s)) {
                    if (bad < 2)
                        fprintf(stderr, "%s: rank %d: step %d: atom %lld force %d is %g\n",
                                prog, wrank, s, (long long)idx[i], k, f[3 * i + k]);
                    bad = 2;
                }

        double e = -1;
        bb_redist_contract_t ce = {BB_REDIST_RECEIVE, 1, 8, 1};
        send_command(l, "<ENERGY");
        before = mdi_calls_now();
        st = bb_redist_plan_execute(plan[ENERGY], &ce, NULL, &e, &m);
        if (st != BB_OK) {
            rc = report(wrank, "<ENERGY", st, &m);
            break;
        }
        bad |= mdi_calls_check(prog, wrank, "<ENERGY", before, 1, 1);
        MPI_Bcast(&e, 1, MPI_DOUBLE, 0, code); /* the driver's rank 0 received it */
        if (e != mdi_energy(o.atoms, s)) {
            fprintf(stderr, "%s: rank %d: step %d: energy %.17g, not %.17g\n", prog, wrank, s,
                    e, mdi_energy(o.atoms, s));
            bad = 2;
        }
    }
exit_engine:
    send_command(l, "EXIT");
    /* Exact on every element and rank of both codes, or exit 1 everywhere. */
    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc == BB_EXIT_OK && any_bad) {
        fprintf(stderr, "%s: rank %d: %s\n", prog, wrank,
                any_bad >= 2 ? "wrong elements (see the messages above)"
                             : "MPI calls other than doc/mdi.md's");
        rc = BB_EXIT_FAILURE;
    }
    if (rc == BB_EXIT_OK && me == 0)
        printf("%s: %d steps of %lld atoms exact on every element and rank: driver %d ranks, "
               "engine %d ranks, codes found by %s, engine moves every %d steps, update %s, "
               "driver moves every %d steps\n",
               prog, o.steps, (long long)o.atoms, pd, pe, bb_redist_link_found_by(l), o.remap,
               o.update ? "yes" : "no", o.driver_remap);
    for (int c = 0; c < PLANS; c++)
        bb_redist_plan_destroy(plan[c]);
    free(x);
    free(f);
    bb_map_free(coords_map);
    bb_map_free(scalar_map);
    if (bb_redist_link_destroy(l) != BB_OK && rc == BB_EXIT_OK)
        rc = BB_EXIT_FATAL;
release_world:
    bb_world_release(world);
    MPI_Finalize();
    return rc;
}
