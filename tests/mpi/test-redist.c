/* test-redist: redistribution plans on real MPI, at any rank count >= 1.
 *
 *   test-redist moves    every method x layout pairs x both commands x MDI
 *                        splits and intra mode moves the right data (checked
 *                        slot by slot and by the global checksum); auto
 *                        runs its trial and chooses alike on every rank; the
 *                        counted plan bytes
 *   test-redist invalid  invalid maps and contracts are refused on every
 *                        rank; prints one "rank R: refused ..." line per rank
 *                        and case
 *   test-redist epoch    an engine map change: '>' falls back to two steps
 *                        until the maps are updated; '<' carries the map
 *   test-redist checker  the checker itself fails wrong data (so the other
 *                        cases can fail)
 *   test-redist record FILE N  a bbench-redist record has N complete points
 *   test-redist poison METHOD FILE  with BB_FAULT set: poisoning (see below)
 * Each prints "on P ranks: N passed, M failed" on rank 0; exit 1 on failure. */
#include "config.h"
#include "bench/redist/redist.h"
#include "private/hooks.h"
#include "check-redist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

/* The map of this rank in one code of the link (NULL outside it). */
static double *alloc_elems(const bb_map_t *m, int64_t eb)
{
    int64_t c = m ? bb_map_count(m) : 0;
    return malloc((size_t)(c > 0 ? c : 1) * (size_t)eb);
}

/* Send `messages` messages through a fresh plan and check each one. */
static void move_and_check(bb_redist_link_t *l, bb_redist_method_t method, int cmd,
                           int64_t eb, bb_map_t *dmap, bb_map_t *emap, int64_t n,
                           int messages, const char *what)
{
    bb_redist_plan_t *plan = NULL;
    bb_redist_setup_t su;
    bb_status_t st = bb_redist_plan_create(l, method, cmd, eb, dmap, emap, &plan, &su);
    CHECK_MSG(st == BB_OK, "%s: plan: %s", what, bb_status_string(st));
    if (st != BB_OK)
        return;
    const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
    double *sbuf = alloc_elems(sm, eb), *rbuf = alloc_elems(rm, eb);
    bb_redist_contract_t c = {cmd, n, eb, n};
    for (int k = 0; k < messages; k++) {
        if (sm)
            bb_rd_fill(sm, eb, k, sbuf);
        if (rm)
            bb_rd_fill_sentinel(bb_map_count(rm), eb, rbuf);
        bb_redist_metrics_t mt;
        st = bb_redist_plan_execute(plan, &c, sbuf, rbuf, &mt);
        CHECK_MSG(st == BB_OK, "%s k=%d: execute: %s", what, k, bb_status_string(st));
        if (st != BB_OK)
            break;
        CHECK_MSG(mt.steps == (method == BB_REDIST_TWO_STEP ? 2 : 1), "%s: %d steps", what, mt.steps);
        CHECK_MSG(mt.recv_dist == ((method == BB_REDIST_ROOT || method == BB_REDIST_ROOT_GATHERV)
                                       ? BB_RECV_DIST_ROOT : BB_RECV_DIST_DATA),
                  "%s: recv_dist %lld", what, (long long)mt.recv_dist);
        bb_rd_check_t ck;
        st = bb_rd_check(bb_redist_link_comm(l), rm, n, eb, k, rbuf, &ck);
        CHECK_MSG(st == BB_OK, "%s k=%d: %lld bad slots (first g=%lld), checksum %s", what, k,
                  (long long)ck.bad_slots, (long long)ck.first_bad_index,
                  ck.checksum_ok ? "ok" : "wrong");
    }
    bb_redist_traffic_t t;
    CHECK_MSG(bb_redist_plan_traffic(plan, &t) == BB_OK && t.payload_bytes == n * eb,
              "%s: traffic", what);
    free(sbuf);
    free(rbuf);
    CHECK_MSG(bb_redist_plan_destroy(plan) == BB_OK, "%s: destroy", what);
}

/* One MDI split (Pd = P/2) and intra mode; three layout pairs at N = 50 in
 * both, another pair and the edge sizes N = 0 (nothing to move) and N = 3
 * (< P) in intra mode; fewer at 3 and 4 ranks (below). */
static void case_moves(bb_world_t *world)
{
    static const char *const pairs[][2] = {
        {"spatial", "std"}, {"random:5", "cyclic"}, {"block-reverse", "block-cyclic:3"},
        {"std-ceil", "block-irregular:2"}
    };
    for (int mode = 0; mode < 2; mode++) {
        int intra = mode == 0, pd = ranks / 2 > 0 ? ranks / 2 : 1;
        if (!intra && ranks < 2)
            continue;
        bb_redist_link_t *l = NULL;
        bb_status_t st = bb_redist_link_create(world, intra ? BB_REDIST_MODE_INTRA
                                                            : BB_REDIST_MODE_MDI,
                                               intra ? 0 : pd, &l);
        CHECK_MSG(st == BB_OK, "link: %s", bb_status_string(st));
        if (st != BB_OK)
            continue;
        for (int a = 0; a < 6; a++) {
            int pair = a < 3 ? a : (a == 3 ? 3 : 0);
            int64_t n = a < 4 ? 50 : (a == 4 ? 0 : 3);
            if (!intra && a >= 3)
                continue;
            /* One collective costs milliseconds on 2 oversubscribed cores:
             * at 3 and 4 ranks, two pairs across codes and one pair plus
             * N = 3 (< P) within one code; the full set runs at 1 and 2. */
            if (ranks >= 3 && (intra ? (a != 2 && a != 5) : a == 2))
                continue;
            int64_t eb = (a % 2 == 0) ? 24 : 8;
            bb_map_t *dm = check_code_map(l, 0, pairs[pair][0], n, 0);
            bb_map_t *em = check_code_map(l, 1, pairs[pair][1], n, 0);
            for (int m = 0; m < BB_REDIST_METHODS; m++)
                for (int d = 0; d < 2; d++) {
                    char what[160];
                    int cmd = d ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
                    snprintf(what, sizeof what, "%s Pd=%d %s %c %s->%s N=%lld eb=%lld",
                             intra ? "intra" : "mdi", intra ? ranks : pd,
                             bb_redist_method_name((bb_redist_method_t)m), cmd,
                             pairs[pair][0], pairs[pair][1], (long long)n, (long long)eb);
                    move_and_check(l, (bb_redist_method_t)m, cmd, eb, dm, em, n, 2, what);
                }
            bb_map_free(dm);
            bb_map_free(em);
        }
        CHECK_MSG(bb_redist_link_destroy(l) == BB_OK, "link destroy");
    }
    /* MDI with no engine or no driver is an argument error, before MPI. */
    bb_redist_link_t *l = NULL;
    CHECK_MSG(bb_redist_link_create(world, BB_REDIST_MODE_MDI, 0, &l) == BB_ERR_ARG, "Pd = 0");
    CHECK_MSG(bb_redist_link_create(world, BB_REDIST_MODE_MDI, ranks, &l) == BB_ERR_ARG, "Pd = P");
    if (rank == 0)
        printf("moves: every method, both commands, checked\n");
}

/* A string's FNV-1a hash, to compare strings across ranks. */
static int64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

/* auto on one layout pair: its trial runs the four candidates in turn on
 * the plan's first 12 messages, and the close ones 4 more times each on the
 * next 8-16 (as their times fall), every one moving the right data; then
 * the plan runs the winner, alike on every rank for the same reason (which
 * winner and how many runs follow times: tests/mpi/redist-auto.sh fakes
 * them). */
static void auto_one(bb_redist_link_t *l, const char *from, const char *to, int64_t n,
                     int64_t eb)
{
    char what[128];
    snprintf(what, sizeof what, "auto %s->%s N=%lld", from, to, (long long)n);
    bb_map_t *dm = check_code_map(l, 0, from, n, 0), *em = check_code_map(l, 1, to, n, 0);
    bb_redist_plan_t *plan = NULL;
    bb_status_t st = bb_redist_plan_create(l, BB_REDIST_AUTO, BB_REDIST_SEND, eb, dm, em,
                                           &plan, NULL);
    CHECK_MSG(st == BB_OK, "%s: plan: %s", what, bb_status_string(st));
    if (st == BB_OK) {
        CHECK_MSG(bb_redist_plan_trial_left(plan) == 12
                      && bb_redist_plan_chosen(plan) == BB_REDIST_DIRECT
                      && strncmp(bb_redist_plan_choice_reason(plan), "auto: trial 1 of 12 ", 20)
                             == 0,
                  "%s: a new plan starts its trial with direct: %d left, '%s'", what,
                  bb_redist_plan_trial_left(plan), bb_redist_plan_choice_reason(plan));
        const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
        double *sbuf = alloc_elems(sm, eb), *rbuf = alloc_elems(rm, eb);
        bb_redist_contract_t c = {BB_REDIST_SEND, n, eb, n};
        int k = 0;
        for (; k < 28 && bb_redist_plan_trial_left(plan) > 0; k++) {
            if (sm)
                bb_rd_fill(sm, eb, k, sbuf);
            if (rm)
                bb_rd_fill_sentinel(bb_map_count(rm), eb, rbuf);
            st = bb_redist_plan_execute(plan, &c, sbuf, rbuf, NULL);
            bb_rd_check_t ck;
            CHECK_MSG(st == BB_OK
                          && bb_rd_check(bb_redist_link_comm(l), rm, n, eb, k, rbuf, &ck)
                                 == BB_OK,
                      "%s trial %d: %s, data wrong or not moved", what, k + 1,
                      bb_status_string(st));
        }
        free(sbuf);
        free(rbuf);
        CHECK_MSG(k == 12 || k == 20 || k == 24 || k == 28, "%s: the trial took %d messages "
                  "(12, or 12 and 4 for each of 2-4 close candidates)", what, k);
        bb_redist_traffic_t t;
        CHECK_MSG(bb_redist_plan_traffic(plan, &t) == BB_OK, "%s: traffic", what);
        bb_redist_method_t got = bb_redist_plan_chosen(plan);
        const char *why = bb_redist_plan_choice_reason(plan);
        char want[64];
        snprintf(want, sizeof want, "auto: %s: least trial median", bb_redist_method_name(got));
        CHECK_MSG(bb_redist_plan_trial_left(plan) == 0 && t.chosen == got
                      && (got == BB_REDIST_DIRECT || got == BB_REDIST_PACK
                          || got == BB_REDIST_SPARSE || got == BB_REDIST_OVERLAP)
                      && strncmp(why, want, strlen(want)) == 0,
                  "%s: after the trial: %s, reason '%s'", what, bb_redist_method_name(got), why);
        CHECK_MSG(t.send_mean_run_elements >= 1 && t.recv_mean_run_elements >= 1
                      && t.send_runs_max >= 1 && t.recv_runs_max >= 1,
                  "%s: per-side runs %.2f %.2f, max %lld %lld", what, t.send_mean_run_elements,
                  t.recv_mean_run_elements, (long long)t.send_runs_max, (long long)t.recv_runs_max);
        int64_t mine[2] = {(int64_t)got, str_hash(why)}, mn[2], mx[2];
        bb_agree_minmax(MPI_COMM_WORLD, mine, 2, mn, mx);
        CHECK_MSG(bb_agree_fields_equal(mn, mx, 0, 2),
                  "%s: every rank chose alike, for the same reason", what);
        if (rank == 0)
            printf("%s: %s\n", what, why);
        CHECK_MSG(bb_redist_plan_destroy(plan) == BB_OK, "%s: destroy", what);
    }
    bb_map_free(dm);
    bb_map_free(em);
}

/* The plan bytes of one method at N (random:5 -> std, '>', 24 B). */
static int64_t plan_bytes(bb_redist_link_t *l, bb_redist_method_t method, int64_t n,
                          int64_t *max_count_out)
{
    bb_map_t *dm = check_code_map(l, 0, "random:5", n, 0), *em = check_code_map(l, 1, "std", n, 0);
    bb_redist_plan_t *plan = NULL;
    bb_redist_traffic_t t;
    memset(&t, 0, sizeof t);
    t.plan_bytes_max = -1;
    bb_status_t st = bb_redist_plan_create(l, method, BB_REDIST_SEND, 24, dm, em, &plan, NULL);
    CHECK_MSG(st == BB_OK && bb_redist_plan_traffic(plan, &t) == BB_OK,
              "bytes %s N=%lld: %s", bb_redist_method_name(method), (long long)n,
              bb_status_string(st));
    CHECK_MSG(t.message_bytes_max == 0, "bytes %s: execute allocates nothing",
              bb_redist_method_name(method));
    int64_t cnt = (dm ? bb_map_count(dm) : 0) + (em ? bb_map_count(em) : 0);
    bb_agree_max(MPI_COMM_WORLD, &cnt, 1, max_count_out);
    if (st == BB_OK)
        bb_redist_plan_destroy(plan);
    bb_map_free(dm);
    bb_map_free(em);
    return t.plan_bytes_max;
}

/* overlap moves what sparse moves: the same messages (peers, bytes in, out
 * and copied locally) and runs, counted alike by bb_redist_plan_traffic;
 * only the plan bytes differ (staging and run lists instead of datatypes). */
static void traffic_like_sparse(bb_redist_link_t *l, const char *from, const char *to,
                                int64_t n, int cmd)
{
    bb_map_t *dm = check_code_map(l, 0, from, n, 0), *em = check_code_map(l, 1, to, n, 0);
    bb_redist_traffic_t t[2];
    bb_redist_method_t ms[2] = {BB_REDIST_SPARSE, BB_REDIST_OVERLAP};
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        bb_redist_plan_t *plan = NULL;
        memset(&t[i], 0, sizeof t[i]);
        ok &= bb_redist_plan_create(l, ms[i], cmd, 24, dm, em, &plan, NULL) == BB_OK
              && bb_redist_plan_traffic(plan, &t[i]) == BB_OK;
        if (plan)
            bb_redist_plan_destroy(plan);
    }
    CHECK_MSG(ok, "traffic %s->%s %c: plans", from, to, cmd);
    CHECK_MSG(ok && t[1].payload_bytes == t[0].payload_bytes
                  && t[1].moved_bytes == t[0].moved_bytes
                  && t[1].max_in_bytes == t[0].max_in_bytes
                  && t[1].max_out_bytes == t[0].max_out_bytes
                  && t[1].max_self_bytes == t[0].max_self_bytes
                  && t[1].max_peers == t[0].max_peers && t[1].mean_peers == t[0].mean_peers
                  && t[1].send_runs_max == t[0].send_runs_max
                  && t[1].recv_runs_max == t[0].recv_runs_max
                  && t[1].send_mean_run_elements == t[0].send_mean_run_elements
                  && t[1].recv_mean_run_elements == t[0].recv_mean_run_elements
                  && t[1].steps == 1 && t[1].chosen == BB_REDIST_OVERLAP
                  && t[1].message_bytes_max == 0 && t[1].plan_bytes_max > 0,
              "traffic %s->%s %c: overlap moved %lld B (in %lld, out %lld, self %lld, %lld "
              "peers), sparse %lld B (%lld, %lld, %lld, %lld)", from, to, cmd,
              (long long)t[1].moved_bytes, (long long)t[1].max_in_bytes,
              (long long)t[1].max_out_bytes, (long long)t[1].max_self_bytes,
              (long long)t[1].max_peers, (long long)t[0].moved_bytes,
              (long long)t[0].max_in_bytes, (long long)t[0].max_out_bytes,
              (long long)t[0].max_self_bytes, (long long)t[0].max_peers);
    if (ok && rank == 0)
        printf("overlap traffic as sparse's: %s->%s %c N=%lld moved %lld B, self %lld B, "
               "%lld peers\n", from, to, cmd, (long long)n, (long long)t[1].moved_bytes,
               (long long)t[1].max_self_bytes, (long long)t[1].max_peers);
    bb_map_free(dm);
    bb_map_free(em);
}

/* auto's trial, the link's retired threshold and the counted plan bytes. */
static void case_auto(bb_world_t *world)
{
    int mdi = ranks > 1;
    bb_redist_link_t *l = NULL;
    bb_status_t st = bb_redist_link_create(world, mdi ? BB_REDIST_MODE_MDI : BB_REDIST_MODE_INTRA,
                                           mdi ? ranks / 2 : 0, &l);
    CHECK_MSG(st == BB_OK, "auto link: %s", bb_status_string(st));
    if (st != BB_OK)
        return;
    double thr = bb_redist_link_auto_threshold(l);
    CHECK_MSG(thr == 0, "the link calibrates nothing: threshold %.1f", thr);
    if (rank == 0)
        printf("auto threshold: %.0f (not calibrated: auto runs a trial)\n", thr);
    /* scattered single elements (24 B runs) and long contiguous runs */
    auto_one(l, "random:5", "std", 3000, 24);
    auto_one(l, "std", "std", 3000, 24);
    traffic_like_sparse(l, "block-cyclic:64", "block-cyclic:1000", 3000, BB_REDIST_SEND);
    traffic_like_sparse(l, "random:5", "cyclic", 3000, BB_REDIST_RECEIVE);

    /* root holds the whole array on every rank (O(N) each), direct only
     * what the rank's maps name (O(count), at most 48 B per element: map
     * copies, slot lists and datatype arrays); both grow with N. */
    int64_t c1, c2, cr;
    int64_t r1 = plan_bytes(l, BB_REDIST_ROOT, 2000, &cr), r2 = plan_bytes(l, BB_REDIST_ROOT, 4000, &cr);
    int64_t d1 = plan_bytes(l, BB_REDIST_DIRECT, 2000, &c1), d2 = plan_bytes(l, BB_REDIST_DIRECT, 4000, &c2);
    CHECK_MSG(r1 >= 2000 * 24 && r2 - r1 >= 2000 * 24, "root plan bytes %lld, %lld: O(N) per rank",
              (long long)r1, (long long)r2);
    CHECK_MSG(d1 > 0 && d2 > d1 && d1 <= 48 * c1 + 4096 + 64 * ranks
                  && d2 <= 48 * c2 + 4096 + 64 * ranks,
              "direct plan bytes %lld, %lld for %lld, %lld local elements", (long long)d1,
              (long long)d2, (long long)c1, (long long)c2);
    if (rank == 0)
        printf("plan bytes, busiest rank: root %lld -> %lld, direct %lld -> %lld "
               "(N 2000 -> 4000, %lld -> %lld local elements)\n", (long long)r1, (long long)r2,
               (long long)d1, (long long)d2, (long long)c1, (long long)c2);
    /* The root methods' whole-array steps in pieces (as N * components >
     * INT_MAX needs), here of 7 doubles: N = 50, 24 B = 150 doubles, 22
     * pieces, the last short. */
    for (int m = BB_REDIST_ROOT; m <= BB_REDIST_ROOT_GATHERV; m++)
        for (int d = 0; d < 2; d++) {
            int cmd = d ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
            int64_t n = 50, eb = 24;
            bb_map_t *dm = check_code_map(l, 0, "random:5", n, 0);
            bb_map_t *em = check_code_map(l, 1, "cyclic", n, 0);
            bb_redist_plan_t *plan = NULL;
            st = bb_redist_plan_create(l, (bb_redist_method_t)m, cmd, eb, dm, em, &plan, NULL);
            CHECK_MSG(st == BB_OK, "chunked %s: plan: %s", bb_redist_method_name(m),
                      bb_status_string(st));
            if (st == BB_OK) {
                bb_redist_plan_set_root_chunk(plan, 7);
                const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
                double *sb = alloc_elems(sm, eb), *rb = alloc_elems(rm, eb);
                if (sm)
                    bb_rd_fill(sm, eb, 1, sb);
                if (rm)
                    bb_rd_fill_sentinel(bb_map_count(rm), eb, rb);
                bb_redist_contract_t c = {cmd, n, eb, n};
                st = bb_redist_plan_execute(plan, &c, sb, rb, NULL);
                CHECK_MSG(st == BB_OK && bb_rd_check(bb_redist_link_comm(l), rm, n, eb, 1, rb,
                                                     NULL) == BB_OK,
                          "chunked %s %c: in pieces of 7 doubles, data right",
                          bb_redist_method_name(m), cmd);
                if (st == BB_OK && rank == 0 && d == 1)
                    printf("%s: whole array in pieces of 7 doubles, data right\n",
                           bb_redist_method_name(m));
                free(sb);
                free(rb);
                bb_redist_plan_destroy(plan);
            }
            bb_map_free(dm);
            bb_map_free(em);
        }
    CHECK_MSG(bb_redist_link_destroy(l) == BB_OK, "auto link destroy");
}

/* Rank `who` gets a bad map (kind: dup, gap, range, n, missing); every rank
 * must refuse, with the same fault. */
static void invalid_one(bb_redist_link_t *l, const char *kind, int who, int engine_side)
{
    int64_t n = 40;
    /* one rank alone always agrees with itself on its epoch */
    if (strcmp(kind, "epoch") == 0 && bb_redist_link_code_size(l, engine_side) < 2)
        return;
    bb_map_t *dm = check_code_map(l, 0, "cyclic", n, 0), *em = check_code_map(l, 1, "std", n, 0);
    bb_map_t **victim = engine_side ? &em : &dm;
    if (rank == who && *victim != NULL) {
        int64_t cnt = bb_map_count(*victim);
        int64_t *idx = malloc((size_t)(cnt + 1) * sizeof *idx);
        memcpy(idx, bb_map_indices(*victim), (size_t)cnt * sizeof *idx);
        int64_t nn = n, epoch = 0;
        if (strcmp(kind, "dup") == 0) {
            idx[cnt++] = idx[0];                /* and nothing missing */
        } else if (strcmp(kind, "gap") == 0) {
            cnt--;                              /* drop one element */
        } else if (strcmp(kind, "range") == 0) {
            idx[0] = n + 7;                     /* out of [0, N) */
        } else if (strcmp(kind, "n") == 0) {
            nn = n + 1;
        } else if (strcmp(kind, "epoch") == 0) {
            epoch = 3;
        }
        bb_map_free(*victim);
        *victim = NULL;
        if (strcmp(kind, "missing") != 0)
            bb_map_create(nn, idx, cnt, epoch, victim);
        free(idx);
    }
    bb_redist_plan_t *plan = NULL;
    bb_redist_setup_t su;
    bb_status_t st = bb_redist_plan_create(l, BB_REDIST_DIRECT, BB_REDIST_SEND, 24, dm, em,
                                           &plan, &su);
    const bb_map_fault_t *f = engine_side ? &su.engine_fault : &su.driver_fault;
    int64_t mine[4] = {f->duplicates, f->gaps, f->out_of_range,
                       f->n_mismatch + 2 * f->missing + 4 * f->epoch_mismatch}, mn[4], mx[4];
    bb_agree_minmax(MPI_COMM_WORLD, mine, 4, mn, mx);
    CHECK_MSG(st == BB_REFUSED, "%s on rank %d: %s", kind, who, bb_status_string(st));
    CHECK_MSG(bb_agree_fields_equal(mn, mx, 0, 4), "%s: every rank sees the same fault", kind);
    int right = (strcmp(kind, "dup") == 0 && f->duplicates == 1 && f->gaps == 0)
                || (strcmp(kind, "gap") == 0 && f->gaps == 1 && f->duplicates == 0)
                || (strcmp(kind, "range") == 0 && f->out_of_range == 1 && f->gaps == 1)
                || (strcmp(kind, "n") == 0 && (f->n_mismatch || su.n_mismatch))
                || (strcmp(kind, "missing") == 0 && f->missing)
                || (strcmp(kind, "epoch") == 0 && f->epoch_mismatch);
    CHECK_MSG(right,
              "%s: fault dup=%lld gap=%lld range=%lld n=%d missing=%d epoch=%d", kind,
              (long long)f->duplicates, (long long)f->gaps, (long long)f->out_of_range,
              f->n_mismatch, f->missing, f->epoch_mismatch);
    if (st == BB_REFUSED)
        printf("rank %d: refused %s (%s map, bad on rank %d)\n", rank, kind,
               engine_side ? "engine" : "driver", who);
    else if (st == BB_OK)
        bb_redist_plan_destroy(plan);
    bb_map_free(dm);
    bb_map_free(em);
}

static void case_invalid(bb_world_t *world)
{
    bb_redist_link_t *l = NULL;
    int mdi = ranks > 1;
    if (bb_redist_link_create(world, mdi ? BB_REDIST_MODE_MDI : BB_REDIST_MODE_INTRA,
                              mdi ? 1 : 0, &l) != BB_OK) {
        CHECK_MSG(0, "link");
        return;
    }
    static const char *const kinds[] = {"dup", "gap", "range", "n", "missing", "epoch"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        /* a driver rank's map, then the last (engine) rank's map */
        invalid_one(l, kinds[i], 0, 0);
        invalid_one(l, kinds[i], ranks - 1, 1);
    }

    /* bb_map_validate alone, on the world: a duplicate on the last rank. */
    {
        int64_t first, cnt;
        bb_std_block(20, rank, ranks, &first, &cnt);
        int64_t *idx = malloc((size_t)(cnt + 1) * sizeof *idx);
        for (int64_t i = 0; i < cnt; i++)
            idx[i] = first + i;
        if (rank == ranks - 1)
            idx[cnt++] = 0;
        bb_map_t *m = NULL;
        bb_map_create(20, idx, cnt, 1, &m);
        bb_map_fault_t f;
        bb_status_t st = bb_map_validate(MPI_COMM_WORLD, m, &f);
        CHECK_MSG(st == BB_REFUSED && f.duplicates == 1 && f.gaps == 0, "validate dup: %s",
                  bb_status_string(st));
        if (st == BB_REFUSED)
            printf("rank %d: refused validate-dup\n", rank);
        bb_map_free(m);
        free(idx);
    }

    /* Admission: one rank presents another N, then an over-cap message. */
    {
        int64_t n = 30;
        bb_map_t *dm = check_code_map(l, 0, "std", n, 0);
        bb_map_t *em = check_code_map(l, 1, "random:2", n, 0);
        bb_redist_plan_t *plan = NULL;
        bb_status_t st = bb_redist_plan_create(l, BB_REDIST_SPARSE, BB_REDIST_SEND, 8, dm, em,
                                               &plan, NULL);
        CHECK_MSG(st == BB_OK, "admission plan: %s", bb_status_string(st));
        if (st == BB_OK) {
            const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
            double *sb = alloc_elems(sm, 8), *rb = alloc_elems(rm, 8);
            if (rm)
                bb_rd_fill_sentinel(bb_map_count(rm), 8, rb);
            bb_redist_contract_t c = {BB_REDIST_SEND, n, 8, n};
            if (rank == ranks - 1)
                c.n = n + 1;
            bb_redist_metrics_t mt;
            int64_t seq = bb_redist_plan_sequence(plan);
            st = bb_redist_plan_execute(plan, &c, sb, rb, &mt);
            CHECK_MSG(st == BB_REFUSED && mt.refusal.stage == BB_STAGE_PREFLIGHT
                          && mt.refusal.rank == ranks - 1 && mt.refusal.sequence == seq,
                      "wrong N on the last rank: %s stage %s rank %d", bb_status_string(st),
                      bb_stage_name(mt.refusal.stage), mt.refusal.rank);
            CHECK_MSG(bb_redist_plan_sequence(plan) == seq + 1, "refusal consumes the sequence");
            int untouched = 1;
            for (int64_t i = 0; rm && i < bb_map_count(rm); i++)
                untouched &= rb[i] == BB_REDIST_SENTINEL;
            CHECK_MSG(untouched, "a refused message moves nothing");
            if (st == BB_REFUSED)
                printf("rank %d: refused admission-n\n", rank);
            c.n = n;
            c.cap = (rank == 0) ? n - 1 : n;
            st = bb_redist_plan_execute(plan, &c, sb, rb, &mt);
            CHECK_MSG(st == BB_REFUSED && mt.refusal.rank == 0
                          && (rank != 0 || mt.local_cause == BB_REDIST_LOCAL_OVER_CAP),
                      "over cap on rank 0: %s", bb_status_string(st));
            if (st == BB_REFUSED)
                printf("rank %d: refused admission-cap\n", rank);
            c.cap = n;
            if (sm)
                bb_rd_fill(sm, 8, 0, sb);
            st = bb_redist_plan_execute(plan, &c, sb, rb, &mt);
            CHECK_MSG(st == BB_OK, "after refusals the plan works: %s", bb_status_string(st));
            CHECK_MSG(bb_rd_check(bb_redist_link_comm(l), rm, n, 8, 0, rb, NULL) == BB_OK,
                      "after refusals the data are right");
            free(sb);
            free(rb);
            bb_redist_plan_destroy(plan);
        }
        bb_map_free(dm);
        bb_map_free(em);
    }
    bb_redist_link_destroy(l);
}

/* One epoch scenario for a method and a command. */
static void epoch_one(bb_redist_link_t *l, bb_redist_method_t method, int cmd)
{
    int64_t n = 37, eb = 24;
    char what[96];
    snprintf(what, sizeof what, "epoch %s %c", bb_redist_method_name(method), cmd);
    bb_map_t *dm = check_code_map(l, 0, "block-irregular:4", n, 0);
    bb_map_t *em = check_code_map(l, 1, "std", n, 0);
    bb_redist_plan_t *plan = NULL;
    bb_status_t st = bb_redist_plan_create(l, method, cmd, eb, dm, em, &plan, NULL);
    CHECK_MSG(st == BB_OK, "%s: plan: %s", what, bb_status_string(st));
    if (st != BB_OK)
        return;
    int is_engine = bb_redist_link_is_engine(l);
    bb_map_t *em2 = check_code_map(l, 1, "random:9", n, 1);
    int one_step = method != BB_REDIST_TWO_STEP;
    int distributed = method != BB_REDIST_ROOT && method != BB_REDIST_ROOT_GATHERV;
    for (int phase = 0; phase < 4; phase++) {
        if (phase == 1 && is_engine) {
            /* the engine moves its atoms: a new map, stored, not sent */
            bb_redist_setup_t su;
            bb_map_t *same = check_code_map(l, 1, "cyclic", n, 0);
            st = bb_redist_plan_set_engine_map(plan, same, &su);
            CHECK_MSG(st == BB_REFUSED && su.stale_epoch, "%s: an epoch that does not increase "
                      "is refused: %s", what, bb_status_string(st));
            bb_map_free(same);
            st = bb_redist_plan_set_engine_map(plan, em2, &su);
            CHECK_MSG(st == BB_OK, "%s: set engine map: %s", what, bb_status_string(st));
        }
        if (phase == 3) {
            st = bb_redist_plan_update_maps(plan, NULL);
            CHECK_MSG(st == BB_OK, "%s: update maps: %s", what, bb_status_string(st));
        }
        const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
        double *sb = alloc_elems(sm, eb), *rb = alloc_elems(rm, eb);
        if (sm)
            bb_rd_fill(sm, eb, phase, sb);
        if (rm)
            bb_rd_fill_sentinel(bb_map_count(rm), eb, rb);
        bb_redist_contract_t c = {cmd, n, eb, n};
        bb_redist_metrics_t mt;
        st = bb_redist_plan_execute(plan, &c, sb, rb, &mt);
        CHECK_MSG(st == BB_OK, "%s phase %d: %s", what, phase, bb_status_string(st));
        /* phase 0: fresh plan; 1: just changed; 2: still changed; 3: updated */
        int want_steps = one_step ? 1 : 2, want_map = 0;
        if (distributed && (phase == 1 || phase == 2) && cmd == BB_REDIST_SEND
            && method != BB_REDIST_TWO_STEP)
            want_steps = 2; /* the fallback */
        if (distributed && phase == 1 && cmd == BB_REDIST_RECEIVE)
            want_map = 1;   /* the reply carried the map; later ones need not */
        CHECK_MSG(mt.steps == want_steps, "%s phase %d: %d steps, want %d", what, phase, mt.steps,
                  want_steps);
        CHECK_MSG(mt.map_sent == want_map
                      && mt.recv_dist == (!distributed ? BB_RECV_DIST_ROOT
                                          : want_map ? BB_RECV_DIST_MAP : BB_RECV_DIST_DATA),
                  "%s phase %d: map_sent %d recv_dist %lld", what, phase, mt.map_sent,
                  (long long)mt.recv_dist);
        bb_rd_check_t ck;
        st = bb_rd_check(bb_redist_link_comm(l), rm, n, eb, phase, rb, &ck);
        CHECK_MSG(st == BB_OK, "%s phase %d: %lld bad slots, checksum %s", what, phase,
                  (long long)ck.bad_slots, ck.checksum_ok ? "ok" : "wrong");
        if (phase == 2 && mt.steps == 2 && cmd == BB_REDIST_SEND && st == BB_OK
            && method != BB_REDIST_TWO_STEP && rank == 0)
            printf("%s: epoch mismatch fell back to two steps, data right\n", what);
        free(sb);
        free(rb);
    }
    bb_redist_plan_destroy(plan);
    bb_map_free(dm);
    bb_map_free(em);
    bb_map_free(em2);
}

static void case_epoch(bb_world_t *world)
{
    bb_redist_link_t *l = NULL;
    int mdi = ranks > 1;
    if (bb_redist_link_create(world, mdi ? BB_REDIST_MODE_MDI : BB_REDIST_MODE_INTRA,
                              mdi ? (ranks + 1) / 2 : 0, &l) != BB_OK) {
        CHECK_MSG(0, "link");
        return;
    }
    for (int m = 0; m < BB_REDIST_METHODS; m++) {
        epoch_one(l, (bb_redist_method_t)m, BB_REDIST_SEND);
        epoch_one(l, (bb_redist_method_t)m, BB_REDIST_RECEIVE);
    }
    bb_redist_link_destroy(l);
}

/* The checker must fail a wrong value, a stale repetition, an untouched
 * sentinel and a duplicate that per-slot checks cannot see. */
static void case_checker(void)
{
    int64_t n = 24, eb = 24, first, cnt;
    bb_std_block(n, rank, ranks, &first, &cnt);
    int64_t *idx = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *idx);
    for (int64_t i = 0; i < cnt; i++)
        idx[i] = first + i;
    bb_map_t *m = NULL;
    bb_map_create(n, idx, cnt, 0, &m);
    double *buf = malloc((size_t)(cnt > 0 ? cnt : 1) * (size_t)eb);
    bb_rd_check_t ck;
    bb_rd_fill(m, eb, 5, buf);
    CHECK_MSG(bb_rd_check(MPI_COMM_WORLD, m, n, eb, 5, buf, &ck) == BB_OK && ck.slots == n * 3,
              "right data pass");
    CHECK_MSG(bb_rd_check(MPI_COMM_WORLD, m, n, eb, 6, buf, &ck) == BB_ERR_VALIDATION,
              "a stale repetition fails");
    if (rank == ranks - 1 && cnt > 0)
        buf[3 * cnt - 1] += 4.0;
    CHECK_MSG(bb_rd_check(MPI_COMM_WORLD, m, n, eb, 5, buf, &ck) == BB_ERR_VALIDATION
                  && ck.bad_slots == 1,
              "one wrong slot fails on every rank");
    bb_rd_fill(m, eb, 5, buf);
    if (rank == 0 && cnt > 0)
        buf[1] = BB_REDIST_SENTINEL;
    CHECK_MSG(bb_rd_check(MPI_COMM_WORLD, m, n, eb, 5, buf, &ck) == BB_ERR_VALIDATION,
              "an untouched sentinel fails");
    /* rank 0 claims element 0 twice and never element 1: every slot holds the
     * value its map names, only the checksum sees it */
    bb_map_free(m);
    if (rank == 0 && cnt > 1)
        idx[1] = 0;
    bb_map_create(n, idx, cnt, 0, &m);
    bb_rd_fill(m, eb, 5, buf);
    CHECK_MSG(bb_rd_check(MPI_COMM_WORLD, m, n, eb, 5, buf, &ck) == BB_ERR_VALIDATION
                  && ck.bad_slots == 0 && !ck.checksum_ok,
              "a duplicate with a gap fails through the checksum");
    bb_map_free(m);
    free(buf);
    free(idx);
}

/* The bound's probe times each pair part on link rank a alone, after an
 * untimed round trip, so that no rank's late arrival enters the bound once
 * per part; every rank then holds each part's maximum, a's figure (the
 * engine keeps the parts of the rank with the slowest whole, which need
 * not be a); the agreement is timed on every rank, and the bound adds them. */
static void case_probe(bb_world_t *world)
{
    int mdi = ranks > 1;
    bb_redist_link_t *l = NULL;
    bb_rd_probe_t *p = NULL;
    bb_status_t st = bb_redist_link_create(world, mdi ? BB_REDIST_MODE_MDI : BB_REDIST_MODE_INTRA,
                                           mdi ? 1 : 0, &l);
    CHECK_MSG(st == BB_OK, "probe link: %s", bb_status_string(st));
    if (st != BB_OK)
        return;
    st = bb_rd_probe_create(l, 7200, 7200, 7200, &p);
    CHECK_MSG(st == BB_OK, "probe: %s", bb_status_string(st));
    if (st == BB_OK) {
        double parts[BB_PROBE_PARTS] = {0}, counts[1] = {0};
        CHECK(bb_rd_probe_call(p, parts, counts) == BB_OK);
        CHECK_MSG(parts[BB_PROBE_AGREE] > 0, "the agreement is timed on rank %d", rank);
        if (mdi) {
            CHECK_MSG(parts[BB_PROBE_LATENCY] > 0 && parts[BB_PROBE_P2P] > 0,
                      "rank %d holds the pair's latency (%g s) and p2p (%g s)", rank,
                      parts[BB_PROBE_LATENCY], parts[BB_PROBE_P2P]);
            double pair[2] = {parts[BB_PROBE_LATENCY], parts[BB_PROBE_P2P]}, lo[2], hi[2];
            MPI_Allreduce(pair, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(pair, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            CHECK_MSG(lo[0] == hi[0] && lo[1] == hi[1],
                      "every rank holds the same pair parts (latency %g to %g s)", lo[0], hi[0]);
        } else {
            CHECK_MSG(parts[BB_PROBE_LATENCY] == 0 && parts[BB_PROBE_P2P] == 0,
                      "one rank times no pair part (latency %g s, p2p %g s)",
                      parts[BB_PROBE_LATENCY], parts[BB_PROBE_P2P]);
        }
        const double *one[BB_PROBE_PARTS];
        for (int i = 0; i < BB_PROBE_PARTS; i++)
            one[i] = &parts[i];
        bb_rd_bound_t b;
        bb_rd_probe_bound(p, one, 1, &b);
        double data = b.latency_s;
        const double others[] = {b.p2p_s, b.memcpy_s, b.host_s};
        for (int i = 0; i < 3; i++)
            data = others[i] > data ? others[i] : data;
        CHECK_MSG(b.bound_s > 0 && b.bound_s == data,
                  "the bound is the largest of its data parts (%g s)", b.bound_s);
        bb_rd_probe_free(p);
    }
    CHECK(bb_redist_link_destroy(l) == BB_OK);
}

/* A bbench-redist record: schema-valid, `want` points, every one with its
 * method, three or more elapsed samples, setup, the bound and efficiency,
 * and the layout figures. */
static int check_record(const char *path, int want)
{
    cJSON *doc = NULL;
    char err[256];
    if (bb_record_read(path, &doc, err, sizeof err) != BB_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const cJSON *bench = cJSON_GetObjectItemCaseSensitive(doc, "benchmark");
    CHECK_MSG(cJSON_IsString(bench) && strcmp(bench->valuestring, "redist") == 0, "benchmark");
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(doc, "points"), *pt;
    CHECK_MSG(cJSON_GetArraySize(points) == want, "%d points, want %d",
              cJSON_GetArraySize(points), want);
    static const char *const names[] = {
        "elapsed", "phase.admission", "phase.payload", "setup.total", "setup.map_transfer",
        "setup.plan_build", "communication.payload", "redist.bytes_changing_owner",
        "redist.bytes_moved", "redist.max_in_bytes", "redist.max_out_bytes",
        "redist.peers_mean", "redist.send_mean_run_elements",
        "redist.recv_mean_run_elements", "memory.plan_bytes_max", "amortize.break_even_messages",
        "bound", "bound.p2p", "bound.agree", "bound.latency", "bound.host",
        "bound.memcpy", "efficiency", "redist.wrong_messages"
    };
    cJSON_ArrayForEach(pt, points) {
        const cJSON *par = cJSON_GetObjectItemCaseSensitive(pt, "parameters");
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(pt, "quantities");
        const cJSON *method = cJSON_GetObjectItemCaseSensitive(par, "method");
        bb_redist_method_t m;
        CHECK_MSG(cJSON_IsString(method) && bb_redist_method_parse(method->valuestring, &m) == BB_OK,
                  "a point without a method");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(pt, "status");
        CHECK_MSG(cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0, "status");
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(q, names[i]);
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(x, "value");
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(x, "reason");
            CHECK_MSG(x != NULL && (cJSON_IsNumber(v) || (cJSON_IsNull(v) && cJSON_IsString(r))),
                      "%s: %s missing, or null without a reason", method ? method->valuestring : "?",
                      names[i]);
        }
        const cJSON *el = cJSON_GetObjectItemCaseSensitive(q, "elapsed");
        CHECK_MSG(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(el, "samples")) >= 3,
                  "elapsed has at least three samples");
        const cJSON *wrong = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(q, "redist.wrong_messages"), "value");
        CHECK_MSG(cJSON_IsNumber(wrong) && wrong->valuedouble == 0, "no wrong messages");
    }
    cJSON_Delete(doc);
    return failed > 0;
}

/* Under BB_FAULT (the interposer preloaded): a message whose MPI call fails
 * returns BB_ERR_MPI on the failing rank, poisons and retains the plan, and
 * every later call is refused before MPI; then the job is aborted (3).  The
 * verdict goes to a file because the abort may lose stdout. */
static void case_poison(bb_world_t *world, const char *method_name, const char *verdict)
{
    bb_redist_method_t method;
    bb_redist_link_t *l = NULL;
    if (bb_redist_method_parse(method_name, &method) != BB_OK
        || bb_redist_link_create(world, ranks > 1 ? BB_REDIST_MODE_MDI : BB_REDIST_MODE_INTRA,
                                 ranks > 1 ? 1 : 0, &l) != BB_OK) {
        fprintf(stderr, "poison: bad method or link\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int64_t n = 20, eb = 8;
    bb_map_t *dm = check_code_map(l, 0, "cyclic", n, 0), *em = check_code_map(l, 1, "std", n, 0);
    bb_redist_plan_t *plan = NULL;
    if (bb_redist_plan_create(l, method, BB_REDIST_SEND, eb, dm, em, &plan, NULL) != BB_OK) {
        fprintf(stderr, "poison: plan\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const bb_map_t *sm = bb_redist_plan_send_map(plan), *rm = bb_redist_plan_recv_map(plan);
    double *sb = alloc_elems(sm, eb), *rb = alloc_elems(rm, eb);
    if (sm)
        bb_rd_fill(sm, eb, 0, sb);
    bb_redist_contract_t c = {BB_REDIST_SEND, n, eb, n};
    size_t before = bb_poisoned_count();
    bb_status_t st = bb_redist_plan_execute(plan, &c, sb, rb, NULL);
    if (st == BB_ERR_MPI) {
        CHECK_MSG(bb_redist_plan_poisoned(plan), "the plan is poisoned");
        CHECK_MSG(bb_poisoned_count() == before + 1, "the plan is retained");
        CHECK_MSG(bb_redist_plan_execute(plan, &c, sb, rb, NULL) == BB_ERR_POISONED,
                  "a later message is refused");
        CHECK_MSG(bb_redist_plan_update_maps(plan, NULL) == BB_ERR_POISONED,
                  "a later update is refused");
        CHECK_MSG(bb_redist_plan_destroy(plan) == BB_ERR_POISONED, "destroy keeps it");
        FILE *f = fopen(verdict, "w");
        if (f) {
            fprintf(f, "rank %d: poison: %d passed, %d failed\n", rank, passed, failed);
            fclose(f);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    fprintf(stderr, "rank %d: poison: execute returned %s\n", rank, bb_status_string(st));
}

int main(int argc, char **argv)
{
    bb_world_t *world = check_mpi_start(&argc, &argv, &rank, &ranks);
    const char *which = argc > 1 ? argv[1] : "all";
    if (strcmp(which, "record") == 0) {
        char *end = NULL;
        long want = argc > 3 ? strtol(argv[3], &end, 10) : -1;
        int rc = (want >= 0 && end && *end == '\0') ? check_record(argv[2], (int)want) : 2;
        if (rank == 0)
            printf("record: %d passed, %d failed\n", passed, failed);
        bb_world_release(world);
        MPI_Finalize();
        return rc;
    }
    int all = strcmp(which, "all") == 0;
    if (strcmp(which, "poison") == 0 && argc > 3)
        case_poison(world, argv[2], argv[3]);
    if (all || strcmp(which, "moves") == 0) {
        case_moves(world);
        case_auto(world);
        case_probe(world);
    }
    if (all || strcmp(which, "invalid") == 0)
        case_invalid(world);
    if (all || strcmp(which, "epoch") == 0)
        case_epoch(world);
    if (all || strcmp(which, "checker") == 0)
        case_checker();
    fflush(stdout);
    int mine[2] = {passed, failed}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s on %d ranks: %d passed, %d failed\n", which, ranks, tot[0], tot[1]);
    int bad = failed > 0, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bb_world_release(world);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
