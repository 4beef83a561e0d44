/* reference.c: ScaLAPACK's Cpdgemr2d as a line of bbench-redist, a
 * reference beside the library's methods (redist.h): the same
 * elements moved between the same layouts, every message checked slot by
 * slot outside its timing, its setup (grids and descriptors) timed apart. */
#include "config.h"
#include "redist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sending (engine 0: the driver's) or receiving code's local array on
 * this rank for a submatrix layout: the map's slots in it and its length;
 * NULL slots and the map's count otherwise. */
static int64_t *reference_slots(const bb_rd_point_t *pt, const bb_layout_t *lay,
                                int engine, const bb_map_t *map, int64_t *full_out)
{
    int64_t *slots = NULL, cnt = 0, full = 0;
    *full_out = map != NULL ? bb_map_count(map) : 0;
    if (map == NULL || lay->kind != BB_LAYOUT_BC2D || lay->gm == 0)
        return NULL;
    if (bb_layout_slots(lay, pt->n, bb_redist_link_code_rank(pt->link, engine),
                        bb_redist_link_code_size(pt->link, engine), &slots, &cnt, &full)
            != BB_OK || cnt != bb_map_count(map))
        bb_run_fatal(pt->run, "scalapack: cannot place the submatrix in its local array");
    *full_out = full;
    return slots;
}

int bb_rd_reference_prepare(bb_rd_reference_t *r, const bb_rd_point_t *pt,
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
        bb_run_fatal(pt->run, "scalapack: %s (%s)", bb_status_string(st), r->why);
    if (bb_stats_reduce_max(pt->comm, &su.total_s, 1, &r->setup_s) != MPI_SUCCESS)
        bb_run_fatal(pt->run, "MPI_Allreduce of the setup failed");
    int send = pt->command == BB_REDIST_SEND;
    r->sm = send ? pt->dmap : pt->emap;
    r->rm = send ? pt->emap : pt->dmap;
    int64_t sfull, rfull;
    r->sslots = reference_slots(pt, send ? from : to, !send, r->sm, &sfull);
    r->rslots = reference_slots(pt, send ? to : from, send, r->rm, &rfull);
    r->staged = (from->kind == BB_LAYOUT_BC2D && from->gm > 0)
                || (to->kind == BB_LAYOUT_BC2D && to->gm > 0);
    r->rfull = rfull;
    int64_t sc = bb_scalapack_redist_send_count(r->ctx);
    int64_t rc = bb_scalapack_redist_recv_count(r->ctx);
    if (sc != sfull || rc != rfull)
        bb_run_fatal(pt->run, "scalapack: its local counts (%lld, %lld) are not the "
                     "layouts' (a layout it should have refused)", (long long)sc,
                     (long long)rc);
    size_t eb = (size_t)pt->element_bytes;
    r->send = malloc((size_t)(sc > 0 ? sc : 1) * eb);
    r->recv = malloc((size_t)(rc > 0 ? rc : 1) * eb);
    if (r->send == NULL || r->recv == NULL)
        bb_run_fatal(pt->run, "cannot allocate message buffers");
    r->sdense = r->send;
    r->rdense = r->recv;
    if (r->sslots != NULL) {
        int64_t cnt = bb_map_count(r->sm);
        r->sdense = malloc((size_t)(cnt > 0 ? cnt : 1) * eb);
        if (r->sdense == NULL)
            bb_run_fatal(pt->run, "cannot allocate message buffers");
        /* A's slots outside the submatrix: never read, a value of none */
        for (int64_t i = 0; i < sc * (int64_t)(eb / 8); i++)
            r->send[i] = -2.0;
    }
    if (r->rslots != NULL) {
        int64_t cnt = bb_map_count(r->rm);
        r->rdense = malloc((size_t)(cnt > 0 ? cnt : 1) * eb);
        if (r->rdense == NULL)
            bb_run_fatal(pt->run, "cannot allocate message buffers");
    }
    return 1;
}

/* The dense elements (kd doubles each) to or from their slots. */
static void reference_stage(double *full, const int64_t *slots, int64_t count, int64_t kd,
                            double *dense, int to_full)
{
    for (int64_t i = 0; i < count; i++)
        memcpy(to_full ? full + slots[i] * kd : dense + i * kd,
               to_full ? dense + i * kd : full + slots[i] * kd, (size_t)kd * sizeof *full);
}

/* B's values outside the submatrix that are not the sentinel any more
 * (slots ascending: the local array's order). */
static int64_t reference_outside_written(const double *full, int64_t nfull, const int64_t *slots,
                                         int64_t count, int64_t kd)
{
    int64_t bad = 0, s = 0;
    for (int64_t i = 0; i < nfull; i++) {
        if (s < count && slots[s] == i) {
            s++;
            continue;
        }
        for (int64_t c = 0; c < kd; c++)
            bad += full[i * kd + c] != BB_REDIST_SENTINEL;
    }
    return bad;
}

void bb_rd_reference_message(bb_rd_reference_t *r, bb_tally_t *tally, double *parts)
{
    const bb_rd_point_t *pt = r->pt;
    int64_t eb = pt->element_bytes, k = r->k++, kd = eb / 8;
    if (r->sm) {
        bb_rd_fill(r->sm, eb, k, r->sdense);
        if (r->sslots != NULL)
            reference_stage(r->send, r->sslots, bb_map_count(r->sm), kd, r->sdense, 1);
    }
    if (r->rm)
        bb_rd_fill_sentinel(r->rfull, eb, r->recv);
    if (MPI_Barrier(pt->comm) != MPI_SUCCESS)
        bb_run_fatal(pt->run, "MPI_Barrier failed");
    double t0 = bb_time_now();
    bb_status_t st = bb_scalapack_redist_execute(r->ctx, r->send, r->recv);
    parts[BB_MESSAGE_ELAPSED] += bb_time_now() - t0;
    if (st != BB_OK)
        bb_run_fatal(pt->run, "scalapack %c: %s", pt->command, bb_status_string(st));
    int64_t outside = 0, outside_all = 0;
    if (r->rm && r->rslots != NULL) {
        reference_stage(r->recv, r->rslots, bb_map_count(r->rm), kd, r->rdense, 0);
        outside = reference_outside_written(r->recv, r->rfull, r->rslots, bb_map_count(r->rm),
                                            kd);
    }
    bb_rd_check_t ck;
    bb_rd_test_corrupt("scalapack", r->rm, r->rdense);
    st = bb_rd_check(pt->comm, r->rm, pt->n, eb, k, r->rdense, &ck);
    if (st != BB_OK && st != BB_ERR_VALIDATION)
        bb_run_fatal(pt->run, "check: %s", bb_status_string(st));
    /* a submatrix's copy must leave the rest of B as it was */
    if (r->staged && MPI_Allreduce(&outside, &outside_all, 1, MPI_INT64_T, MPI_SUM, pt->comm)
                         != MPI_SUCCESS)
        bb_run_fatal(pt->run, "MPI_Allreduce of the outside check failed");
    if (st == BB_ERR_VALIDATION || outside_all > 0) {
        if (tally->wrong++ == 0)
            bb_run_note(pt->run, "error: scalapack %c N=%lld message %lld: %lld "
                        "wrong slots, %lld values written outside the copied part",
                        pt->command, (long long)pt->n, (long long)k,
                        (long long)(st == BB_ERR_VALIDATION ? ck.bad_slots : 0),
                        (long long)outside_all);
    }
}

void bb_rd_reference_release(bb_rd_reference_t *r, const bb_measure_result_t *m)
{
    r->samples = NULL;
    r->nsamples = 0;
    r->canary = NULL;
    if (r->ctx != NULL && m->samples > 0) {
        r->samples = bb_measure_part(m, BB_MESSAGE_ELAPSED);
        r->nsamples = (size_t)m->samples;
        r->canary = m->canary;
        r->median = bb_stats_median(r->samples, r->nsamples);
    }
    bb_scalapack_redist_destroy(r->ctx);
    r->ctx = NULL;
    if (r->sdense != r->send)
        free(r->sdense);
    if (r->rdense != r->recv)
        free(r->rdense);
    free(r->send);
    free(r->recv);
    free(r->sslots);
    free(r->rslots);
    r->send = r->recv = r->sdense = r->rdense = NULL;
    r->sslots = r->rslots = NULL;
}

void bb_rd_reference_cells(bb_table_t *t, const bb_rd_reference_t *r,
                           const bb_rd_candidate_t *root, int failed,
                           const bb_rd_bound_t *bound)
{
    for (int c = 0; c < 3; c++)  /* no payload phase or handshake of its own */
        bb_table_missing(t);
    bb_table_number(t, r->setup_s * 1e6, 1);
    if (r->median > 0)
        bb_table_number(t, r->setup_s / r->median, 1);
    else
        bb_table_missing(t);
    if (root && r->median > 0 && !failed) {
        bb_ratio_figure_t x;
        char cell[48];
        bb_rd_ratio(root->samples, root->nsamples, root->median, r->samples, r->nsamples,
                    r->median, root->canary, root->pt->confidence, &x);
        bb_ratio_figure_text(&x, cell, sizeof cell);
        bb_table_text(t, cell);
    } else
        bb_table_missing(t);
    for (int c = 0; c < 7; c++)  /* break-even, runs and the library's bytes */
        bb_table_missing(t);
    if (!failed && r->median > 0 && bound->bound_s > 0 && bound->bound_s <= r->median)
        bb_table_number(t, bound->bound_s / r->median, 3);
    else
        bb_table_missing(t);
}

void bb_rd_reference_quantities(cJSON *q, const bb_rd_reference_t *r,
                                const bb_rd_candidate_t *root,
                                const bb_rd_bound_t *bound, const bb_row_t *row)
{
    const char *scope = bb_measure_scope(&row->m);
    bb_quantities_add(q, "setup.total", bb_quantity_value(r->setup_s, "s", "plan/max-rank"));
    bb_rd_median_quantities(q, r->median, r->samples, r->nsamples, root, bound, scope);
    bb_quantities_add(q, "redist.wrong_messages",
                      bb_quantity_value((double)row->agreed.wrong, "count", "run/all-ranks"));
}
