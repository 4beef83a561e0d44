/* examples/mdi.h: what the MDI driver and engine examples share (doc/mdi.md):
 * the options, the command channel, the layouts and the values of an MD
 * step.  Each example is one code of an MDI launch:
 *
 *   mpiexec -n 2 ./mdi-driver : -n 3 ./mdi-engine
 *
 * the codes found from the launch's MPI_APPNUM, or from MDI's option string
 * (-mdi "-role DRIVER -name md -method MPI").  Options, the same for both
 * programs: --atoms N (1000), --steps S (6), --remap K (the engine moves
 * its atoms every K steps, 2; 0 never), --driver-remap K (the driver moves
 * its own every K steps, sending ">MAP" again; 0, never), --update
 * (MDI_Update_Maps after each engine move), --hostile CASE (a misuse,
 * doc/mdi.md).  Exit: 0 every element
 * exact; 1 a refusal or a wrong element (a message on every rank); 2 a bad
 * command line; 3 an MPI error. */
#ifndef BB_EXAMPLES_MDI_H
#define BB_EXAMPLES_MDI_H

#include <bbench.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BB_MDI_COUNT
/* The test build counts the library's MPI calls (tests/fault.c). */
#include "fault.h"
#endif

typedef struct mdi_opts {
    int64_t atoms;
    int steps, remap, update;
    int driver_remap;     /* the driver moves its atoms every K steps (0 never) */
    const char *hostile;  /* NULL, or: order, n, unset, update, driver-map,
                             map-alone (doc/mdi.md) */
    const char *mdi;      /* MDI's option string, or NULL: from the launch */
} mdi_opts_t;

/* Local.  The options; 0, or 2 (usage) after saying why on stderr. */
static inline int mdi_parse(int argc, char **argv, const char *prog, mdi_opts_t *o)
{
    o->atoms = 1000;
    o->steps = 6;
    o->remap = 2;
    o->update = 0;
    o->driver_remap = 0;
    o->hostile = NULL;
    o->mdi = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "--update") == 0) {
            o->update = 1;
            continue;
        }
        if (v == NULL)
            goto usage;
        if (strcmp(a, "-mdi") == 0)
            o->mdi = v;
        else if (strcmp(a, "--atoms") == 0)
            o->atoms = strtoll(v, &end, 10);
        else if (strcmp(a, "--steps") == 0)
            o->steps = (int)strtol(v, &end, 10);
        else if (strcmp(a, "--remap") == 0)
            o->remap = (int)strtol(v, &end, 10);
        else if (strcmp(a, "--driver-remap") == 0)
            o->driver_remap = (int)strtol(v, &end, 10);
        else if (strcmp(a, "--hostile") == 0)
            o->hostile = v;
        else
            goto usage;
        if (end != NULL && *end != '\0')
            goto usage;
        i++;
    }
    if (o->atoms < 1 || o->atoms > 100000000 || o->steps < 1 || o->remap < 0
        || o->driver_remap < 0)
        goto usage;
    if (o->hostile && strcmp(o->hostile, "order") && strcmp(o->hostile, "n")
        && strcmp(o->hostile, "unset") && strcmp(o->hostile, "update")
        && strcmp(o->hostile, "driver-map") && strcmp(o->hostile, "map-alone"))
        goto usage;
    return 0;
usage:
    fprintf(stderr, "%s: usage: %s [-mdi \"-role DRIVER|ENGINE -name NAME -method MPI\"] "
            "[--atoms N] [--steps S] [--remap K] [--driver-remap K] [--update]\n"
            "  [--hostile order|n|unset|update|driver-map|map-alone]\n",
            prog, prog);
    return 2;
}

/* MPI started and the command line read on every rank of both codes: 0,
 * or (MPI finalized) the usage exit code of every rank.  A bad command line
 * on one program stops both, after one agreement. */
static inline int mdi_start(int *argc, char ***argv, const char *prog, mdi_opts_t *o)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    int usage = mdi_parse(*argc, *argv, prog, o), any_usage = 0;
    MPI_Allreduce(&usage, &any_usage, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any_usage)
        return 0;
    MPI_Finalize();
    return BB_EXIT_USAGE;
}

/* The codes: from MDI's option string when given, else from the launch. */
static inline bb_status_t mdi_link(bb_world_t *world, const mdi_opts_t *o, const char *prog,
                            bb_redist_link_t **link_out)
{
    bb_redist_role_t role = BB_REDIST_ROLE_LAUNCH;
    char name[64] = "";
    /* A string that does not parse still takes part in the creation (as a
     * role outside the enum) so that every rank of both codes is refused. */
    if (o->mdi != NULL && bb_redist_role_parse_mdi(o->mdi, &role, name, sizeof name) != BB_OK) {
        fprintf(stderr, "%s: -mdi \"%s\": not \"-role DRIVER|ENGINE -name NAME -method MPI\"\n",
                prog, o->mdi);
        role = (bb_redist_role_t)-1;
    }
    bb_redist_codes_fault_t f;
    bb_status_t st = bb_redist_link_create_codes_checked(world, BB_REDIST_MODE_MDI, role,
                                                         link_out, &f);
    if (st == BB_REFUSED)
        fprintf(stderr, "%s: rank %d: the launch does not name two codes: no driver %d, no "
                "engine %d, mixed %d, no MPI_APPNUM %d, MPI_APPNUM > 1 %d\n", prog,
                bb_world_rank(world), f.no_driver, f.no_engine, f.mixed, f.no_appnum,
                f.bad_appnum);
    else if (st != BB_OK)
        fprintf(stderr, "%s: rank %d: link: %s\n", prog, bb_world_rank(world),
                bb_status_string(st));
    return st;
}

/* The link, as the code this program is (engine 0: the driver): 0, or the
 * exit code, the same on every rank of both codes, with no link left.  A
 * program launched in the other code's place (two drivers, the engine
 * first by MPI_APPNUM) stops every rank alike. */
static inline int mdi_open(bb_world_t *world, const mdi_opts_t *o, const char *prog,
                           int engine, bb_redist_link_t **link_out)
{
    bb_status_t st = mdi_link(world, o, prog, link_out);
    if (st != BB_OK)
        return st == BB_REFUSED || st == BB_ERR_ARG ? BB_EXIT_FAILURE : BB_EXIT_FATAL;
    int wrong = engine ? !bb_redist_link_is_engine(*link_out)
                       : !bb_redist_link_is_driver(*link_out), any_wrong = 0;
    MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any_wrong)
        return 0;
    fprintf(stderr, "%s: rank %d: %s\n", prog, bb_world_rank(world),
            !wrong ? "a program runs in the other code"
            : engine ? "launched as the driver's code" : "launched as the engine's code");
    bb_redist_link_destroy(*link_out);
    *link_out = NULL;
    return BB_EXIT_USAGE;
}

/* The command channel: MDI's command names, from the driver's rank 0 to
 * every rank of both codes (the link's rank 0 is the driver's). */
enum { MDI_COMMAND_LEN = 32 };
static inline int mdi_command(bb_redist_link_t *l, char *cmd)
{
    return MPI_Bcast(cmd, MDI_COMMAND_LEN, MPI_CHAR, 0, bb_redist_link_comm(l));
}

/* The elements: atom i's coordinates at step s are 3 integers (exact in a
 * double), its force -2 times them, the energy the sum of the first
 * coordinates. */
static inline double mdi_coord(int64_t i, int c, int s)
{
    return (double)(1000 * (int64_t)s + 3 * i + c);
}
static inline double mdi_energy(int64_t atoms, int s)
{
    double e = 0;
    for (int64_t i = 0; i < atoms; i++)
        e += mdi_coord(i, 0, s);
    return e;
}

/* The engine's layout at epoch e: block-cyclic in blocks of 1 + e % 4
 * atoms (cyclic first), so that each move changes owners. */
static inline bb_status_t mdi_engine_map(int64_t atoms, int rank, int size, int64_t e,
                                  bb_map_t **map_out)
{
    return bb_map_create_block_cyclic(atoms, 1 + e % 4, rank, size, e, map_out);
}

/* The driver's layout at epoch d: the standardized distribution first,
 * then block-cyclic in blocks of 2 + d % 3 atoms. */
static inline bb_status_t mdi_driver_map(int64_t atoms, int rank, int size, int64_t d,
                                         bb_map_t **map_out)
{
    if (d == 0)
        return bb_map_create_std(atoms, rank, size, 0, map_out);
    return bb_map_create_block_cyclic(atoms, 2 + d % 3, rank, size, d, map_out);
}

/* The one-element map of <ENERGY: on the code's rank 0. */
static inline bb_status_t mdi_scalar_map(int rank, bb_map_t **map_out)
{
    const int64_t zero = 0;
    return bb_map_create(1, &zero, rank == 0 ? 1 : 0, 0, map_out);
}

/* bb_redist_plan_set_driver_map's agreements (doc/mdi.md): the handshake,
 * the verdict on the map, three for the cross part and one for the codes'
 * own parts; the driver's ranks also validate the map over their code. */
#define MDI_DRIVER_MAP_ALLREDUCE_ENGINE 6
#define MDI_DRIVER_MAP_ALLREDUCE_DRIVER 7

/* The MPI calls one library call made, for the test build's count. */
typedef struct mdi_calls {
    long alltoallw, allreduce;
} mdi_calls_t;
static inline mdi_calls_t mdi_calls_now(void)
{
    mdi_calls_t c = {0, 0};
#ifdef BB_MDI_COUNT
    c.alltoallw = bbfault_calls("MPI_Alltoallw");
    c.allreduce = bbfault_calls("MPI_Allreduce");
#endif
    return c;
}

/* After a library call: its calls since before, against what doc/mdi.md
 * gives (the test build only; 1 when they differ, said on stderr). */
static inline int mdi_calls_check(const char *prog, int rank, const char *what, mdi_calls_t before,
                           long alltoallw, long allreduce)
{
#ifdef BB_MDI_COUNT
    mdi_calls_t now = mdi_calls_now();
    long a = now.alltoallw - before.alltoallw, r = now.allreduce - before.allreduce;
    printf("%s: rank %d: %s: %ld Alltoallw, %ld Allreduce\n", prog, rank, what, a, r);
    if (a != alltoallw || r != allreduce) {
        fprintf(stderr, "%s: rank %d: %s: %ld Alltoallw and %ld Allreduce, doc/mdi.md says "
                "%ld and %ld\n", prog, rank, what, a, r, alltoallw, allreduce);
        return 1;
    }
#else
    (void)prog; (void)rank; (void)what; (void)before; (void)alltoallw; (void)allreduce;
#endif
    return 0;
}

#endif /* BB_EXAMPLES_MDI_H */
