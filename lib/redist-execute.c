/* redist-execute.c: one message of a plan (bb_redist_plan_execute): the
 * handshake (the recv_dist flag and the admission in one agreement: a MIN
 * Allreduce, or for an eager message every rank's header inside the
 * exchange), and the payload by the plan's method: the
 * exchanges of an exchange plan (Alltoallw, pack, pack-mpi, sparse,
 * overlap) and the root methods. */
#include "config.h"
#include "redist-private.h"

#include <string.h>

/* ---- the exchanges of an exchange plan ---------------------------------- */

/* One MPI_Alltoallw with the slot datatypes. */
static int bb_xplan_alltoallw(bb_xplan_t *x, const double *send, double *recv)
{
    return MPI_Alltoallw(send, x->wcount_s, x->wdispl, x->wtype_s, recv,
                         x->wcount_r, x->wdispl, x->wtype_r, x->comm);
}

/* Copy runs (first slot, length) between the strided side and the packed
 * staging: to_packed packs, else unpacks.  A hand loop of memcpy per run,
 * the element copy inlined for single-element runs. */
static void bb_slot_runs_copy(const int *run, int nrun, double *local, double *packed, int ncomp,
                         int to_packed)
{
    size_t j = 0, eb = (size_t)ncomp * sizeof(double);
    for (int k = 0; k < nrun; k++) {
        int first = run[2 * k], len = run[2 * k + 1];
        if (len == 1) {
            if (to_packed)
                bb_copy_elem(packed, (int)j, local, first, ncomp);
            else
                bb_copy_elem(local, first, packed, (int)j, ncomp);
        } else if (to_packed) {
            memcpy(packed + j * (size_t)ncomp, local + (size_t)first * (size_t)ncomp, (size_t)len * eb);
        } else {
            memcpy(local + (size_t)first * (size_t)ncomp, packed + j * (size_t)ncomp, (size_t)len * eb);
        }
        j += (size_t)len;
    }
}

/* The element runs of one direction between the local side and a staging
 * in the eager layout (redist-private.h), where peer d's elements follow
 * its header: element j of the message order, in peer d's part
 * [displ[d], displ[d] + count[d]), lies at edispl[d] + hbytes, so a run
 * that crosses peers (pack's runs over the whole message order) is cut
 * there. */
static void bb_slot_runs_copy_eager(const bb_xplan_t *x, const int *run, int nrun,
                                    const int *count, const int *displ, const int *edispl,
                                    double *local, char *staging, int ncomp, int to_packed)
{
    int d = 0, j = 0;
    for (int k = 0; k < nrun; k++) {
        int first = run[2 * k], len = run[2 * k + 1];
        while (len > 0) {
            while (d < x->p - 1 && j >= displ[d] + count[d])
                d++;
            int end = displ[d] + count[d], piece[2] = {first, end - j < len ? end - j : len};
            if (piece[1] <= 0)
                return; /* more runs than counts: maps the build refused */
            double *at = (double *)(staging + edispl[d] + x->hbytes)
                         + (size_t)(j - displ[d]) * (size_t)ncomp;
            bb_slot_runs_copy(piece, 1, local, at, ncomp, to_packed);
            first += piece[1];
            j += piece[1];
            len -= piece[1];
        }
    }
}

/* The staged methods (pack, pack-mpi, overlap) move a message in two
 * halves: post (the sending side staged and the exchange into the receive
 * staging) and publish (the receive staging copied into recv).  Nothing
 * reaches recv before publish, so a message can be posted before its
 * verdict (bb_exec_eager).  send NULL: a rank that refuses the message
 * sends its staging as it is (no rank publishes it).  eager: the eager
 * layout, each peer's part after the handshake's header (staged by
 * bb_xplan_stage_headers), a part to every peer even without payload. */

/* pack, post: the runs copied by hand into peer order, one MPI_Alltoallv of
 * contiguous elements (eager: of bytes, each part with its header) into
 * the receive staging. */
static int bb_xplan_pack_post(bb_xplan_t *x, const double *send, MPI_Datatype elem, int ncomp,
                              int eager)
{
    if (eager) {
        if (send != NULL)
            bb_slot_runs_copy_eager(x, x->srun, x->nsrun, x->scount, x->sdispl, x->edispl_s,
                                    (double *)send, x->pbuf, ncomp, 1);
        return MPI_Alltoallv(x->pbuf, x->ecount_s, x->edispl_s, MPI_BYTE, x->ubuf, x->ecount_r,
                             x->edispl_r, MPI_BYTE, x->comm);
    }
    if (send != NULL)
        bb_slot_runs_copy(x->srun, x->nsrun, (double *)send, (double *)x->pbuf, ncomp, 1);
    return MPI_Alltoallv(x->pbuf, x->scount, x->sdispl, elem, x->ubuf, x->rcount, x->rdispl,
                         elem, x->comm);
}

/* pack, publish: the runs copied out. */
static void bb_xplan_pack_publish(bb_xplan_t *x, double *recv, int ncomp, int eager)
{
    if (eager)
        bb_slot_runs_copy_eager(x, x->rrun, x->nrrun, x->rcount, x->rdispl, x->edispl_r, recv,
                                x->ubuf, ncomp, 0);
    else
        bb_slot_runs_copy(x->rrun, x->nrrun, recv, (double *)x->ubuf, ncomp, 0);
}

/* pack-mpi, post: MPI_Pack through each peer's slot datatype, one
 * MPI_Alltoallv of MPI_PACKED (eager: each part with its header). */
static int bb_xplan_pack_mpi_post(bb_xplan_t *x, const double *send, int eager)
{
    int rc;
    const int *count = eager ? x->ecount_s : x->sbytes, *displ = eager ? x->edispl_s : x->sbdispl;
    int *rcount = eager ? x->ecount_r : x->rbytes, *rdispl = eager ? x->edispl_r : x->rbdispl;
    for (int d = 0; send != NULL && d < x->p; d++) {
        if (x->scount[d] == 0)
            continue;
        int at = eager ? x->edispl_s[d] + x->hbytes : x->sbdispl[d], pos = at;
        if ((rc = MPI_Pack(send, 1, x->stype[d], x->pbuf, (int)x->pbytes, &pos, x->comm))
            != MPI_SUCCESS)
            return rc;
        if (pos != at + x->sbytes[d])
            return MPI_ERR_INTERN; /* a packed size other than MPI_Pack_size's */
    }
    return MPI_Alltoallv(x->pbuf, count, displ, MPI_PACKED, x->ubuf, rcount, rdispl, MPI_PACKED,
                         x->comm);
}

/* pack-mpi, publish: MPI_Unpack through the receiving slot datatypes. */
static int bb_xplan_pack_mpi_publish(bb_xplan_t *x, double *recv, int eager)
{
    for (int d = 0; d < x->p; d++) {
        if (x->rcount[d] == 0)
            continue;
        int pos = eager ? x->edispl_r[d] + x->hbytes : x->rbdispl[d];
        int rc = MPI_Unpack(x->ubuf, (int)x->ubytes, &pos, recv, 1, x->rtype[d], x->comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Isend/Irecv to nonzero remote peers only; the self part is copied. */
static int bb_xplan_sparse_isend(bb_xplan_t *x, const double *send, double *recv,
                                 int ncomp)
{
    int nreq = 0, rc = MPI_SUCCESS;
    for (int d = 0; d < x->p; d++)
        if (d != x->me && x->rcount[d] > 0
            && (rc = MPI_Irecv(recv, 1, x->rtype[d], d, BB_TAG_PAYLOAD, x->comm,
                               &x->reqs[nreq++])) != MPI_SUCCESS)
            goto wait;
    for (int d = 0; d < x->p; d++)
        if (d != x->me && x->scount[d] > 0
            && (rc = MPI_Isend(send, 1, x->stype[d], d, BB_TAG_PAYLOAD, x->comm,
                               &x->reqs[nreq++])) != MPI_SUCCESS)
            goto wait;
    {
        const int *sp = x->spos + x->sdispl[x->me], *rp = x->rpos + x->rdispl[x->me];
        for (int j = 0; j < x->scount[x->me]; j++)
            bb_copy_elem(recv, rp[j], send, sp[j], ncomp);
    }
wait:
    if (rc != MPI_SUCCESS)
        return rc; /* requests stay with the poisoned plan */
    return MPI_Waitall(nreq, x->reqs, x->stats);
}

/* overlap: peer d's payload in a staging, in the layout of eager or not. */
static double *bb_xplan_overlap_part(const bb_xplan_t *x, char *buf, const int *displ,
                                     const int *edispl, int d, int ncomp, int eager)
{
    if (eager)
        return (double *)(buf + edispl[d] + x->hbytes);
    return (double *)buf + (size_t)displ[d] * (size_t)ncomp;
}

/* overlap, post: every receive posted first, into its peer's part of the
 * receive staging; then, peer by peer from the next rank on (so that the
 * ranks do not all start at one), that peer's runs packed and sent at once,
 * so that the first messages fly while later ones are packed.  eager: the
 * header with the payload as bytes, to and from every other rank (the self
 * header stays local).  The requests: nr receives, then ns sends, in
 * x->reqs. */
static int bb_xplan_overlap_post(bb_xplan_t *x, const double *send, MPI_Datatype elem,
                                 int ncomp, int eager, int *nr, int *ns)
{
    int rc;
    *nr = *ns = 0;
    for (int k = 1; k < x->p; k++) {
        int d = (x->me + k) % x->p;
        if (eager)
            rc = MPI_Irecv(x->ubuf + x->edispl_r[d], x->ecount_r[d], MPI_BYTE, d,
                           BB_TAG_PAYLOAD, x->comm, &x->reqs[(*nr)++]);
        else if (x->rcount[d] > 0)
            rc = MPI_Irecv(bb_xplan_overlap_part(x, x->ubuf, x->rdispl, NULL, d, ncomp, 0),
                           x->rcount[d], elem, d, BB_TAG_PAYLOAD, x->comm, &x->reqs[(*nr)++]);
        else
            continue;
        if (rc != MPI_SUCCESS)
            return rc; /* requests stay with the poisoned plan */
    }
    for (int k = 1; k < x->p; k++) {
        int d = (x->me + k) % x->p;
        if (x->scount[d] == 0 && !eager)
            continue;
        double *part = bb_xplan_overlap_part(x, x->pbuf, x->sdispl, x->edispl_s, d, ncomp, eager);
        if (send != NULL && x->scount[d] > 0)
            bb_slot_runs_copy(x->srun + 2 * (size_t)x->srunat[d],
                              x->srunat[d + 1] - x->srunat[d], (double *)send, part, ncomp, 1);
        if (eager)
            rc = MPI_Isend(x->pbuf + x->edispl_s[d], x->ecount_s[d], MPI_BYTE, d, BB_TAG_PAYLOAD,
                           x->comm, &x->reqs[*nr + (*ns)++]);
        else
            rc = MPI_Isend(part, x->scount[d], elem, d, BB_TAG_PAYLOAD, x->comm,
                           &x->reqs[*nr + (*ns)++]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* overlap, publish: the self part copied run by run (once, slot to slot)
 * while the messages fly; each message unpacked as it completes (or,
 * eager: all received already, each with payload in turn); the sends
 * waited last. */
static int bb_xplan_overlap_publish(bb_xplan_t *x, const double *send, double *recv,
                                    int ncomp, int nr, int ns, int eager)
{
    int rc;
    size_t nc = (size_t)ncomp, eb = nc * sizeof(double);
    for (int k = 0; k < x->ncrun; k++) {
        int from = x->crun[3 * k], to = x->crun[3 * k + 1], len = x->crun[3 * k + 2];
        if (len == 1)
            bb_copy_elem(recv, to, send, from, ncomp);
        else
            memcpy(recv + (size_t)to * nc, send + (size_t)from * nc, (size_t)len * eb);
    }
    for (int left = eager ? x->p - 1 : nr, k = 1; left > 0; left--) {
        int i, d;
        MPI_Status st;
        if (eager) {
            if (x->rcount[d = (x->me + k++) % x->p] == 0)
                continue; /* a header alone */
        } else {
            if ((rc = MPI_Waitany(nr, x->reqs, &i, &st)) != MPI_SUCCESS)
                return rc;
            d = st.MPI_SOURCE;
            if (i == MPI_UNDEFINED || d < 0 || d >= x->p)
                return MPI_ERR_INTERN; /* a completion that no receive posted */
        }
        bb_slot_runs_copy(x->rrun + 2 * (size_t)x->rrunat[d], x->rrunat[d + 1] - x->rrunat[d],
                          recv, bb_xplan_overlap_part(x, x->ubuf, x->rdispl, x->edispl_r, d,
                                                      ncomp, eager), ncomp, 0);
    }
    return MPI_Waitall(ns, x->reqs + nr, x->stats);
}

/* ---- the root methods --------------------------------------------------- */

void bb_redist_plan_set_root_chunk(bb_redist_plan_t *pl, int64_t doubles)
{
    pl->root_chunk = doubles >= 1 && doubles <= BB_ROOT_CHUNK ? doubles : BB_ROOT_CHUNK;
}

/* The next piece of a whole array of total doubles from *at: its length
 * (at most the plan's chunk, so an int), 0 at the end. */
static int bb_root_piece(const bb_redist_plan_t *pl, int64_t total, int64_t at)
{
    int64_t left = total - at;
    return (int)(left < pl->root_chunk ? left : pl->root_chunk);
}

/* The one root-to-root message of the root methods: the full array from the
 * sending code's root to the receiving code's (none when they are one rank),
 * in pieces of at most the plan's chunk (the counts are ints). */
static int bb_root_message(bb_redist_plan_t *pl, int64_t cnt)
{
    bb_redist_link_t *l = pl->link;
    int rc, k;
    if (pl->s_first == pl->r_first)
        return MPI_SUCCESS;
    for (int64_t at = 0; (k = bb_root_piece(pl, cnt, at)) > 0; at += k) {
        if (l->rank == pl->s_first
            && (rc = MPI_Send(pl->full + at, k, MPI_DOUBLE, pl->r_first, BB_TAG_PAYLOAD, l->comm))
                   != MPI_SUCCESS)
            return rc;
        if (l->rank == pl->r_first
            && (rc = MPI_Recv(pl->full + at, k, MPI_DOUBLE, pl->s_first, BB_TAG_PAYLOAD, l->comm,
                              MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* root: reduce the whole array to the sending root, one root-to-root
 * message, broadcast, every receiver picks its elements (today's MDI). */
static int bb_exec_root(bb_redist_plan_t *pl, const double *send, double *recv)
{
    int rc, k, nc = pl->ncomp;
    int64_t cnt = pl->n * nc;
    int me_s = -1, me_r = -1;
    if (pl->sender) {
        const bb_map_t *sm = bb_plan_send_map(pl);
        MPI_Comm_rank(pl->scomm, &me_s);
        memset(pl->full, 0, (size_t)cnt * sizeof(double));
        for (int64_t i = 0; i < sm->count; i++)
            bb_copy_elem(pl->full, (int)sm->idx[i], send, (int)i, nc);
        for (int64_t at = 0; (k = bb_root_piece(pl, cnt, at)) > 0; at += k)
            if ((rc = MPI_Reduce(me_s == 0 ? MPI_IN_PLACE : pl->full + at,
                                 me_s == 0 ? pl->full + at : NULL, k, MPI_DOUBLE, MPI_SUM, 0,
                                 pl->scomm)) != MPI_SUCCESS)
                return rc;
    }
    if (pl->receiver)
        MPI_Comm_rank(pl->rcomm, &me_r);
    if ((rc = bb_root_message(pl, cnt)) != MPI_SUCCESS)
        return rc;
    if (pl->receiver) {
        const bb_map_t *rm = bb_plan_recv_map(pl);
        for (int64_t at = 0; (k = bb_root_piece(pl, cnt, at)) > 0; at += k)
            if ((rc = MPI_Bcast(pl->full + at, k, MPI_DOUBLE, 0, pl->rcomm)) != MPI_SUCCESS)
                return rc;
        for (int64_t i = 0; i < rm->count; i++)
            bb_copy_elem(recv, (int)i, pl->full, (int)rm->idx[i], nc);
    }
    return MPI_SUCCESS;
}

/* root-gatherv: gather local arrays to the sending root, permute to global
 * order, one root-to-root message, permute to receiver order, scatter. */
static int bb_exec_root_gatherv(bb_redist_plan_t *pl, const double *send, double *recv)
{
    int rc, nc = pl->ncomp;
    int64_t cnt = pl->n * nc;
    int me_s = -1, me_r = -1;
    if (pl->sender) {
        const bb_map_t *sm = bb_plan_send_map(pl);
        MPI_Comm_rank(pl->scomm, &me_s);
        if ((rc = MPI_Gatherv(send, (int)sm->count, pl->elem, pl->gbuf, pl->sg.counts,
                              pl->sg.displs, pl->elem, 0, pl->scomm)) != MPI_SUCCESS)
            return rc;
        if (me_s == 0)
            for (int64_t j = 0; j < pl->sg.total; j++)
                bb_copy_elem(pl->full, (int)pl->sg.idx[j], pl->gbuf, (int)j, nc);
    }
    if (pl->receiver)
        MPI_Comm_rank(pl->rcomm, &me_r);
    if ((rc = bb_root_message(pl, cnt)) != MPI_SUCCESS)
        return rc;
    if (pl->receiver) {
        const bb_map_t *rm = bb_plan_recv_map(pl);
        if (me_r == 0)
            for (int64_t j = 0; j < pl->rg.total; j++)
                bb_copy_elem(pl->gbuf, (int)j, pl->full, (int)pl->rg.idx[j], nc);
        if ((rc = MPI_Scatterv(pl->gbuf, pl->rg.counts, pl->rg.displs, pl->elem, recv,
                               (int)rm->count, pl->elem, 0, pl->rcomm)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* One exchange of x by what the plan executes (auto's trial candidate or
 * choice, else its method): pack, pack-mpi, sparse, overlap or (direct and the steps of
 * two-step) Alltoallw. */
static int bb_xplan_exchange(const bb_redist_plan_t *pl, bb_xplan_t *x, const double *send,
                             double *recv)
{
    int rc, nr, ns;
    switch (pl->chosen) {
    case BB_REDIST_PACK:
        if ((rc = bb_xplan_pack_post(x, send, pl->elem, pl->ncomp, 0)) == MPI_SUCCESS)
            bb_xplan_pack_publish(x, recv, pl->ncomp, 0);
        return rc;
    case BB_REDIST_PACK_MPI:
        if ((rc = bb_xplan_pack_mpi_post(x, send, 0)) != MPI_SUCCESS)
            return rc;
        return bb_xplan_pack_mpi_publish(x, recv, 0);
    case BB_REDIST_SPARSE:
        return bb_xplan_sparse_isend(x, send, recv, pl->ncomp);
    case BB_REDIST_OVERLAP:
        if ((rc = bb_xplan_overlap_post(x, send, pl->elem, pl->ncomp, 0, &nr, &ns))
            != MPI_SUCCESS)
            return rc;
        return bb_xplan_overlap_publish(x, send, recv, pl->ncomp, nr, ns, 0);
    default:
        return bb_xplan_alltoallw(x, send, recv);
    }
}

/* ---- one message -------------------------------------------------------- */

/* Local.  Why this rank refuses the message before the admission, if it
 * does: such refusals still enter the admission, so no rank waits. */
static bb_redist_local_t bb_exec_local_cause(const bb_redist_plan_t *pl,
                                             const bb_redist_contract_t *contract,
                                             const void *send, const void *recv)
{
    if (contract == NULL)
        return BB_REDIST_LOCAL_CONTRACT;
    if (contract->command != pl->command)
        return BB_REDIST_LOCAL_COMMAND;
    if (contract->n != pl->n)
        return BB_REDIST_LOCAL_ELEMENTS;
    if (contract->element_bytes != pl->eb)
        return BB_REDIST_LOCAL_ELEMENT_BYTES;
    if (contract->cap < 0 || contract->n > contract->cap)
        return BB_REDIST_LOCAL_OVER_CAP;
    if ((pl->sender && bb_plan_send_map(pl)->count > 0 && send == NULL)
        || (pl->receiver && bb_plan_recv_map(pl)->count > 0 && recv == NULL))
        return BB_REDIST_LOCAL_BUFFER;
    return BB_REDIST_LOCAL_NONE;
}

/* Local.  The recv_dist flag this rank would send: only the sending code's
 * ranks decide it (each from the same plan state, so they agree). */
static int64_t bb_exec_flag(const bb_redist_plan_t *pl)
{
    const bb_redist_link_t *l = pl->link;
    if (pl->method == BB_REDIST_ROOT || pl->method == BB_REDIST_ROOT_GATHERV)
        return BB_RECV_DIST_ROOT;
    if (pl->command == BB_REDIST_RECEIVE && bb_plan_cross_uses_engine(pl) && l->is_engine
        && pl->emap->epoch != pl->engine_known)
        return BB_RECV_DIST_MAP; /* the engine's map comes with this reply */
    return BB_RECV_DIST_DATA;
}

/* Local.  The message's handshake, this rank's part: the nine fields and
 * their complements into both[2 * BB_REDIST_FIELDS], for one MIN over the
 * link that gives MIN and MAX (bb_agree_split, bb_agree_join).  The recv_dist flag
 * travels as a field that only senders present; a rank that only receives
 * presents MIN's identity in both halves, so MIN == MAX of it still proves
 * that the senders agreed, and every rank reads it from the result.  Engine
 * ranks present the engine epoch they hold, the others the one they last
 * learned: a difference is the epoch mismatch, which changes the path, not
 * the verdict. */
static void bb_exec_handshake_fields(const bb_redist_plan_t *pl,
                                     const bb_redist_contract_t *contract,
                                     bb_redist_local_t cause, int64_t *both)
{
    const bb_redist_link_t *l = pl->link;
    int64_t local[BB_REDIST_FIELDS];
    local[BB_REDIST_SEQUENCE] = pl->sequence;
    local[BB_REDIST_COMMAND] = contract->command;
    local[BB_REDIST_N] = contract->n;
    local[BB_REDIST_ELEMENT_BYTES] = contract->element_bytes;
    local[BB_REDIST_DRIVER_EPOCH] = l->is_driver ? pl->dmap->epoch : pl->driver_epoch;
    local[BB_REDIST_ENGINE_EPOCH] = l->is_engine ? pl->emap->epoch : pl->engine_known;
    local[BB_REDIST_CAP] = contract->cap;
    local[BB_REDIST_RECV_DIST] = bb_exec_flag(pl);
    local[BB_REDIST_REFUSAL] =
        cause != BB_REDIST_LOCAL_NONE ? 8 * (int64_t)l->rank + BB_STAGE_PREFLIGHT : 0;
    bb_agree_split(local, BB_REDIST_FIELDS, both);
    if (!pl->sender)
        both[BB_REDIST_RECV_DIST] = both[BB_REDIST_FIELDS + BB_REDIST_RECV_DIST] = INT64_MAX;
}

/* Local, alike on every rank (from the plan alone): whether this message's
 * handshake rides in its payload's exchange (no collective of its own, the
 * payload posted before the verdict).  Only the staged methods,
 * whose payload reaches recv only when published after the verdict, and
 * only where the verdict cannot change what is posted: their exchange and
 * the sizes it moves are the plan's, whatever the contracts say, so a
 * refusing rank still sends and receives its staging and no rank waits; a
 * '>' after an engine map change still crosses in the layout the driver
 * knows (only the engine's publish differs); a '<' whose reply may carry a
 * new engine map is known to be safe only where every rank holds the engine
 * map (intra), so across codes '<' waits for its verdict. */
static int bb_exec_eager(const bb_redist_plan_t *pl)
{
    if (pl->method == BB_REDIST_ROOT || pl->method == BB_REDIST_ROOT_GATHERV
        || pl->method == BB_REDIST_TWO_STEP)
        return 0;
    if ((pl->chosen != BB_REDIST_PACK && pl->chosen != BB_REDIST_PACK_MPI
         && pl->chosen != BB_REDIST_OVERLAP)
        || pl->x1.hbytes <= 0)
        return 0;
    if (pl->command == BB_REDIST_SEND)
        return 1;
    return pl->link->mode == BB_REDIST_MODE_INTRA && pl->emap->epoch == pl->engine_known;
}

/* Local, alike on every rank (from the agreed fields): 1 and the refusal in
 * *m when the admission refuses the message. */
static int bb_exec_refused(const int64_t *mn, const int64_t *mx, bb_redist_metrics_t *m)
{
    int agreed = bb_agree_fields_equal(mn, mx, BB_REDIST_SEQUENCE, BB_REDIST_ENGINE_EPOCH)
                 && bb_agree_fields_equal(mn, mx, BB_REDIST_CAP, 2)
                 && mn[BB_REDIST_ENGINE_EPOCH] >= 0;
    if (mx[BB_REDIST_REFUSAL] == 0 && agreed)
        return 0;
    m->refusal.sequence = mx[BB_REDIST_SEQUENCE];
    if (mx[BB_REDIST_REFUSAL] != 0) {
        m->refusal.stage = BB_STAGE_PREFLIGHT;
        m->refusal.rank = (int)(mx[BB_REDIST_REFUSAL] / 8);
    } else {
        m->refusal.stage = BB_STAGE_CONTRACT;
    }
    return 1;
}

/* Collective over the link: '<' with a stale copy of the engine map: the
 * map comes with the reply (the cross part rebuilt over the link). */
static bb_status_t bb_exec_map_reply(bb_redist_plan_t *pl, bb_redist_metrics_t *m)
{
    double t0 = bb_time_now();
    int rc = bb_plan_build_cross(pl, 1);
    bb_status_t st = bb_plan_agree_status(pl->link->comm, bb_plan_status_from_rc(rc));
    m->map_s = bb_time_now() - t0;
    m->map_sent = 1;
    if (st == BB_ERR_MPI)
        bb_plan_poison(pl);
    return st;
}

/* Collective over the link: the payload by the plan's method; *steps: the
 * exchanges it took.  stale: '>' after the engine changed its map. */
static int bb_exec_payload(bb_redist_plan_t *pl, int stale, const double *send, double *recv,
                           int *steps)
{
    int rc;
    *steps = 1;
    switch (pl->method) {
    case BB_REDIST_ROOT:
        return bb_exec_root(pl, send, recv);
    case BB_REDIST_ROOT_GATHERV:
        return bb_exec_root_gatherv(pl, send, recv);
    case BB_REDIST_TWO_STEP:
        *steps = 2;
        rc = bb_xplan_alltoallw(&pl->x1, send, pl->receiver ? pl->tmp : NULL);
        if (rc == MPI_SUCCESS && pl->receiver)
            rc = bb_xplan_alltoallw(&pl->x2, pl->tmp, recv);
        return rc;
    default:
        if (!stale)
            return bb_xplan_exchange(pl, &pl->x1, send, recv);
        /* deliver in the layout the driver knows, then convert inside the
         * engine */
        *steps = 2;
        rc = bb_xplan_exchange(pl, &pl->x1, send, pl->receiver ? pl->tmp2 : NULL);
        if (rc == MPI_SUCCESS && pl->receiver)
            rc = bb_xplan_alltoallw(&pl->xfix, pl->tmp2, recv);
        return rc;
    }
}

/* Local.  An eager message's handshake: this rank's header (both, from
 * bb_exec_handshake_fields) into every peer's part of the send staging,
 * its own included (pack's and pack-mpi's exchanges carry the self part
 * too); packed: as MPI_INT64_T through MPI_Pack, the staging being
 * MPI_PACKED. */
static int bb_xplan_stage_headers(bb_xplan_t *x, const int64_t *both, int packed)
{
    for (int d = 0; d < x->p; d++) {
        int pos = x->edispl_s[d], rc;
        if (!packed) {
            memcpy(x->pbuf + pos, both, BB_XPLAN_HEADER_BYTES);
            continue;
        }
        if ((rc = MPI_Pack(both, 2 * BB_REDIST_FIELDS, MPI_INT64_T, x->pbuf, (int)x->pbytes, &pos,
                           x->comm)) != MPI_SUCCESS)
            return rc;
        if (pos > x->edispl_s[d] + x->hbytes)
            return MPI_ERR_INTERN; /* more than MPI_Pack_size said */
    }
    return MPI_SUCCESS;
}

/* Local, after an eager exchange: into red, the element-wise MIN of this
 * rank's header (both) and the one every other rank sent it, which is what
 * one MIN Allreduce of the headers gives (the same P inputs; MIN is exact
 * on int64), so every rank reaches the same verdict. */
static int bb_xplan_min_headers(bb_xplan_t *x, const int64_t *both, int64_t *red, int packed)
{
    memcpy(red, both, BB_XPLAN_HEADER_BYTES);
    for (int d = 0; d < x->p; d++) {
        int64_t h[2 * BB_REDIST_FIELDS];
        int pos = x->edispl_r[d], rc;
        if (d == x->me)
            continue;
        if (!packed)
            memcpy(h, x->ubuf + pos, BB_XPLAN_HEADER_BYTES);
        else if ((rc = MPI_Unpack(x->ubuf, (int)x->ubytes, &pos, h, 2 * BB_REDIST_FIELDS,
                                  MPI_INT64_T, x->comm)) != MPI_SUCCESS)
            return rc;
        for (int i = 0; i < 2 * BB_REDIST_FIELDS; i++)
            if (h[i] < red[i])
                red[i] = h[i];
    }
    return MPI_SUCCESS;
}

/* Collective over the link: an eager message's exchange, by the staged
 * method it executes (bb_exec_eager), the headers staged already, up to
 * everything this rank receives in its staging (every rank's header among
 * it, so that the verdict follows locally); *nr, *ns: overlap's requests
 * (its sends may still fly). */
static int bb_exec_post(bb_redist_plan_t *pl, const double *send, int *nr, int *ns)
{
    int rc;
    *nr = *ns = 0;
    switch (pl->chosen) {
    case BB_REDIST_PACK:
        return bb_xplan_pack_post(&pl->x1, send, pl->elem, pl->ncomp, 1);
    case BB_REDIST_PACK_MPI:
        return bb_xplan_pack_mpi_post(&pl->x1, send, 1);
    default:
        rc = bb_xplan_overlap_post(&pl->x1, send, pl->elem, pl->ncomp, 1, nr, ns);
        return rc != MPI_SUCCESS ? rc : MPI_Waitall(*nr, pl->x1.reqs, pl->x1.stats);
    }
}

/* Collective over the link: an admitted eager message's publish, into recv,
 * or (stale: '>' after the engine changed its map) into the layout the
 * driver knows and converted inside the engine; *steps as bb_exec_payload. */
static int bb_exec_publish(bb_redist_plan_t *pl, int stale, const double *send, double *recv,
                           int nr, int ns, int *steps)
{
    int rc = MPI_SUCCESS;
    double *dest = !stale ? recv : pl->receiver ? pl->tmp2 : NULL;
    *steps = stale ? 2 : 1;
    switch (pl->chosen) {
    case BB_REDIST_PACK:
        bb_xplan_pack_publish(&pl->x1, dest, pl->ncomp, 1);
        break;
    case BB_REDIST_PACK_MPI:
        rc = bb_xplan_pack_mpi_publish(&pl->x1, dest, 1);
        break;
    default:
        rc = bb_xplan_overlap_publish(&pl->x1, send, dest, pl->ncomp, nr, ns, 1);
        break;
    }
    if (rc == MPI_SUCCESS && stale && pl->receiver)
        rc = bb_xplan_alltoallw(&pl->xfix, pl->tmp2, recv);
    return rc;
}

/* Collective over the link: a refused eager message's sends completed, its
 * staging left unpublished. */
static int bb_exec_drop(bb_redist_plan_t *pl, int nr, int ns)
{
    return MPI_Waitall(ns, pl->x1.reqs + nr, pl->x1.stats);
}

/* Local.  Whether pl may execute now: BB_OK, or why not. */
static bb_status_t bb_exec_allowed(const bb_redist_plan_t *pl)
{
    if (pl == NULL)
        return BB_ERR_ARG;
    if (bb_world_check_owner(pl->link->world) != BB_OK)
        return BB_ERR_THREAD;
    if (pl->in_call)
        return BB_ERR_REENTRY;
    if (pl->poisoned)
        return BB_ERR_POISONED;
    return BB_OK;
}

/* What a message's kind is (bb_exec_message). */
enum { BB_EXEC_MESSAGE = 0, BB_EXEC_UPDATE, BB_EXEC_DRIVER_MAP };

/* Collective over the link, when every rank presented BB_REDIST_MAP: the
 * driver's verdict on its new map into *su on every rank of both codes. */
static int bb_exec_agree_setup(bb_redist_plan_t *pl, bb_redist_setup_t *su)
{
    const bb_map_fault_t *f = &su->driver_fault;
    int64_t loc[9] = {f->out_of_range, f->duplicates, f->gaps, f->n_mismatch,
                      f->epoch_mismatch, f->missing, f->resources, su->n_mismatch,
                      su->stale_epoch}, mx[9];
    int rc = bb_agree_max(pl->link->comm, loc, 9, mx);
    if (rc != MPI_SUCCESS)
        return rc;
    su->driver_fault = (bb_map_fault_t){mx[0], mx[1], mx[2], (int)mx[3], (int)mx[4],
                                        (int)mx[5], (int)mx[6]};
    su->n_mismatch = (int)mx[7];
    su->stale_epoch = (int)mx[8];
    return MPI_SUCCESS;
}

/* Collective over the link: one message, or (update) the handshake of
 * bb_redist_plan_update_maps: the same agreement, or the same eager
 * exchange with nothing published, presenting the command
 * BB_REDIST_UPDATE, so that a code that calls update while the other
 * executes a message (or the other way round) meets it in the same
 * collective and both are refused by the contract's command field instead
 * of entering different collectives (a hang or an MPI error).  An admitted
 * update then rebuilds the cross part (the driver learns the engine map). */
static bb_status_t bb_exec_message(bb_redist_plan_t *pl, const bb_redist_contract_t *contract,
                                   const void *send, void *recv, int update,
                                   const bb_map_t *dmap_new, bb_redist_setup_t *su,
                                   bb_redist_metrics_t *metrics_out)
{
    bb_redist_metrics_t m;
    memset(&m, 0, sizeof m);
    m.refusal.rank = -1;
    double t0 = bb_time_now();
    bb_status_t st = bb_exec_allowed(pl);
    if (st != BB_OK)
        goto done;
    pl->in_call = 1;
    m.sequence = pl->sequence;
    /* A missing contract presents an impossible one (and the refusal). */
    const bb_redist_contract_t none = {0, -1, -1, -1};
    const bb_redist_contract_t upd = {update == BB_EXEC_DRIVER_MAP ? BB_REDIST_MAP
                                                                   : BB_REDIST_UPDATE,
                                      pl->n, pl->eb, pl->n};
    bb_redist_local_t cause = update ? BB_REDIST_LOCAL_NONE
                                     : bb_exec_local_cause(pl, contract, send, recv);
    bb_map_t *dcopy = NULL;
    if (update == BB_EXEC_DRIVER_MAP && pl->link->is_driver) {
        /* the new map, validated over the driver code alone (the engine
         * may be anywhere: the handshake below meets it) */
        bb_status_t vs = bb_map_validate(pl->link->code, dmap_new, &su->driver_fault);
        if (vs == BB_ERR_MPI)
            goto mpi_fail;
        su->validate_s = bb_time_now() - t0;
        if (vs == BB_OK) {
            su->n_mismatch = dmap_new->n != pl->n;
            su->stale_epoch = dmap_new->epoch <= pl->dmap->epoch;
            if (!su->n_mismatch && !su->stale_epoch && (dcopy = bb_map_copy(dmap_new)) == NULL)
                su->driver_fault.resources = 1;
        }
        if (vs != BB_OK || su->n_mismatch || su->stale_epoch || dcopy == NULL)
            cause = BB_REDIST_LOCAL_MAP;
    }
    m.local_cause = cause;
    if (update) {
        contract = &upd;
        send = NULL; /* an eager update sends its staging as it is */
        recv = NULL;
    }
    if (contract == NULL)
        contract = &none;
    int64_t both[2 * BB_REDIST_FIELDS], red[2 * BB_REDIST_FIELDS];
    int64_t mn[BB_REDIST_FIELDS], mx[BB_REDIST_FIELDS];
    bb_exec_handshake_fields(pl, contract, cause, both);
    int rc, nr = 0, ns = 0;
    m.eager = bb_exec_eager(pl);
    if (!m.eager) {
        rc = MPI_Allreduce(both, red, 2 * BB_REDIST_FIELDS, MPI_INT64_T, MPI_MIN, pl->link->comm);
        if (rc != MPI_SUCCESS)
            goto mpi_fail;
        m.admission_s = bb_time_now() - t0;
    } else {
        /* no collective: every rank's header rides in the exchange to every
         * rank; the handshake's own part is the local work around it, the
         * headers staged and their MIN taken */
        int packed = pl->chosen == BB_REDIST_PACK_MPI;
        if ((rc = bb_xplan_stage_headers(&pl->x1, both, packed)) != MPI_SUCCESS)
            goto mpi_fail;
        double t1 = bb_time_now();
        rc = bb_exec_post(pl, cause == BB_REDIST_LOCAL_NONE && !update ? send : NULL, &nr, &ns);
        double t2 = bb_time_now();
        if (rc != MPI_SUCCESS || (rc = bb_xplan_min_headers(&pl->x1, both, red, packed))
                                     != MPI_SUCCESS)
            goto mpi_fail; /* requests stay with the poisoned plan */
        m.payload_s = t2 - t1;
        m.admission_s = (t1 - t0) + (bb_time_now() - t2);
    }
    bb_agree_join(red, BB_REDIST_FIELDS, mn, mx);
    pl->sequence++;
    m.recv_dist = mx[BB_REDIST_RECV_DIST];
    int all_map = update == BB_EXEC_DRIVER_MAP && mn[BB_REDIST_COMMAND] == BB_REDIST_MAP
                  && mx[BB_REDIST_COMMAND] == BB_REDIST_MAP;
    if (all_map && bb_exec_agree_setup(pl, su) != MPI_SUCCESS)
        goto mpi_fail;
    if (bb_exec_refused(mn, mx, &m)) {
        if (m.eager && (rc = bb_exec_drop(pl, nr, ns)) != MPI_SUCCESS)
            goto mpi_fail;
        bb_map_free(dcopy);
        st = BB_REFUSED;
        goto leave_call;
    }
    if (update == BB_EXEC_DRIVER_MAP) {
        /* admitted: the driver's new map replaces the plan's, then the
         * cross part (both epochs learned) and both codes' own parts */
        if (m.eager && (rc = bb_exec_drop(pl, nr, ns)) != MPI_SUCCESS)
            goto mpi_fail;
        if (dcopy != NULL) {
            bb_map_free(pl->dmap);
            pl->dmap = dcopy;
        }
        if ((st = bb_exec_map_reply(pl, &m)) != BB_OK)
            goto leave_call;
        su->map_transfer_s = m.map_s;
        double t4 = bb_time_now();
        st = bb_plan_agree_status(pl->link->comm,
                                  bb_plan_status_from_rc(bb_plan_rebuild_internal(pl)));
        su->plan_build_s = bb_time_now() - t4;
        if (st == BB_ERR_MPI)
            bb_plan_poison(pl);
        goto leave_call;
    }
    if (update) {
        if (m.eager && (rc = bb_exec_drop(pl, nr, ns)) != MPI_SUCCESS)
            goto mpi_fail;
        st = bb_exec_map_reply(pl, &m); /* the cross part, both epochs learned */
        goto leave_call;
    }
    int stale = bb_plan_cross_uses_engine(pl) && mx[BB_REDIST_ENGINE_EPOCH] != pl->engine_known;
    if (stale && pl->command == BB_REDIST_RECEIVE) {
        /* never eager (bb_exec_eager) */
        if ((st = bb_exec_map_reply(pl, &m)) != BB_OK)
            goto leave_call;
        stale = 0;
    }
    double t3 = bb_time_now();
    rc = m.eager ? bb_exec_publish(pl, stale, send, recv, nr, ns, &m.steps)
                 : bb_exec_payload(pl, stale, send, recv, &m.steps);
    if (rc != MPI_SUCCESS)
        goto mpi_fail;
    m.payload_s += bb_time_now() - t3;
    if (pl->method == BB_REDIST_AUTO && pl->trial_done < pl->trial_len
        && (rc = bb_plan_trial_step(pl, m.payload_s)) != MPI_SUCCESS)
        goto mpi_fail;
    goto leave_call;

mpi_fail:
    bb_plan_poison(pl);
    st = BB_ERR_MPI;
leave_call:
    pl->in_call = 0;
done:
    m.status = st;
    m.total_s = bb_time_now() - t0;
    if (metrics_out)
        *metrics_out = m;
    return st;
}

bb_status_t bb_redist_plan_execute(bb_redist_plan_t *pl, const bb_redist_contract_t *contract,
                                   const void *send, void *recv,
                                   bb_redist_metrics_t *metrics_out)
{
    return bb_exec_message(pl, contract, send, recv, BB_EXEC_MESSAGE, NULL, NULL, metrics_out);
}

bb_status_t bb_exec_update(bb_redist_plan_t *pl, bb_redist_metrics_t *metrics_out)
{
    return bb_exec_message(pl, NULL, NULL, NULL, BB_EXEC_UPDATE, NULL, NULL, metrics_out);
}

bb_status_t bb_redist_plan_set_driver_map(bb_redist_plan_t *pl, const bb_map_t *map,
                                          bb_redist_setup_t *setup_out)
{
    bb_redist_setup_t su;
    memset(&su, 0, sizeof su);
    if (setup_out)
        *setup_out = su;
    double t0 = bb_time_now();
    bb_status_t st = bb_exec_message(pl, NULL, NULL, NULL, BB_EXEC_DRIVER_MAP, map, &su, NULL);
    su.total_s = bb_time_now() - t0;
    if (setup_out && st != BB_ERR_ARG && st != BB_ERR_THREAD && st != BB_ERR_REENTRY)
        *setup_out = su;
    return st;
}
