/* reference.c: ScaLAPACK's Cpdgemr2d as a line of bbench-redist, a
 * reference beside the library's methods (redist.h): the same
 * elements moved between the same layouts, every message checked slot by
 * slot outside its timing, its setup (grids and descriptors) timed apart. */
#include "config.h"
#include "redist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bb_redist_reference_prepare(bb_redist_reference_t *r, const bb_redist_point_t *pt,
                                const bb_layout_t *from, const bb_layout_t *to)
{
    bb_scalapack_setup_t su = {0};
    memset(r, 0, sizeof *r);
    r->pt = pt;
    bb_status_t st = bb_scalapack_redist_create_on_link(pt->link, pt->command, pt->n,
                                                        pt->element_bytes, from, to, &r->ctx,
                                                        &su, r->why, sizeof r->why);
    if (st == BB_REFUSED)
        return 0;  /* alike on every rank, nothing communicated */
    if (st != BB_OK)
        bb_bench_fatal(pt->bench, "scalapack: %s (%s)", bb_status_string(st), r->why);
    if (bb_stats_reduce_max(pt->comm, &su.total_s, 1, &r->setup_s) != MPI_SUCCESS)
        bb_bench_fatal(pt->bench, "MPI_Allreduce of the setup failed");
    int send = pt->command == BB_REDIST_SEND;
    r->sm = send ? pt->dmap : pt->emap;
    r->rm = send ? pt->emap : pt->dmap;
    int64_t sc = bb_scalapack_redist_send_count(r->ctx);
    int64_t rc = bb_scalapack_redist_recv_count(r->ctx);
    if (sc != (r->sm ? bb_map_count(r->sm) : 0) || rc != (r->rm ? bb_map_count(r->rm) : 0))
        bb_bench_fatal(pt->bench, "scalapack: its local counts (%lld, %lld) are not the "
                       "layouts' (a layout it should have refused)", (long long)sc,
                       (long long)rc);
    size_t eb = (size_t)pt->element_bytes;
    r->send = malloc((size_t)(sc > 0 ? sc : 1) * eb);
    r->recv = malloc((size_t)(rc > 0 ? rc : 1) * eb);
    if (r->send == NULL || r->recv == NULL)
        bb_bench_fatal(pt->bench, "cannot allocate message buffers");
    return 1;
}

void bb_redist_reference_message(bb_redist_reference_t *r, bb_tally_t *tally, double *parts)
{
    const bb_redist_point_t *pt = r->pt;
    int64_t eb = pt->element_bytes, k = r->k++;
    if (r->sm)
        bb_redist_fill(r->sm, eb, k, r->send);
    if (r->rm)
        bb_redist_fill_sentinel(bb_map_count(r->rm), eb, r->recv);
    if (MPI_Barrier(pt->comm) != MPI_SUCCESS)
        bb_bench_fatal(pt->bench, "MPI_Barrier failed");
    double t0 = bb_time_now();
    bb_status_t st = bb_scalapack_redist_execute(r->ctx, r->send, r->recv);
    parts[BB_MESSAGE_ELAPSED] += bb_time_now() - t0;
    if (st != BB_OK)
        bb_bench_fatal(pt->bench, "scalapack %c: %s", pt->command, bb_status_string(st));
    bb_redist_check_t ck;
    bb_redist_test_corrupt("scalapack", r->rm, r->recv);
    st = bb_redist_check(pt->comm, r->rm, pt->n, eb, k, r->recv, &ck);
    if (st == BB_ERR_VALIDATION) {
        if (tally->wrong++ == 0)
            bb_bench_progress(pt->bench, "error: scalapack %c N=%lld message %lld: %lld "
                              "wrong slots", pt->command, (long long)pt->n, (long long)k,
                              (long long)ck.bad_slots);
    } else if (st != BB_OK) {
        bb_bench_fatal(pt->bench, "check: %s", bb_status_string(st));
    }
}

void bb_redist_reference_release(bb_redist_reference_t *r, const bb_measure_result_t *m)
{
    if (r->ctx != NULL && m->samples > 0)
        r->median = bb_stats_median(bb_measure_part(m, BB_MESSAGE_ELAPSED),
                                    (size_t)m->samples);
    bb_scalapack_redist_destroy(r->ctx);
    r->ctx = NULL;
    free(r->send);
    free(r->recv);
    r->send = NULL;
    r->recv = NULL;
}

void bb_redist_reference_cells(bb_table_t *t, const bb_redist_reference_t *r,
                               const bb_redist_candidate_t *root, int failed,
                               const bb_redist_bound_t *bound)
{
    for (int c = 0; c < 3; c++)  /* no payload phase or handshake of its own */
        bb_table_missing(t);
    bb_table_number(t, r->setup_s * 1e6, 1);
    if (r->median > 0)
        bb_table_number(t, r->setup_s / r->median, 1);
    else
        bb_table_missing(t);
    if (root && r->median > 0 && !failed)
        bb_table_number(t, root->median / r->median, 2);
    else
        bb_table_missing(t);
    for (int c = 0; c < 7; c++)  /* break-even, runs and the library's bytes */
        bb_table_missing(t);
    if (!failed && r->median > 0 && bound->bound_s > 0 && bound->bound_s <= r->median)
        bb_table_number(t, bound->bound_s / r->median, 3);
    else
        bb_table_missing(t);
}

void bb_redist_reference_quantities(cJSON *q, const bb_redist_reference_t *r,
                                    const bb_redist_candidate_t *root,
                                    const bb_redist_bound_t *bound, const bb_row_t *row)
{
    const char *scope = bb_measure_scope(&row->m);
    bb_quantities_add(q, "setup.total", bb_quantity_value(r->setup_s, "s", "plan/max-rank"));
    bb_redist_median_quantities(q, r->median, root, bound, scope);
    bb_quantities_add(q, "redist.wrong_messages",
                      bb_quantity_value((double)row->agreed.wrong, "count", "run/all-ranks"));
}
