/* transfer-ref.c: bbench-transfer's payload fixture and its references,
 * each differing from its neighbour in one thing: a raw Isend/Irecv stream
 * with the phase's fixture work and compute batches, made a ping-pong, with
 * the phase's agreements at their places, and the agreements alone. */
#include "config.h"
#include "transfer-ref.h"
#include "runner/policy.h"
#include "private/hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bb_xfer_metrics_add(const bb_transfer_metrics_t *m, bb_status_t st, double *t,
                         double *cnt, bb_tally_t *tally)
{
    t[BB_XFER_T_PREPARE] += m->prepare_s;
    t[BB_XFER_T_ADMISSION] += m->admission_s;
    t[BB_XFER_T_POST] += m->post_s;
    t[BB_XFER_T_COMPUTE] += m->compute_s > 0 ? m->compute_s : 0.0;
    t[BB_XFER_T_PROGRESS] += m->progress_s;
    t[BB_XFER_T_WAIT] += m->payload_wait_s + m->receipt_wait_s;
    t[BB_XFER_T_WAIT_PAYLOAD] += m->payload_wait_s;
    t[BB_XFER_T_WAIT_RECEIPT] += m->receipt_wait_s;
    t[BB_XFER_T_STATUS] += m->status_agreement_s;
    t[BB_XFER_T_CONSUMER] += m->consumer_s;
    t[BB_XFER_T_TERMINAL] += m->terminal_agreement_s;
    cnt[BB_XFER_C_BATCHES] += m->batches_executed > 0 ? (double)m->batches_executed : 0.0;
    cnt[BB_XFER_C_POLLS] += (double)m->polls;
    cnt[BB_XFER_C_COMPLETED] += m->completed_during_batches == 1;
    /* completed_during_batches is -1 where no payload request was posted. */
    tally->p2p = m->completed_during_batches >= 0 || tally->p2p;
    if (m->tracked_bytes > tally->tracked_peak)
        tally->tracked_peak = m->tracked_bytes;
    if (m->max_inflight > tally->max_inflight)
        tally->max_inflight = m->max_inflight;
    if (m->payload_bytes > tally->payload_bytes)
        tally->payload_bytes = m->payload_bytes;
    if (st == BB_REFUSED && tally->refused_calls++ == 0)
        tally->refusal = m->refusal;
}

bb_status_t bb_xfer_ticket_call(bb_transfer_phase_t *phase, bb_xfer_fixture_t *fx,
                                const bb_transfer_contract_t *c, bb_transfer_metrics_t *m)
{
    bb_transfer_ticket_t ticket;
    bb_status_t st = bb_transfer_phase_begin(phase, &fx->provider, c, &ticket, m);
    if (st != BB_OK)
        return st;
    int failed = 0;
    int64_t executed = 0;
    double compute_s = 0.0;
    for (int64_t i = 0; i < c->batches && !failed; i++) {
        double t0 = bb_time_now();
        failed = fx->compute.batch(fx->compute.arg, i);
        compute_s += bb_time_now() - t0;
        executed++;
        if (!failed && (st = bb_transfer_ticket_progress(&ticket, NULL)) != BB_OK)
            return st;
    }
    void *value = NULL;
    st = bb_transfer_ticket_finish(&ticket, &fx->consumer,
                                   failed ? BB_TRANSFER_LOCAL_FAILED : BB_TRANSFER_LOCAL_OK,
                                   &value, m);
    m->compute_s = compute_s;
    m->batches_executed = executed;
    return st;
}

/* ------------------------------------------------------------------------ */
/* The references */

void bb_xfer_ref_setup(bb_run_t *run, bb_xfer_ref_t *ref, int64_t max_bytes)
{
    ref->run = run;
    ref->send = bb_payload_alloc_touched(max_bytes);
    ref->recv = bb_payload_alloc_touched(max_bytes);
    if (!ref->send || !ref->recv)
        bb_run_fatal(run, "cannot allocate %lld bytes", (long long)max_bytes);
}

void bb_xfer_ref_free(bb_xfer_ref_t *ref)
{
    free(ref->send);
    free(ref->recv);
    ref->send = ref->recv = NULL;
}

void bb_xfer_ref_agreements_create(bb_xfer_ref_t *ref, int r, const bb_phase_attr_t *attr)
{
    /* The one-field MAX is one Allreduce whatever the admission: spec, as
     * the phase's, makes no fused-op type for it. */
    bb_phase_attr_t max_attr = *attr;
    max_attr.admission = BB_ADMISSION_SPEC;
    MPI_Comm comm = bb_run_comm(ref->run);
    if (bb_agreement_create(comm, BB_TRANSFER_FIELDS, attr, &ref->admissions[r]) != BB_OK
        || bb_agreement_create(comm, 1, &max_attr, &ref->maxes[r]) != BB_OK)
        bb_run_fatal(ref->run, "cannot create the reference agreements");
}

void bb_xfer_ref_agreements_destroy(bb_xfer_ref_t *ref, int rows)
{
    for (int r = 0; r < rows; r++) {
        bb_agreement_destroy(ref->admissions[r]);
        bb_agreement_destroy(ref->maxes[r]);
        ref->admissions[r] = ref->maxes[r] = NULL;
    }
}

/* The phase's nine-field admission, with the fields the phase presents,
 * through the row's agreement object (the row's admission and requests);
 * fields that differ would be a bug (counted). */
static void ref_admission(bb_xfer_ref_t *ref, bb_row_t *row, int64_t seq)
{
    int64_t local[BB_TRANSFER_FIELDS] = { seq, ref->phase_id, 1, ref->source,
                                          ref->destination, ref->nbytes, ref->cap,
                                          ref->batches, 0 };
    int64_t mn[BB_TRANSFER_FIELDS], mx[BB_TRANSFER_FIELDS];
    if (bb_agreement_minmax(ref->admissions[row->index], local, mn, mx) != MPI_SUCCESS)
        bb_run_fatal(ref->run, "reference admission: the agreement failed");
    if (!bb_agree_fields_equal(mn, mx, 0, BB_TRANSFER_FIELDS))
        row->local.wrong++;
}

/* One one-field MAX agreement, as the phase's status and terminal ones (one
 * object for both, as the phase's). */
static void ref_max(bb_xfer_ref_t *ref, bb_row_t *row)
{
    int64_t local = 0, max = -1;
    if (bb_agreement_max(ref->maxes[row->index], &local, &max) != MPI_SUCCESS)
        bb_run_fatal(ref->run, "reference agreement: the MAX agreement failed");
    if (max != 0)
        row->local.wrong++;
}

/* agreements and admission: the phase's collectives with no payload. */
static void ref_agreements(bb_xfer_ref_t *ref, bb_row_t *row, int with_max, double *t)
{
    double t0 = bb_time_now();
    ref_admission(ref, row, ref->seq++);
    double t1 = bb_time_now();
    t[BB_XFER_T_ADMISSION] += t1 - t0;
    if (with_max) {
        ref_max(ref, row);
        double t2 = bb_time_now();
        t[BB_XFER_T_STATUS] += t2 - t1;
        ref_max(ref, row);
        t[BB_XFER_T_TERMINAL] += bb_time_now() - t2;
    }
    t[BB_XFER_T_ELAPSED] += bb_time_now() - t0;
}

/* stream, ping-pong and rounds: the same fixture work (pattern on the
 * source, check on the destination) and compute batches, one MPI_Test after
 * each, a Wait; the round trip adds the receipt, the rounds add the
 * agreements. */
void bb_xfer_ref_call(bb_xfer_ref_t *ref, bb_xfer_ref_kind_t kind, bb_row_t *row, double *t,
                      double *cnt)
{
    if (kind == BB_XFER_REF_AGREEMENTS || kind == BB_XFER_REF_ADMISSION) {
        ref_agreements(ref, row, kind == BB_XFER_REF_AGREEMENTS, t);
        return;
    }
    bb_tally_t *pr = &row->local;
    const char *name = row->label;
    MPI_Comm comm = bb_run_comm(ref->run);
    int is_src = ref->rank == ref->source, is_dst = ref->rank == ref->destination;
    int round_trip = kind == BB_XFER_REF_PINGPONG || kind == BB_XFER_REF_ROUNDS;
    int rounds = kind == BB_XFER_REF_ROUNDS;
    int count = (int)ref->nbytes;
    int64_t seq = ref->seq++;
    int64_t receipt[2] = { -1, -1 };
    MPI_Request req = MPI_REQUEST_NULL, receipt_req = MPI_REQUEST_NULL;
    double t0 = bb_time_now(), ta;
    if (is_src)
        bb_payload_fill(ref->send, ref->nbytes, seq);
    if (rounds) {
        ta = bb_time_now();
        ref_admission(ref, row, seq);
        t[BB_XFER_T_ADMISSION] += bb_time_now() - ta;
    }
    if (is_src && is_dst) {
        memcpy(ref->recv, ref->send, (size_t)ref->nbytes);
    } else if (is_src) {
        if (round_trip && MPI_Irecv(receipt, 2, MPI_INT64_T, ref->destination, 1, comm,
                                    &receipt_req) != MPI_SUCCESS)
            bb_run_fatal(ref->run, "%s MPI_Irecv failed", name);
        if (MPI_Isend(ref->send, count, MPI_BYTE, ref->destination, 0, comm, &req)
            != MPI_SUCCESS)
            bb_run_fatal(ref->run, "%s MPI_Isend failed", name);
    } else if (is_dst) {
        if (MPI_Irecv(ref->recv, count, MPI_BYTE, ref->source, 0, comm, &req) != MPI_SUCCESS)
            bb_run_fatal(ref->run, "%s MPI_Irecv failed", name);
    }
    int done = req == MPI_REQUEST_NULL, completed = 0;
    double compute_s = 0.0, progress_s = 0.0;
    for (int64_t i = 0; i < ref->batches; i++) {
        double tb = bb_time_now();
        ref->fx->sink += bb_compute_run(ref->fx->iterations);
        double tp = bb_time_now();
        compute_s += tp - tb;
        if (!done) {
            if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                bb_run_fatal(ref->run, "%s MPI_Test failed", name);
            completed = done;
        }
        progress_s += bb_time_now() - tp;
    }
    double tw = bb_time_now();
    if (!done && MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_run_fatal(ref->run, "%s MPI_Wait failed", name);
    double wait_s = bb_time_now() - tw, receipt_s = 0.0;
    if (rounds) {
        ta = bb_time_now();
        ref_max(ref, row);
        t[BB_XFER_T_STATUS] += bb_time_now() - ta;
    }
    if (is_dst) {
        if (ref->corrupt_byte >= 0 && ref->corrupt_byte < ref->nbytes)
            ref->recv[ref->corrupt_byte] ^= 1u;
        int64_t bad = bb_payload_check(ref->recv, ref->nbytes, seq);
        pr->wrong += bad;
        if (round_trip && !is_src) {
            int64_t back[2] = { seq, bad > 0 };
            double tr = bb_time_now();
            if (MPI_Send(back, 2, MPI_INT64_T, ref->source, 1, comm) != MPI_SUCCESS)
                bb_run_fatal(ref->run, "%s MPI_Send failed", name);
            receipt_s = bb_time_now() - tr;
        }
    }
    if (round_trip && is_src && !is_dst) {
        double tr = bb_time_now();
        if (MPI_Wait(&receipt_req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            bb_run_fatal(ref->run, "%s MPI_Wait failed", name);
        receipt_s = bb_time_now() - tr;
        if (receipt[0] != seq)
            pr->wrong++;
    }
    if (rounds) {
        ta = bb_time_now();
        ref_max(ref, row);
        t[BB_XFER_T_TERMINAL] += bb_time_now() - ta;
    }
    t[BB_XFER_T_ELAPSED] += bb_time_now() - t0;
    t[BB_XFER_T_COMPUTE] += compute_s;
    t[BB_XFER_T_PROGRESS] += progress_s;
    t[BB_XFER_T_WAIT] += wait_s + receipt_s;
    t[BB_XFER_T_WAIT_PAYLOAD] += wait_s;
    t[BB_XFER_T_WAIT_RECEIPT] += receipt_s;
    cnt[BB_XFER_C_BATCHES] += (double)ref->batches;
    cnt[BB_XFER_C_POLLS] += (double)ref->batches;
    cnt[BB_XFER_C_COMPLETED] += completed;
    pr->p2p = pr->p2p || (is_src != is_dst);
    pr->payload_bytes = (is_src || is_dst) ? ref->nbytes : 0;
}

/* ------------------------------------------------------------------------ */
/* What a row reports beside the runner's figures */

void bb_xfer_count_quantities(const bb_row_t *row, int payload, cJSON *q)
{
    static const char *const count_names[2] = { "phase.batches_executed", "phase.polls" };
    const char *scope = "call/max-rank", *absent = row->absent;
    size_t n = (size_t)row->m.samples;
    bb_summary_t s;
    for (int c = BB_XFER_C_BATCHES; c <= BB_XFER_C_POLLS; c++) {
        bb_stats_summarize(bb_measure_count(&row->m, c), n, &s);
        bb_quantities_add(q, count_names[c], payload ? bb_quantity_value(s.median, "count",
                                                                         scope)
                                                     : bb_quantity_null("count", scope, absent));
    }
    const char *undone = !payload ? absent
                         : !row->agreed.p2p ? "no rank posts a payload request (same-rank "
                                              "transfer)"
                         : row->agreed.refused_calls > 0 ? "refused: no payload" : NULL;
    if (undone != NULL) {
        bb_quantities_add(q, "completed_during_batches",
                          bb_quantity_null("ratio", "run/max-rank", undone));
        return;
    }
    bb_stats_summarize(bb_measure_count(&row->m, BB_XFER_C_COMPLETED), n, &s);
    cJSON *c = bb_quantity_value(s.median, "ratio", "run/max-rank");
    cJSON_AddStringToObject(c, "note", "fraction of calls in which a poll after a "
                            "batch saw the local payload complete; not evidence of "
                            "overlap or of a faster call");
    bb_quantities_add(q, "completed_during_batches", c);
}

void bb_xfer_row_columns(bb_run_t *run, void *state, const bb_row_t *row)
{
    char name[96], legend[256];
    (void)state;
    if (row->variant != 0)
        return;
    snprintf(name, sizeof name, "%s_agree", row->label);
    snprintf(legend, sizeof legend, "admission + status + terminal agreements in the median "
             "sample of the whole (%s: never more than it)", bb_run_parts_words(run));
    bb_table_column(bb_run_table(run), name, "us", legend, 0);
    snprintf(name, sizeof name, "%s_done", row->label);
    bb_table_column(bb_run_table(run), name, NULL, "fraction of calls where a poll after a "
                    "batch saw the local payload complete", 0);
}

/* The completion fraction only where a payload moved. */
void bb_xfer_row_cells(bb_run_t *run, void *state, const bb_row_t *row)
{
    bb_table_t *t = bb_run_table(run);
    (void)state;
    if (row->variant != 0)
        return;
    bb_table_number(t, (bb_row_median(row, BB_XFER_T_ADMISSION)
                        + bb_row_median(row, BB_XFER_T_STATUS)
                        + bb_row_median(row, BB_XFER_T_TERMINAL)) * 1e6, 2);
    if (row->agreed.p2p && row->agreed.refused_calls == 0)
        bb_table_number(t, bb_stats_median(bb_measure_count(&row->m, BB_XFER_C_COMPLETED),
                                           (size_t)row->m.samples), 2);
    else
        bb_table_missing(t);
}

unsigned bb_xfer_policy_suffixes(const bb_phase_attr_t *attr, int protocol)
{
    return (protocol && attr->buffers == BB_BUFFERS_RETAINED ? BB_XFER_SUFFIX_RETAINED : 0u)
           | (attr->admission == BB_ADMISSION_FUSED ? BB_XFER_SUFFIX_FUSED : 0u)
           | (attr->admission == BB_ADMISSION_FUSED_OP ? BB_XFER_SUFFIX_FUSED_OP : 0u)
           | (attr->requests == BB_REQUESTS_PERSISTENT ? BB_XFER_SUFFIX_PERSISTENT : 0u);
}

void bb_xfer_policy_notes(bb_table_t *t, unsigned suffixes)
{
    if (suffixes & BB_XFER_SUFFIX_RETAINED)
        bb_table_note(t, "-retained: the phase keeps its payload buffer between tickets "
                      "(capacity the largest cap presented)");
    if (suffixes & BB_XFER_SUFFIX_FUSED)
        bb_table_note(t, "-fused: the admission as one MPI_Allreduce(MIN) over the nine "
                      "fields and their complements");
    if (suffixes & BB_XFER_SUFFIX_FUSED_OP)
        bb_table_note(t, "-fused-op: the same 18 int64 as one element of a contiguous "
                      "type under a user-defined MIN (the MPI library picks its algorithm "
                      "for one element)");
    if (suffixes & BB_XFER_SUFFIX_PERSISTENT)
        bb_table_note(t, "-persistent: every agreement a persistent collective, "
                      "MPI_Allreduce_init at the first call of a point (the phase's first "
                      "ticket; the references' first call), MPI_Start at each; the "
                      "payload stays Isend/Irecv");
}

void bb_xfer_mismatch(bb_transfer_phase_t *phase, int field, int size,
                      bb_transfer_contract_t *c, bb_xfer_fixture_t *fx)
{
    switch (field) {
    case BB_MISMATCH_PHASE_ID: c->phase_id++; break;
    case BB_MISMATCH_EPOCH: c->epoch++; break;
    case BB_MISMATCH_SOURCE: c->source = (c->source + 1) % size; break;
    case BB_MISMATCH_DESTINATION: c->destination = (c->destination + 1) % size; break;
    case BB_MISMATCH_NBYTES:
        c->nbytes = c->nbytes > 0 ? c->nbytes - 1 : 1;
        c->max_bytes = c->nbytes > c->max_bytes ? c->nbytes : c->max_bytes;
        fx->nbytes = c->nbytes;
        break;
    case BB_MISMATCH_CAP: c->max_bytes++; break;
    case BB_MISMATCH_BATCHES: c->batches++; break;
    case BB_MISMATCH_SEQUENCE:
        bb_transfer_phase_set_sequence(phase, fx->expect_seq + 1);
        break;
    }
}
