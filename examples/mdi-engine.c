/* mdi-engine.c: the engine code of an MDI launch, on libbbench's
 * redistribution layer (doc/mdi.md).  It holds the atoms block-cyclic over
 * its own ranks and answers the driver's commands (examples/mdi-driver.c):
 *
 *   mpiexec -n 2 ./mdi-driver : -n 3 ./mdi-engine
 *
 * MDI_Set_Map on the engine stores the map for a command (nothing is sent);
 * the driver's ">MAP" for the command creates the plan with it.  Every
 * --remap K steps the engine moves its atoms: a new map, set on the
 * plans with bb_redist_plan_set_engine_map (collective over the engine
 * only, nothing sent): until MDI_Update_Maps (--update), a ">COORDS" arrives
 * in the layout the driver knows and is converted here (a second
 * Alltoallw), and the first "<FORCES" carries the new map to the driver
 * (recv_dist MAP).  Every coordinate is checked exactly; options and exit
 * codes in examples/mdi.h. */
#include "mdi.h"

static const char *const prog = "mdi-engine";

enum { COORDS, FORCES, ENERGY, PLANS };

static int report(int rank, const char *what, bb_status_t st, const bb_redist_metrics_t *m)
{
    if (st == BB_REFUSED && m != NULL)
        fprintf(stderr, "%s: rank %d: %s refused: stage %s, sequence %lld\n", prog, rank, what,
                bb_stage_name(m->refusal.stage), (long long)m->refusal.sequence);
    else
        fprintf(stderr, "%s: rank %d: %s: %s\n", prog, rank, what, bb_status_string(st));
    return st == BB_ERR_MPI || st == BB_ERR_POISONED ? BB_EXIT_FATAL : BB_EXIT_FAILURE;
}

/* Local.  This rank's share of a plan's engine-side buffer (3 doubles per
 * atom), grown as the map changes. */
static double *engine_buffer(double **buf, int64_t *cap, int64_t atoms)
{
    if (atoms > *cap) {
        double *b = realloc(*buf, (size_t)atoms * 3 * sizeof *b);
        if (b == NULL)
            MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
        *buf = b;
        *cap = atoms;
    }
    return *buf;
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
    bb_map_t *emap = NULL, *scalar_map = NULL;
    double *x = NULL;
    int64_t xcap = 0;
    if (bb_world_bind(MPI_COMM_WORLD, &world) != BB_OK)
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    int wrank = bb_world_rank(world);
    bb_status_t st;
    rc = mdi_open(world, &o, prog, 1, &l);
    if (rc != 0)
        goto release_world;
    int me = bb_redist_link_code_rank(l, 1), pe = bb_redist_link_code_size(l, 1);
    MPI_Comm code = bb_redist_link_code_comm(l);

    /* MDI_Create_Map and MDI_Set_Map on the engine: the maps of its
     * commands, stored; none for a command it does not know. */
    int64_t epoch = 0, map_atoms = o.hostile && strcmp(o.hostile, "n") == 0 ? o.atoms + 1
                                                                           : o.atoms;
    if (mdi_engine_map(map_atoms, me, pe, epoch, &emap) != BB_OK
        || mdi_scalar_map(me, &scalar_map) != BB_OK)
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    const char *names[PLANS] = {">COORDS", "<FORCES", "<ENERGY"};

    int step = -1, got_exit = 0, coords_stale = 0, forces_stale = 0;
    char cmd[MDI_COMMAND_LEN];
    while (rc == BB_EXIT_OK) {
        if (mdi_command(l, cmd) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
        cmd[MDI_COMMAND_LEN - 1] = '\0';
        if (strcmp(cmd, "EXIT") == 0) {
            got_exit = 1;
            break;
        }
        bb_redist_metrics_t m;
        mdi_calls_t before = mdi_calls_now();
        if (strncmp(cmd, ">MAP ", 5) == 0) {
            /* The driver's map arrives; the engine joins with the map it set
             * for the command, or none (refused on every rank). */
            int c = 0;
            while (c < PLANS && strcmp(cmd + 5, names[c]) != 0)
                c++;
            if (c < PLANS && plan[c] != NULL) {
                /* a later ">MAP": the driver moved its atoms; the engine
                 * takes part, its own map unchanged */
                bb_redist_setup_t su;
                if (o.hostile && strcmp(o.hostile, "map-alone") == 0) {
                    /* misuse: the driver sends ">MAP", this engine a '<' */
                    double *fb = engine_buffer(&x, &xcap, bb_map_count(emap));
                    bb_redist_contract_t cf = {BB_REDIST_RECEIVE, o.atoms, 24, o.atoms};
                    st = bb_redist_plan_execute(plan[FORCES], &cf, fb, NULL, &m);
                    rc = report(wrank, "<FORCES (for >MAP)", st, &m);
                    break;
                }
                before = mdi_calls_now();
                st = bb_redist_plan_set_driver_map(plan[c], NULL, &su);
                if (st != BB_OK) {
                    fprintf(stderr, "%s: rank %d: %s refused: stale epoch %d, the codes "
                            "disagree on N %d\n", prog, wrank, cmd, su.stale_epoch,
                            su.n_mismatch);
                    rc = st == BB_REFUSED ? BB_EXIT_FAILURE : BB_EXIT_FATAL;
                    break;
                }
                bad |= mdi_calls_check(prog, wrank, cmd, before, 0,
                                       MDI_DRIVER_MAP_ALLREDUCE_ENGINE);
                if (c == COORDS)
                    coords_stale = 0; /* the driver learned the engine's map too */
                else
                    forces_stale = 0;
                continue;
            }
            const bb_map_t *mine = c == ENERGY ? scalar_map : c < PLANS ? emap : NULL;
            bb_redist_plan_t *p = NULL;
            bb_redist_setup_t su;
            st = bb_redist_plan_create(l, BB_REDIST_DIRECT, cmd[5] == '<' ? '<' : '>',
                                       c == ENERGY ? 8 : 24, NULL, mine, &p, &su);
            if (st != BB_OK) {
                fprintf(stderr, "%s: rank %d: %s refused: engine map missing %d, the codes "
                        "disagree on N %d\n", prog, wrank, cmd, su.engine_fault.missing,
                        su.n_mismatch);
                rc = st == BB_REFUSED ? BB_EXIT_FAILURE : BB_EXIT_FATAL;
                break;
            }
            plan[c] = p;
        } else if (strcmp(cmd, "@STEP") == 0) {
            step++;
            if (o.remap > 0 && step > 0 && step % o.remap == 0) {
                /* The atoms move: MDI_Set_Map on the engine, nothing sent. */
                bb_map_t *moved = NULL;
                if (mdi_engine_map(o.atoms, me, pe, ++epoch, &moved) != BB_OK)
                    MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
                for (int c = COORDS; c <= FORCES && rc == BB_EXIT_OK; c++)
                    if ((st = bb_redist_plan_set_engine_map(plan[c], moved, NULL)) != BB_OK)
                        rc = report(wrank, "set_engine_map", st, NULL);
                bb_map_free(emap);
                emap = moved;
                coords_stale = forces_stale = 1;
            }
        } else if (strcmp(cmd, "UPDATE_MAPS") == 0) {
            for (int c = COORDS; c <= FORCES && rc == BB_EXIT_OK; c++) {
                before = mdi_calls_now();
                if ((st = bb_redist_plan_update_maps(plan[c], NULL)) != BB_OK)
                    rc = report(wrank, "UPDATE_MAPS", st, NULL);
                else
                    bad |= mdi_calls_check(prog, wrank, "UPDATE_MAPS", before, 0, 4);
            }
            coords_stale = forces_stale = 0;
        } else if (strcmp(cmd, ">COORDS") == 0) {
            if (o.hostile && strcmp(o.hostile, "update") == 0 && coords_stale) {
                /* misuse: MDI_Update_Maps here alone, the driver sending */
                st = bb_redist_plan_update_maps(plan[COORDS], NULL);
                rc = report(wrank, "UPDATE_MAPS (for >COORDS)", st, NULL);
                break;
            }
            const bb_map_t *rm = bb_redist_plan_recv_map(plan[COORDS]);
            int64_t count = bb_map_count(rm);
            const int64_t *idx = bb_map_indices(rm);
            double *xb = engine_buffer(&x, &xcap, count);
            for (int64_t i = 0; i < 3 * count; i++)
                xb[i] = 0.5; /* no coordinate is 0.5 */
            bb_redist_contract_t c = {BB_REDIST_SEND, o.atoms, 24, o.atoms};
            before = mdi_calls_now();
            st = bb_redist_plan_execute(plan[COORDS], &c, NULL, xb, &m);
            if (st != BB_OK) {
                rc = report(wrank, cmd, st, &m);
                break;
            }
            /* Stale: delivered in the layout the driver knows, converted
             * here by a second Alltoallw (the proposal's second step). */
            bad |= mdi_calls_check(prog, wrank, ">COORDS", before, coords_stale ? 2 : 1, 1);
            if (m.steps != (coords_stale ? 2 : 1)) {
                fprintf(stderr, "%s: rank %d: >COORDS in %d steps\n", prog, wrank, m.steps);
                bad = 1;
            }
            for (int64_t i = 0; i < count; i++)
                for (int k = 0; k < 3; k++)
                    if (xb[3 * i + k] != mdi_coord(idx[i], k, step)) {
                        if (bad < 2)
                            fprintf(stderr, "%s: rank %d: step %d: atom %lld coordinate %d "
                                    "is %g\n", prog, wrank, step, (long long)idx[i], k,
                                    xb[3 * i + k]);
                        bad = 2;
                    }
        } else if (strcmp(cmd, "<FORCES") == 0) {
            if (o.hostile && strcmp(o.hostile, "order") == 0) {
                /* misuse: answers "<FORCES" with ">COORDS" (receiving) */
                int64_t count = bb_map_count(bb_redist_plan_recv_map(plan[COORDS]));
                double *xb = engine_buffer(&x, &xcap, count);
                for (int64_t i = 0; i < 3 * count; i++)
                    xb[i] = 0.5;
                bb_redist_contract_t c = {BB_REDIST_SEND, o.atoms, 24, o.atoms};
                st = bb_redist_plan_execute(plan[COORDS], &c, NULL, xb, &m);
                int64_t touched = 0;
                for (int64_t i = 0; i < 3 * count; i++)
                    touched += xb[i] != 0.5;
                rc = report(wrank, ">COORDS (for <FORCES)", st, &m);
                fprintf(stderr, "%s: rank %d: %lld received elements written\n", prog, wrank,
                        (long long)touched);
                break;
            }
            const bb_map_t *sm = bb_redist_plan_send_map(plan[FORCES]);
            int64_t count = bb_map_count(sm);
            const int64_t *idx = bb_map_indices(sm);
            double *fb = engine_buffer(&x, &xcap, count);
            for (int64_t i = 0; i < count; i++)
                for (int k = 0; k < 3; k++)
                    fb[3 * i + k] = -2.0 * mdi_coord(idx[i], k, step);
            bb_redist_contract_t c = {BB_REDIST_RECEIVE, o.atoms, 24, o.atoms};
            before = mdi_calls_now();
            st = bb_redist_plan_execute(plan[FORCES], &c, fb, NULL, &m);
            if (st != BB_OK) {
                rc = report(wrank, cmd, st, &m);
                break;
            }
            bad |= mdi_calls_check(prog, wrank, "<FORCES", before, 1, forces_stale ? 4 : 1);
            forces_stale = 0;
        } else if (strcmp(cmd, "<ENERGY") == 0) {
            /* The energy of this rank's atoms, summed over the engine (exact:
             * integers), held by its rank 0: a message of one element. */
            double part = 0, e = 0;
            for (int64_t i = 0; i < bb_map_count(emap); i++)
                part += mdi_coord(bb_map_indices(emap)[i], 0, step);
            MPI_Allreduce(&part, &e, 1, MPI_DOUBLE, MPI_SUM, code);
            bb_redist_contract_t c = {BB_REDIST_RECEIVE, 1, 8, 1};
            before = mdi_calls_now();
            st = bb_redist_plan_execute(plan[ENERGY], &c, &e, NULL, &m);
            if (st != BB_OK) {
                rc = report(wrank, cmd, st, &m);
                break;
            }
            bad |= mdi_calls_check(prog, wrank, "<ENERGY", before, 1, 1);
        } else {
            fprintf(stderr, "%s: rank %d: unknown command \"%s\"\n", prog, wrank, cmd);
            rc = BB_EXIT_FAILURE; /* every engine rank received it alike */
            break;
        }
    }
    /* After a refusal the driver stops too and sends EXIT. */
    if (!got_exit && mdi_command(l, cmd) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc == BB_EXIT_OK && any_bad) {
        fprintf(stderr, "%s: rank %d: %s\n", prog, wrank,
                any_bad >= 2 ? "wrong elements (see the messages above)"
                             : "MPI calls other than doc/mdi.md's");
        rc = BB_EXIT_FAILURE;
    }
    for (int c = 0; c < PLANS; c++)
        bb_redist_plan_destroy(plan[c]);
    free(x);
    bb_map_free(emap);
    bb_map_free(scalar_map);
    if (bb_redist_link_destroy(l) != BB_OK && rc == BB_EXIT_OK)
        rc = BB_EXIT_FATAL;
release_world:
    bb_world_release(world);
    MPI_Finalize();
    return rc;
}
