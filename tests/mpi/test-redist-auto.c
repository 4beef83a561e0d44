/* test-redist-auto: auto's trial on real MPI (at 2 to 4 ranks), intra and
 * MDI, with each rank's trial times faked (bb_redist_plan_set_trial_times)
 * so that every rank's own medians would pick another method than the
 * agreed MAX does:
 *   - round 1's 12 executions run direct, pack, sparse, overlap in turn
 *     (bb_redist_plan_chosen before each, alike on every rank), each moving
 *     the right data; a refused message does not count;
 *   - the candidates whose median of the MAX is within 25 % of the least
 *     run 4 more times each, in turn (round 2), when there are two or more;
 *   - the winner is the least median of all its runs' MAX over ranks (ties:
 *     the lower method), computed here from every rank's fakes, the same on
 *     every rank with the same reason (a hash compared); a round 2 can
 *     overturn round 1's leader;
 *   - the plan then holds less (the losers' parts dropped) and moves the
 *     right data with the winner;
 *   - bb_redist_plan_update_maps and a '<' that carries the engine's new
 *     map restart the trial.
 * Prints "on P ranks: N passed, M failed" on rank 0; exit 1 on failure. */
#include "config.h"
#include "bench/redist/redist.h"
#include "private/hooks.h"
#include "check-redist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CANDS = 4, RUNS1 = 12, MORE = 4, CLOSE_PCT = 25, MAXRUNS = RUNS1 + CANDS * MORE };
static const bb_redist_method_t cands[CANDS] = {
    BB_REDIST_DIRECT, BB_REDIST_PACK, BB_REDIST_SPARSE, BB_REDIST_OVERLAP
};
static int rank, ranks;

/* What a trial is: the expected outcome of times t (seq, len, winner). */
typedef struct trial_model {
    int seq[MAXRUNS];   /* candidate (index) of each execution */
    int len;            /* executions: 12, or with round 2 */
    double med[CANDS];  /* each candidate's median over its executions */
    int runs[CANDS];
    int win;
} trial_model_t;

static int64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

/* Every rank holds the same method m and the same reason (its hash)?  One
 * agreement for both: the test runs it before every trial execution. */
static int alike(bb_redist_method_t m, const char *why)
{
    int64_t v[2] = {(int64_t)m, str_hash(why)}, mn[2], mx[2];
    bb_agree_minmax(MPI_COMM_WORLD, v, 2, mn, mx);
    return mn[0] == mx[0] && mn[1] == mx[1];
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* m->med, m->runs and m->win over the first len executions of m->seq. */
static void medians(const double *t, int len, trial_model_t *m)
{
    m->win = 0;
    for (int c = 0; c < CANDS; c++) {
        double v[MAXRUNS];
        int n = 0;
        for (int k = 0; k < len; k++)
            if (m->seq[k] == c)
                v[n++] = t[k];
        qsort(v, (size_t)n, sizeof v[0], by_value);
        m->runs[c] = n;
        m->med[c] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        if (m->med[c] < m->med[m->win]) /* ties: the lower */
            m->win = c;
    }
}

/* m->seq and m->len from round 1's times t[RUNS1] alone (execution k runs
 * candidate k % CANDS), then round 2 when two or more medians are within
 * CLOSE_PCT % of the least: the close candidates, in index order, MORE
 * times in turn. */
static void sequence(const double *t, trial_model_t *m)
{
    for (int k = 0; k < RUNS1; k++)
        m->seq[k] = k % CANDS;
    m->len = RUNS1;
    medians(t, RUNS1, m);
    int close[CANDS], nclose = 0;
    for (int c = 0; c < CANDS; c++)
        if (m->med[c] <= m->med[m->win] * (1 + CLOSE_PCT / 100.0))
            close[nclose++] = c;
    if (nclose > 1)
        for (int r = 0; r < MORE; r++)
            for (int i = 0; i < nclose; i++)
                m->seq[m->len++] = close[i];
}

/* The whole trial of times t (as many as it is long): its sequence, then
 * every candidate's median over all its executions and the winner. */
static void model(const double *t, trial_model_t *m)
{
    sequence(t, m);
    medians(t, m->len, m);
}

/* The scenarios of this rank's fakes; w and runner: candidate indices. */
enum scenario { CLEAR, UPSET, TIE };

/* This rank's fakes f[MAXRUNS] and the agreed expectation *want (the
 * model of their MAX over ranks).  Each rank has a favourite at 1 us, so
 * its own medians pick it, never the MAX's winner:
 *   CLEAR: w 50 us (+ 1 us per rank, 5 ms once on rank 0: the median must
 *     ignore it), the others 200-500 us: w alone, 12 runs;
 *   UPSET: w as CLEAR in round 1 and 90 us in round 2, runner 60 us then
 *     40 us: both within 25 %, round 2 makes runner win, 20 runs;
 *   TIE: every candidate 7 us: all four run round 2, direct wins, 28 runs. */
static void fakes(double *f, enum scenario sc, int w, int runner, trial_model_t *want)
{
    int others[CANDS], no = 0;
    for (int c = 0; c < CANDS; c++)
        if (c != w && !(sc == UPSET && c == runner))
            others[no++] = c;
    int fav = others[rank % no];
    double r1[MAXRUNS];
    for (int k = 0; k < MAXRUNS; k++) { /* round 1 (k % CANDS), and beyond */
        int c = k % CANDS;
        if (c == fav)
            r1[k] = 1e-6;
        else if (sc == TIE)
            r1[k] = 7e-6;
        else if (c == w)
            r1[k] = (rank == 0 && k / CANDS == 2) ? 5e-3 : 50e-6 + rank * 1e-6;
        else if (sc == UPSET && c == runner)
            r1[k] = 60e-6;
        else
            r1[k] = (100.0 + 100.0 * c) * 1e-6;
    }
    double mx1[RUNS1];
    MPI_Allreduce(r1, mx1, RUNS1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    sequence(mx1, want); /* round 2's, from round 1 agreed */
    for (int k = 0; k < MAXRUNS; k++) {
        int c = k < want->len ? want->seq[k] : 0;
        f[k] = k < RUNS1 ? r1[k] : c == fav ? 1e-6 : sc == TIE ? 7e-6
               : sc == UPSET && c == w ? 90e-6 : sc == UPSET && c == runner ? 40e-6
               : (100.0 + 100.0 * c) * 1e-6;
    }
    double mx[MAXRUNS];
    MPI_Allreduce(f, mx, MAXRUNS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    model(mx, want);
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
        bb_rd_fill(sm, eb, k, sb);
    if (rm)
        bb_rd_fill_sentinel(cr, eb, rb);
    bb_redist_contract_t c = {cmd, n, eb, cap};
    bb_status_t st = bb_redist_plan_execute(plan, &c, sb, rb, mt);
    *right = 0;
    if (st == BB_OK) /* collective: every rank took the payload */
        *right = bb_rd_check(bb_redist_link_comm(l), rm, n, eb, k, rb, NULL) == BB_OK;
    free(sb);
    free(rb);
    return st;
}

/* One trial on plan with this rank's fakes f and the agreed expectation
 * want: round 1's 12 executions, then round 2's when want has one (a
 * refusal after the 5th and after the 14th, which must not count; a '<'
 * that carries a map first when carry), then the decision and its reason. */
static void trial(bb_redist_link_t *l, bb_redist_plan_t *plan, int cmd, int64_t n, int64_t eb,
                  const double *f, const trial_model_t *want, const char *what, int carry)
{
    bb_redist_plan_set_trial_times(plan, f, MAXRUNS);
    bb_redist_traffic_t t0; /* during the trial (a carrying '<' restarts it) */
    if (!carry)
        CHECK_MSG(bb_redist_plan_traffic(plan, &t0) == BB_OK, "%s: traffic", what);
    for (int k = 0; k < want->len; k++) {
        bb_redist_method_t next = bb_redist_plan_chosen(plan);
        int known = k < RUNS1 ? RUNS1 : want->len; /* round 2 is known after round 1 */
        char head[32];
        snprintf(head, sizeof head, "auto: trial %d of %d ", k + 1, known);
        const char *why = bb_redist_plan_choice_reason(plan);
        CHECK_MSG((carry && k == 0) || (next == cands[want->seq[k]]
                                       && bb_redist_plan_trial_left(plan) == known - k
                                       && strncmp(why, head, strlen(head)) == 0),
                  "%s: before trial execution %d: %s next, %d left, '%s'", what, k + 1,
                  bb_redist_method_name(next), bb_redist_plan_trial_left(plan), why);
        CHECK_MSG(alike(next, why), "%s: trial %d: ranks differ on what "
                  "runs next or why", what, k + 1);
        bb_redist_metrics_t mt;
        int right;
        if (k == 5 || k == RUNS1 + 1) { /* refused on every rank: not a trial execution */
            bb_status_t rs = message(l, plan, cmd, n, eb, 1000 + k, rank == 0 ? n - 1 : n,
                                     &right, &mt);
            CHECK_MSG(rs == BB_REFUSED && bb_redist_plan_trial_left(plan) == known - k
                          && bb_redist_plan_chosen(plan) == next,
                      "%s: a refusal counted in the trial: %s, %d left", what,
                      bb_status_string(rs), bb_redist_plan_trial_left(plan));
        }
        bb_status_t st = message(l, plan, cmd, n, eb, k, n, &right, &mt);
        CHECK_MSG(st == BB_OK && right, "%s: trial execution %d (%s): %s, data %s", what, k + 1,
                  bb_redist_method_name(next), bb_status_string(st), right ? "right" : "wrong");
        if (carry && k == 0) {
            CHECK_MSG(mt.map_sent && bb_redist_plan_trial_left(plan) == RUNS1 - 1,
                      "%s: the '<' that carried the map restarted the trial: map_sent %d, "
                      "%d left", what, mt.map_sent, bb_redist_plan_trial_left(plan));
            CHECK_MSG(bb_redist_plan_traffic(plan, &t0) == BB_OK, "%s: traffic", what);
        }
    }
    trial_model_t mine;
    model(f, &mine);
    bb_redist_method_t got = bb_redist_plan_chosen(plan);
    const char *why = bb_redist_plan_choice_reason(plan);
    int64_t local_pick = mine.win, picks_min, picks_max;
    bb_agree_minmax(MPI_COMM_WORLD, &local_pick, 1, &picks_min, &picks_max);
    CHECK_MSG(mine.win != want->win && picks_min != picks_max,
              "%s: the fakes do not test agreement (this rank picks %s, the MAX %s)", what,
              bb_redist_method_name(cands[mine.win]), bb_redist_method_name(cands[want->win]));
    CHECK_MSG(got == cands[want->win] && bb_redist_plan_trial_left(plan) == 0,
              "%s: chose %s, the MAX over ranks gives %s ('%s')", what,
              bb_redist_method_name(got), bb_redist_method_name(cands[want->win]), why);
    int agreed = alike(got, why);
    CHECK_MSG(agreed, "%s: ranks chose differently or for "
              "different reasons: %s '%s'", what, bb_redist_method_name(got), why);
    if (!agreed)
        return; /* different exchanges would wait for each other forever */
    char reason[256];
    snprintf(reason, sizeof reason, "auto: %s: least trial median (MAX over ranks; runs): "
             "direct %.1f us (%d), pack %.1f us (%d), sparse %.1f us (%d), overlap %.1f us (%d)",
             bb_redist_method_name(got), want->med[0] * 1e6, want->runs[0],
             want->med[1] * 1e6, want->runs[1], want->med[2] * 1e6, want->runs[2],
             want->med[3] * 1e6, want->runs[3]);
    CHECK_MSG(strcmp(why, reason) == 0, "%s: reason '%s', the MAX's medians give '%s'", what,
              why, reason);
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
        printf("%s: every rank chose %s in %d runs (each rank's own times: %s on rank 0), "
               "plan %lld -> %lld B: %s\n", what, bb_redist_method_name(got), want->len,
               bb_redist_method_name(cands[mine.win]), (long long)t0.plan_bytes_max,
               (long long)t1.plan_bytes_max, why);
}

/* One link: '>' decides pack alone, update_maps restarts (pack leads round
 * 1, overlap wins round 2); '<' decides sparse, the engine's new map
 * carried by a '<' restarts (a tie: all four in round 2, direct). */
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
    bb_map_t *dm = check_code_map(l, 0, "block-cyclic:3", n, 0);
    bb_map_t *em = check_code_map(l, 1, "random:7", n, 0);
    bb_map_t *em2 = check_code_map(l, 1, "cyclic", n, 1);
    double f[MAXRUNS];
    trial_model_t want;
    char what[96];
    for (int d = 0; d < 2; d++) {
        int cmd = d ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
        bb_redist_plan_t *plan = NULL;
        st = bb_redist_plan_create(l, BB_REDIST_AUTO, cmd, eb, dm, em, &plan, NULL);
        CHECK_MSG(st == BB_OK, "%s %c: plan: %s", mode, cmd, bb_status_string(st));
        if (st != BB_OK)
            continue;
        snprintf(what, sizeof what, "auto %s %c P=%d", mode, cmd, ranks);
        fakes(f, CLEAR, d ? 2 : 1, -1, &want);
        trial(l, plan, cmd, n, eb, f, &want, what, 0);
        if (cmd == BB_REDIST_SEND) {
            st = bb_redist_plan_update_maps(plan, NULL);
            CHECK_MSG(st == BB_OK && bb_redist_plan_trial_left(plan) == RUNS1
                          && bb_redist_plan_chosen(plan) == BB_REDIST_DIRECT,
                      "%s: update_maps restarts the trial: %s, %d left", what,
                      bb_status_string(st), bb_redist_plan_trial_left(plan));
            snprintf(what, sizeof what, "auto %s %c P=%d after update_maps", mode, cmd, ranks);
            fakes(f, UPSET, 1, 3, &want);
            trial(l, plan, cmd, n, eb, f, &want, what, 0);
        } else {
            if (bb_redist_link_is_engine(l)) {
                st = bb_redist_plan_set_engine_map(plan, em2, NULL);
                CHECK_MSG(st == BB_OK, "%s: set engine map: %s", what, bb_status_string(st));
            }
            snprintf(what, sizeof what, "auto %s %c P=%d after the map came", mode, cmd, ranks);
            fakes(f, TIE, 0, -1, &want);
            trial(l, plan, cmd, n, eb, f, &want, what, 1);
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
