/* redist-link.c: the link between two codes in one world (the MDI model:
 * a driver and an engine code, or one code with two layouts of its own). */
#include "config.h"
#include "redist-private.h"

#include <stdlib.h>
#include <string.h>

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
    l->found_by = "split";
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

/* What one rank brings to bb_redist_link_create_codes' one Allgather. */
enum { CODES_BAD = 0, CODES_MODE, CODES_LAUNCH, CODES_CODE, CODES_APPNUM, CODES_FIELDS };
enum { APPNUM_OK = 0, APPNUM_MISSING, APPNUM_BAD };

/* This rank's code from the launch: 0 driver, 1 engine, -1 with *state
 * saying why not. */
static int codes_from_appnum(int *state)
{
#ifdef BB_HAVE_MPI_APPNUM
    int *v = NULL, flag = 0;
    if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag) != MPI_SUCCESS || !flag
        || v == NULL) {
        *state = APPNUM_MISSING;
        return -1;
    }
    if (*v == 0 || *v == 1) {
        *state = APPNUM_OK;
        return *v;
    }
    *state = APPNUM_BAD;
    return -1;
#else
    /* The MPI has no MPI_APPNUM (configure's probe): a launch that cannot
     * name codes, refused like a missing attribute. */
    *state = APPNUM_MISSING;
    return -1;
#endif
}

bb_status_t bb_redist_link_create_codes_checked(bb_world_t *world, bb_redist_mode_t mode,
                                                bb_redist_role_t role,
                                                bb_redist_link_t **link_out,
                                                bb_redist_codes_fault_t *fault_out)
{
    if (world == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(world) != BB_OK)
        return BB_ERR_THREAD;
    int p = bb_world_size(world), me = bb_world_rank(world);
    MPI_Comm wc = bb_world_comm(world);
    int mine[CODES_FIELDS] = {0};
    int valid_role = role == BB_REDIST_ROLE_LAUNCH || role == BB_REDIST_ROLE_DRIVER
                     || role == BB_REDIST_ROLE_ENGINE;
    mine[CODES_BAD] = link_out == NULL || mode != BB_REDIST_MODE_MDI || !valid_role;
    mine[CODES_MODE] = (int)mode;
    mine[CODES_LAUNCH] = role == BB_REDIST_ROLE_LAUNCH;
    mine[CODES_APPNUM] = APPNUM_OK;
    if (role == BB_REDIST_ROLE_LAUNCH)
        mine[CODES_CODE] = codes_from_appnum(&mine[CODES_APPNUM]);
    else
        mine[CODES_CODE] = role == BB_REDIST_ROLE_DRIVER ? 0 : role == BB_REDIST_ROLE_ENGINE ? 1 : -1;
    /* Every rank's entry on every rank: the verdict and the order of the
     * link's ranks are computed alike everywhere from the same table, and
     * the Allgather runs on a duplicate so that it cannot match the
     * caller's traffic. */
    int *all = malloc((size_t)p * CODES_FIELDS * sizeof *all);
    MPI_Comm tmp = MPI_COMM_NULL;
    if (MPI_Comm_dup(wc, &tmp) != MPI_SUCCESS
        || MPI_Comm_set_errhandler(tmp, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        free(all);
        return BB_ERR_MPI; /* fatal: the caller aborts */
    }
    /* A rank that could not allocate the table still takes part, through
     * an agreement of its own, so that every rank returns BB_ERR_NOMEM. */
    int64_t nomem = all == NULL, any_nomem = 0;
    if (bb_agree_max(tmp, &nomem, 1, &any_nomem) != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (any_nomem) {
        free(all);
        MPI_Comm_free(&tmp);
        return BB_ERR_NOMEM;
    }
    if (MPI_Allgather(mine, CODES_FIELDS, MPI_INT, all, CODES_FIELDS, MPI_INT, tmp)
        != MPI_SUCCESS)
        return BB_ERR_MPI;
    int bad = 0, launch = 0, named = 0, drivers = 0, engines = 0, no_appnum = 0,
        bad_appnum = 0;
    for (int r = 0; r < p; r++) {
        const int *e = all + (size_t)r * CODES_FIELDS;
        bad |= e[CODES_BAD] || e[CODES_MODE] != mine[CODES_MODE];
        launch += e[CODES_LAUNCH];
        named += !e[CODES_LAUNCH];
        drivers += e[CODES_CODE] == 0;
        engines += e[CODES_CODE] == 1;
        no_appnum += e[CODES_APPNUM] == APPNUM_MISSING;
        bad_appnum += e[CODES_APPNUM] == APPNUM_BAD;
    }
    if (bad) {
        free(all);
        MPI_Comm_free(&tmp);
        return BB_ERR_ARG;
    }
    bb_redist_codes_fault_t f = {0};
    f.no_driver = drivers == 0;
    f.no_engine = engines == 0;
    f.mixed = launch > 0 && named > 0 ? named : 0;
    f.no_appnum = no_appnum;
    f.bad_appnum = bad_appnum;
    if (fault_out != NULL)
        *fault_out = f;
    if (f.no_driver || f.no_engine || f.mixed || f.no_appnum || f.bad_appnum) {
        free(all);
        MPI_Comm_free(&tmp);
        return BB_REFUSED;
    }
    free(all);
    bb_redist_link_t *l = calloc(1, sizeof *l);
    int64_t lnomem = l == NULL;
    if (bb_agree_max(tmp, &lnomem, 1, &any_nomem) != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (any_nomem) {
        free(l);
        MPI_Comm_free(&tmp);
        return BB_ERR_NOMEM;
    }
    int code = mine[CODES_CODE];
    l->world = world;
    l->mode = mode;
    l->size = p;
    l->found_by = launch > 0 ? "appnum" : "role";
    l->driver_first = 0;
    l->driver_n = drivers;
    l->engine_first = drivers;
    l->engine_n = engines;
    /* The channel orders the driver ranks first, each code in world order:
     * the plans then see the layout of a split link. */
    if (MPI_Comm_split(tmp, 0, code * p + me, &l->comm) != MPI_SUCCESS
        || MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS
        || MPI_Comm_rank(l->comm, &l->rank) != MPI_SUCCESS
        || MPI_Comm_split(l->comm, code, l->rank, &l->code) != MPI_SUCCESS
        || MPI_Comm_set_errhandler(l->code, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return BB_ERR_MPI; /* fatal: the caller aborts; the link is left behind */
    MPI_Comm_free(&tmp);
    l->is_driver = code == 0;
    l->is_engine = code == 1;
    *link_out = l;
    return BB_OK;
}

bb_status_t bb_redist_link_create_codes(bb_world_t *world, bb_redist_mode_t mode,
                                        bb_redist_role_t role, bb_redist_link_t **link_out)
{
    return bb_redist_link_create_codes_checked(world, mode, role, link_out, NULL);
}

const char *bb_redist_link_found_by(const bb_redist_link_t *link)
{
    return link == NULL || link->found_by == NULL ? "split" : link->found_by;
}

/* One blank-separated word of text at *at into word (truncated to size - 1
 * bytes); 0 at the end of text. */
static int next_word(const char **at, char *word, size_t size)
{
    const char *s = *at;
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    if (*s == '\0')
        return 0;
    size_t n = 0;
    while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\n') {
        if (n + 1 < size)
            word[n++] = *s;
        s++;
    }
    word[n] = '\0';
    *at = s;
    return 1;
}

bb_status_t bb_redist_role_parse_mdi(const char *text, bb_redist_role_t *role_out,
                                     char *name_out, size_t name_size)
{
    if (text == NULL || role_out == NULL)
        return BB_ERR_ARG;
    char key[32], val[256], name[256] = "";
    int have_role = 0, have_name = 0, have_method = 0;
    bb_redist_role_t role = BB_REDIST_ROLE_LAUNCH;
    const char *at = text;
    while (next_word(&at, key, sizeof key)) {
        if (!next_word(&at, val, sizeof val))
            return BB_ERR_PARSE; /* an option without its value */
        if (strcmp(key, "-role") == 0) {
            if (strcmp(val, "DRIVER") == 0)
                role = BB_REDIST_ROLE_DRIVER;
            else if (strcmp(val, "ENGINE") == 0)
                role = BB_REDIST_ROLE_ENGINE;
            else
                return BB_ERR_PARSE;
            have_role = 1;
        } else if (strcmp(key, "-name") == 0) {
            memcpy(name, val, sizeof name);
            have_name = 1;
        } else if (strcmp(key, "-method") == 0) {
            /* TCP and LINK join two worlds or two libraries: not one
             * MPI_COMM_WORLD split by code. */
            if (strcmp(val, "MPI") != 0)
                return BB_ERR_PARSE;
            have_method = 1;
        } else {
            return BB_ERR_PARSE;
        }
    }
    if (!have_role || !have_name || !have_method)
        return BB_ERR_PARSE;
    *role_out = role;
    if (name_out != NULL && name_size > 0) {
        strncpy(name_out, name, name_size - 1);
        name_out[name_size - 1] = '\0';
    }
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
