/* fixture.c: the data pattern bbench-redist moves and its collective check
 * (outside any timed region). */
#include "config.h"
#include "redist.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Data pattern and checking                                                */
/* ------------------------------------------------------------------------ */

static double bb_value(int64_t g, int c, int64_t k)
{
    return (double)((g * 3 + c) * 4 + (k & 3));
}

void bb_rd_fill(const bb_map_t *map, int64_t element_bytes, int64_t k, double *buf)
{
    int nc = (int)(element_bytes / 8);
    const int64_t *idx = bb_map_indices(map);
    for (int64_t i = 0; i < bb_map_count(map); i++)
        for (int c = 0; c < nc; c++)
            buf[i * nc + c] = bb_value(idx[i], c, k);
}

void bb_rd_fill_sentinel(int64_t count, int64_t element_bytes, double *buf)
{
    int64_t m = count * (element_bytes / 8);
    for (int64_t i = 0; i < m; i++)
        buf[i] = BB_REDIST_SENTINEL;
}

void bb_rd_test_corrupt(const char *who, const bb_map_t *map, double *buf)
{
    const char *want = getenv("BB_REDIST_TEST_CORRUPT");
    if (want == NULL || map == NULL || bb_map_count(map) == 0
        || (strcmp(want, "all") != 0 && strcmp(want, who) != 0))
        return;
    buf[0] += 1.0;
}

/* A mixing hash of a slot value, so that the checksum sees which values
 * arrived, not only their sum. */
static uint64_t bb_mix(int64_t v)
{
    uint64_t s = (uint64_t)v;
    return bb_splitmix(&s);
}

bb_status_t bb_rd_check(MPI_Comm comm, const bb_map_t *map, int64_t n,
                        int64_t element_bytes, int64_t k, const double *buf,
                        bb_rd_check_t *out)
{
    int p, me;
    if (MPI_Comm_size(comm, &p) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return BB_ERR_MPI;
    int nc = (int)(element_bytes / 8);
    int64_t bad = 0, first_bad = INT64_MAX, slots = 0;
    uint64_t got = 0, want = 0;
    const int64_t *idx = map != NULL ? bb_map_indices(map) : NULL;
    if (map != NULL)
        for (int64_t i = 0; i < bb_map_count(map); i++)
            for (int c = 0; c < nc; c++) {
                double v = buf[i * nc + c];
                slots++;
                if (v != bb_value(idx[i], c, k)) {
                    bad++;
                    if (idx[i] < first_bad)
                        first_bad = idx[i];
                }
                /* exact small integers; the sentinel hashes as itself */
                got += (v >= 0 && v < 9.0e15) ? bb_mix((int64_t)v) : bb_mix(-1);
            }
    /* the expected sum, from N alone, computed over standardized blocks */
    int64_t f, cnt;
    bb_std_block(n, me, p, &f, &cnt);
    for (int64_t g = f; g < f + cnt; g++)
        for (int c = 0; c < nc; c++)
            want += bb_mix((g * 3 + c) * 4 + (k & 3));
    /* one reduction: counts and the two hash sums (unsigned, so they wrap) */
    uint64_t v[4] = {(uint64_t)bad, (uint64_t)slots, got, want}, tot[4];
    if (MPI_Allreduce(v, tot, 4, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    bb_rd_check_t r;
    r.bad_slots = (int64_t)tot[0];
    r.slots = (int64_t)tot[1];
    r.checksum_ok = tot[2] == tot[3] && r.slots == n * nc;
    r.first_bad_index = -1;
    if (r.bad_slots > 0) { /* agreed: every rank takes this branch */
        int64_t fb = first_bad, fbmin;
        if (MPI_Allreduce(&fb, &fbmin, 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
            return BB_ERR_MPI;
        r.first_bad_index = fbmin;
    }
    if (out)
        *out = r;
    return (r.bad_slots == 0 && r.checksum_ok) ? BB_OK : BB_ERR_VALIDATION;
}

