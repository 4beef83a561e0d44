/* test-redist-auto: auto's trial on real MPI (at 2 to 4 ranks), intra and
 * MDI, with each rank's trial times faked (bb_redist_plan_set_trial_times)
 * so that every rank's own medians would pick another method than the
 * agreed MAX does:
 *   - the 12 trial executions run direct, pack, sparse, overlap in turn
 *     (bb_redist_plan_chosen before each, alike on every rank), each moving
 *     the right data; a refused message does not count;
 *   - the winner is the least median of the MAX over ranks (ties: the
 *     lower method), computed here from every rank's fakes, the same on
 *     every rank with the same reason (a hash compared);
 *   - the plan then holds less (the losers' parts dropped) and moves the
 *     right data with the winner;
 *   - bb_redist_plan_update_maps and a '<' that carries the engine's new
 *     map restart the trial.
 * Prints "on P ranks: N passed, M failed" on rank 0; exit 1 on failure. */
#include "config.h"
#include "harness.h"
#include "bbench-hooks.h"
#include "../check-mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CANDS = 4, RUNS = 12 };
static const bb_redist_method_t cands[CANDS] = {
    BB_REDIST_DIRECT, BB_REDIST_PACK, BB_REDIST_SPARSE, BB_REDIST_OVERLAP
};
static int rank, ranks;

static bb_map_t *code_map(bb_redist_link_t *l, int engine, const char *spec, int64_t n,
                          int64_t epoch)
{
    if (!(engine ? bb_redist_link_is_engine(l) : bb_redist_link_is_driver(l)))
        return NULL;
    bb_layout_t lay;
    bb_map_t *m = NULL;
    if (bb_layout_parse(spec, &lay, NULL, 0) != BB_OK
        || bb_layout_map(&lay, n, bb_redist_link_code_rank(l, engine),
                         bb_redist_link_code_size(l, engine), epoch, &m) != BB_OK) {
        fprintf(stderr, "rank %d: cannot build layout %s\n", rank, spec);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return m;
}

static int64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

/* Every rank holds the same v? */
static int alike(int64_t v)
{
    int64_t mn, mx;
    bb_agree_minmax(MPI_COMM_WORLD, &v, 1, &mn, &mx);
    return mn == mx;
}

static double median3(double a, double b, double c)
{
    if (a > b) {
        double t = a; a = b; b = t;
    }
    return c < a ? a : c > b ? b : c;
}

/* The candidate (index) with the least median of times t[RUNS] (execution
 * k ran candidate k % CANDS); ties: the lower. */
static int winner_of(const double *t)
{
    int w = 0;
    double best = 0;
    for (int c = 0; c < CANDS; c++) {
        double m = median3(t[c], t[CANDS + c], t[2 * CANDS + c]);
        if (c == 0 || m < best) {
            best = m;
            w = c;
        }
    }
    return w;
}

/* This rank's fakes: candidate w takes 50 us (+ 1 us per rank, and 5 ms
 * once on rank 0: the median must ignore it), this rank's favourite (one of
 * the others, by rank) 1 us, the rest 200-500 us; tie: every candidate 7 us
 * but the favourite.  So each rank's own medians pick its favourite, never
 * w, and the MAX picks w (direct on a tie). */
static void fakes(double *f, int w, int tie)
{
    int others[CANDS - 1], no = 0;
    for (int c = 0; c < CANDS; c++)
        if (c != (tie ? 0 : w))
            others[no++] = c;
    int fav = others[rank % (CANDS - 1)];
    for (int k = 0; k < RUNS; k++) {
        int c = k % CANDS;
        if (c == fav)
            f[k] = 1e-6;
        else if (tie)
            f[k] = 7e-6;
        else if (c == w)
            f[k] = (rank == 0 && k / CANDS == 2) ? 5e-3 : 50e-6 + rank * 1e-6;
        else
            f[k] = (100.0 + 100.0 * c) * 1e-6;
    }
}

/* One message through plan, checked; cap: this rank's cap (n: admitted). */
static bb_status_t message(bb_redist_link_t *l, bb_redist_plan_t *plan, int cmd, int64_t n,
                           int64_t eb, int64_t k, int64_t cap, int *right,
                           bb_redist_metrics_t *mt)
{
    const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
    int64_t cs = sm ? bb_map_count(sm) : 0, cr = rm ? bb_map_count(rm) : 0;
    double *sb = malloc((size_t)(cs > 0 ? cs : 1) * (size_t)eb);
    double *rb = malloc((size_t)(cr > 0 ? cr : 1) * (size_t)eb);
    if (sm)
        bb_redist_fill(sm, eb, k, sb);
    if (rm)
        bb_redist_fill_sentinel(cr, eb, rb);
    bb_redist_contract_t c = {cmd, n, eb, cap};
    bb_status_t st = bb_redist_plan_execute(plan, &c, sb, rb, mt);
    *right = 0;
    if (st == BB_OK) /* collective: every rank took the payload */
        *right = bb_redist_check(bb_redist_link_comm(l), rm, n, eb, k, rb, NULL) == BB_OK;
    free(sb);
    free(rb);
    return st;
}

/* One trial on plan with this rank's fakes f: the 12 executions (with a
 * refusal after the 5th, which must not count; a '<' that carries a map
 * first when carry), then the decision against the MAX computed here. */
static void trial(bb_redist_link_t *l, bb_redist_plan_t *plan, int cmd, int64_t n, int64_t eb,
                  const double *f, const char *what, int carry)
{
    bb_redist_plan_set_trial_times(plan, f, RUNS);
    bb_redist_traffic_t t0; /* during the trial (a carrying '<' restarts it) */
    if (!carry)
        CHECK_MSG(bb_redist_plan_traffic(plan, &t0) == BB_OK, "%s: traffic", what);
    for (int k = 0; k < RUNS; k++) {
        bb_redist_method_t next = bb_redist_plan_chosen(plan);
        char head[32];
        snprintf(head, sizeof head, "auto: trial %d of 12 ", k + 1);
        const char *why = bb_redist_plan_choice_reason(plan);
        CHECK_MSG((carry && k == 0) || (next == cands[k % CANDS]
                                       && bb_redist_plan_trial_left(plan) == RUNS - k
                                       && strncmp(why, head, strlen(head)) == 0),
                  "%s: before trial execution %d: %s next, %d left, '%s'", what, k + 1,
                  bb_redist_method_name(next), bb_redist_plan_trial_left(plan), why);
        CHECK_MSG(alike(next) && alike(str_hash(why)), "%s: trial %d: ranks differ on what "
                  "runs next or why", what, k + 1);
        bb_redist_metrics_t mt;
        int right;
        if (k == 5) { /* refused on every rank: not a trial execution */
            bb_status_t rs = message(l, plan, cmd, n, eb, 1000 + k, rank == 0 ? n - 1 : n,
                                     &right, &mt);
            CHECK_MSG(rs == BB_REFUSED && bb_redist_plan_trial_left(plan) == RUNS - k
                          && bb_redist_plan_chosen(plan) == next,
                      "%s: a refusal counted in the trial: %s, %d left", what,
                      bb_status_string(rs), bb_redist_plan_trial_left(plan));
        }
        bb_status_t st = message(l, plan, cmd, n, eb, k, n, &right, &mt);
        CHECK_MSG(st == BB_OK && right, "%s: trial execution %d (%s): %s, data %s", what, k + 1,
                  bb_redist_method_name(next), bb_status_string(st), right ? "right" : "wrong");
        if (carry && k == 0) {
            CHECK_MSG(mt.map_sent && bb_redist_plan_trial_left(plan) == RUNS - 1,
                      "%s: the '<' that carried the map restarted the trial: map_sent %d, "
                      "%d left", what, mt.map_sent, bb_redist_plan_trial_left(plan));
            CHECK_MSG(bb_redist_plan_traffic(plan, &t0) == BB_OK, "%s: traffic", what);
        }
    }
    double mx[RUNS];
    MPI_Allreduce(f, mx, RUNS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int want = winner_of(mx), mine = winner_of(f);
    bb_redist_method_t got = bb_redist_plan_chosen(plan);
    const char *why = bb_redist_plan_choice_reason(plan);
    int64_t local_pick = mine, picks_min, picks_max;
    bb_agree_minmax(MPI_COMM_WORLD, &local_pick, 1, &picks_min, &picks_max);
    CHECK_MSG(mine != want && picks_min != picks_max,
              "%s: the fakes do not test agreement (this rank picks %s, the MAX %s)", what,
              bb_redist_method_name(cands[mine]), bb_redist_method_name(cands[want]));
    CHECK_MSG(got == cands[want] && bb_redist_plan_trial_left(plan) == 0,
              "%s: chose %s, the MAX over ranks gives %s ('%s')", what,
              bb_redist_method_name(got), bb_redist_method_name(cands[want]), why);
    int agreed = alike(got);
    CHECK_MSG(agreed && alike(str_hash(why)), "%s: ranks chose differently or for "
              "different reasons: %s '%s'", what, bb_redist_method_name(got), why);
    if (!agreed)
        return; /* different exchanges would wait for each other forever */
    char head[48];
    snprintf(head, sizeof head, "auto: %s: least trial median", bb_redist_method_name(got));
    CHECK_MSG(strncmp(why, head, strlen(head)) == 0, "%s: reason '%s'", what, why);
    bb_redist_traffic_t t1;
    CHECK_MSG(bb_redist_plan_traffic(plan, &t1) == BB_OK && t1.chosen == got
                  && t1.plan_bytes_max < t0.plan_bytes_max,
              "%s: after the trial the plan holds %lld B (during it %lld B) and runs %s",
              what, (long long)t1.plan_bytes_max, (long long)t0.plan_bytes_max,
              bb_redist_method_name(t1.chosen));
    for (int k = 0; k < 2; k++) {
        bb_redist_metrics_t mt;
        int right;
        bb_status_t st = message(l, plan, cmd, n, eb, 100 + k, n, &right, &mt);
        CHECK_MSG(st == BB_OK && right && bb_redist_plan_chosen(plan) == got,
                  "%s: after the trial, %s: %s, data %s", what, bb_redist_method_name(got),
                  bb_status_string(st), right ? "right" : "wrong");
    }
    if (rank == 0)
        printf("%s: every rank chose %s (each rank's own times: %s on rank 0), plan %lld -> "
               "%lld B: %s\n", what, bb_redist_method_name(got),
               bb_redist_method_name(cands[mine]), (long long)t0.plan_bytes_max,
               (long long)t1.plan_bytes_max, why);
}

/* One link: '>' decides pack, update_maps restarts (overlap wins); '<'
 * decides sparse, the engine's new map carried by a '<' restarts (a tie:
 * direct). */
static void case_link(bb_world_t *world, int mdi)
{
    bb_redist_link_t *l = NULL;
    bb_status_t st = bb_redist_link_create(world, mdi ? BB_REDIST_MODE_MDI
                                                      : BB_REDIST_MODE_INTRA,
                                           mdi ? ranks / 2 : 0, &l);
    CHECK_MSG(st == BB_OK, "link: %s", bb_status_string(st));
    if (st != BB_OK)
        return;
    const char *mode = mdi ? "mdi" : "intra";
    int64_t n = 300, eb = 24;
    bb_map_t *dm = code_map(l, 0, "block-cyclic:3", n, 0), *em = code_map(l, 1, "random:7", n, 0);
    bb_map_t *em2 = code_map(l, 1, "cyclic", n, 1);
    double f[RUNS];
    char what[96];
    for (int d = 0; d < 2; d++) {
        int cmd = d ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
        bb_redist_plan_t *plan = NULL;
        st = bb_redist_plan_create(l, BB_REDIST_AUTO, cmd, eb, dm, em, &plan, NULL);
        CHECK_MSG(st == BB_OK, "%s %c: plan: %s", mode, cmd, bb_status_string(st));
        if (st != BB_OK)
            continue;
        snprintf(what, sizeof what, "auto %s %c P=%d", mode, cmd, ranks);
        fakes(f, d ? 2 : 1, 0);
        trial(l, plan, cmd, n, eb, f, what, 0);
        if (cmd == BB_REDIST_SEND) {
            st = bb_redist_plan_update_maps(plan, NULL);
            CHECK_MSG(st == BB_OK && bb_redist_plan_trial_left(plan) == RUNS
                          && bb_redist_plan_chosen(plan) == BB_REDIST_DIRECT,
                      "%s: update_maps restarts the trial: %s, %d left", what,
                      bb_status_string(st), bb_redist_plan_trial_left(plan));
            snprintf(what, sizeof what, "auto %s %c P=%d after update_maps", mode, cmd, ranks);
            fakes(f, 3, 0);
            trial(l, plan, cmd, n, eb, f, what, 0);
        } else {
            if (bb_redist_link_is_engine(l)) {
                st = bb_redist_plan_set_engine_map(plan, em2, NULL);
                CHECK_MSG(st == BB_OK, "%s: set engine map: %s", what, bb_status_string(st));
            }
            snprintf(what, sizeof what, "auto %s %c P=%d after the map came", mode, cmd, ranks);
            fakes(f, 0, 1);
            trial(l, plan, cmd, n, eb, f, what, 1);
        }
        CHECK_MSG(bb_redist_plan_destroy(plan) == BB_OK, "%s: destroy", what);
    }
    bb_map_free(dm);
    bb_map_free(em);
    bb_map_free(em2);
    CHECK_MSG(bb_redist_link_destroy(l) == BB_OK, "link destroy");
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    if (ranks < 2) {
        if (rank == 0)
            printf("needs 2 ranks or more: one rank's times are their own MAX\n");
        bb_world_release(world);
        MPI_Finalize();
        return 2;
    }
    case_link(world, 0);
    case_link(world, 1);
    fflush(stdout);
    int mine[2] = {passed, failed}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("auto on %d ranks: %d passed, %d failed\n", ranks, tot[0], tot[1]);
    int bad = failed > 0, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bb_world_release(world);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
