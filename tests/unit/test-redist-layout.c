/* test-redist-layout: every layout generator partitions [0, N) for many
 * (N, P), including N < P and N = 0; the standardized distribution matches
 * its owner function; parsing refuses bad names.  Serial, no MPI calls. */
#include "config.h"
#include "bench/redist/redist.h"
#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* All ranks' indices of one layout: each g in [0, n) exactly once, and the
 * generator is deterministic.  Returns the number of ranks holding none. */
static int check_partition(const char *spec, int64_t n, int p)
{
    bb_layout_t lay;
    char err[256];
    if (bb_layout_parse(spec, &lay, err, sizeof err) != BB_OK) {
        CHECK_MSG(0, "parse %s: %s", spec, err);
        return 0;
    }
    int *hits = calloc((size_t)(n > 0 ? n : 1), sizeof *hits);
    int64_t total = 0, bad = 0;
    int empty = 0;
    for (int r = 0; r < p; r++) {
        int64_t *idx = NULL, cnt = -1, *again = NULL, cnt2 = -1;
        bb_status_t st = bb_layout_indices(&lay, n, r, p, &idx, &cnt);
        CHECK_MSG(st == BB_OK, "%s n=%lld p=%d r=%d: %s", spec, (long long)n, p, r,
                  bb_status_string(st));
        if (st != BB_OK)
            continue;
        CHECK_MSG(bb_layout_indices(&lay, n, r, p, &again, &cnt2) == BB_OK && cnt2 == cnt
                      && (cnt == 0 || memcmp(idx, again, (size_t)cnt * sizeof *idx) == 0),
                  "%s n=%lld p=%d r=%d: not deterministic", spec, (long long)n, p, r);
        for (int64_t i = 0; i < cnt; i++) {
            if (idx[i] < 0 || idx[i] >= n)
                bad++;
            else
                hits[idx[i]]++;
        }
        total += cnt;
        empty += cnt == 0;
        bb_free(idx);
        bb_free(again);
    }
    int64_t gaps = 0, dups = 0;
    for (int64_t g = 0; g < n; g++) {
        gaps += hits[g] == 0;
        dups += hits[g] > 1;
    }
    CHECK_MSG(bad == 0 && gaps == 0 && dups == 0 && total == n,
              "%s n=%lld p=%d: out of range %lld, gaps %lld, duplicates %lld, total %lld",
              spec, (long long)n, p, (long long)bad, (long long)gaps, (long long)dups,
              (long long)total);
    free(hits);
    return empty;
}

int main(void)
{
    static const char *const specs[] = {
        "std", "std-ceil", "block-irregular", "block-irregular:9", "block-reverse",
        "cyclic", "block-cyclic:1", "block-cyclic:3", "block-cyclic:64", "spatial",
        "random", "random:12345", "spatial-shuffled", "spatial-shuffled:7", "root"
    };
    static const int64_t ns[] = {0, 1, 2, 3, 5, 7, 8, 10, 17, 63, 64, 100, 999, 1000, 4097};
    static const int ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17};
    int nspecs = (int)(sizeof specs / sizeof *specs);

    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof ps / sizeof *ps; b++) {
            int64_t n = ns[a];
            int p = ps[b];
            for (int s = 0; s < nspecs; s++) {
                int empty = check_partition(specs[s], n, p);
                if (n < p && strcmp(specs[s], "std") == 0)
                    CHECK_MSG(empty == p - n, "std n=%lld p=%d: %d empty ranks", (long long)n,
                              p, empty);
            }
            /* explicit spatial subdomains: P x 1 x 1 and, where possible, 2 x P/2 x 1 */
            char spec[64];
            snprintf(spec, sizeof spec, "spatial:%d,1,1", p);
            check_partition(spec, n, p);
            if (p % 2 == 0) {
                snprintf(spec, sizeof spec, "spatial:2,%d,1", p / 2);
                check_partition(spec, n, p);
            }
        }

    /* The standardized distribution and its owner function agree. */
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof ps / sizeof *ps; b++) {
            int64_t n = ns[a], next = 0;
            int p = ps[b], ok = 1;
            for (int r = 0; r < p; r++) {
                int64_t first, cnt;
                bb_std_block(n, r, p, &first, &cnt);
                ok &= first == next && cnt >= n / p && cnt <= n / p + 1;
                for (int64_t g = first; g < first + cnt; g++)
                    ok &= bb_std_owner(n, p, g) == r;
                next = first + cnt;
            }
            CHECK_MSG(ok && next == n, "std block/owner n=%lld p=%d", (long long)n, p);
        }

    /* Layouts that must differ from std do: random permutes the storage
     * order, cyclic interleaves, block-reverse swaps ranks. */
    {
        bb_layout_t lay;
        int64_t *idx, cnt;
        int sorted = 1;
        CHECK_MSG(bb_layout_parse("random:3", &lay, NULL, 0) == BB_OK, "parse random:3");
        CHECK_MSG(bb_layout_indices(&lay, 1000, 0, 1, &idx, &cnt) == BB_OK && cnt == 1000,
                  "random on one rank");
        for (int64_t i = 1; i < cnt; i++)
            sorted &= idx[i] > idx[i - 1];
        CHECK_MSG(!sorted, "random:3 storage order is not the identity");
        bb_free(idx);
        CHECK_MSG(bb_layout_parse("block-reverse", &lay, NULL, 0) == BB_OK
                      && bb_layout_indices(&lay, 100, 0, 4, &idx, &cnt) == BB_OK
                      && cnt == 25 && idx[0] == 75,
                  "block-reverse: rank 0 holds the last block");
        bb_free(idx);
        CHECK_MSG(bb_layout_parse("cyclic", &lay, NULL, 0) == BB_OK
                      && bb_layout_indices(&lay, 10, 1, 4, &idx, &cnt) == BB_OK && cnt == 3
                      && idx[0] == 1 && idx[1] == 5 && idx[2] == 9,
                  "cyclic: rank 1 of 4 holds 1, 5, 9");
        bb_free(idx);
        CHECK_MSG(bb_layout_parse("std-ceil", &lay, NULL, 0) == BB_OK
                      && bb_layout_indices(&lay, 10, 3, 4, &idx, &cnt) == BB_OK && cnt == 1
                      && idx[0] == 9,
                  "std-ceil: blocks of 3, the last rank holds 9");
        bb_free(idx);
        /* spatial: the lattice for N = 64 is 4x4x4; on 2,1,1 rank 0 holds x < 2 */
        CHECK_MSG(bb_layout_parse("spatial:2,1,1", &lay, NULL, 0) == BB_OK
                      && bb_layout_indices(&lay, 64, 0, 2, &idx, &cnt) == BB_OK && cnt == 32
                      && idx[0] == 0 && idx[1] == 1 && idx[2] == 4,
                  "spatial:2,1,1 on a 4x4x4 lattice");
        bb_free(idx);
        CHECK_MSG(bb_layout_indices(&lay, 64, 0, 3, &idx, &cnt) == BB_ERR_ARG,
                  "spatial dims whose product is not P are refused");
        /* spatial-shuffled: spatial's owners, each rank's set the same, its
         * order not ascending */
        for (int p = 1; p <= 4; p++)
            for (int r = 0; r < p; r++) {
                bb_layout_t sp, sh;
                int64_t *a = NULL, ca = 0, *b = NULL, cb = 0;
                int asc = 1;
                CHECK_MSG(bb_layout_parse("spatial", &sp, NULL, 0) == BB_OK
                              && bb_layout_parse("spatial-shuffled:5", &sh, NULL, 0) == BB_OK
                              && bb_layout_indices(&sp, 1000, r, p, &a, &ca) == BB_OK
                              && bb_layout_indices(&sh, 1000, r, p, &b, &cb) == BB_OK,
                          "spatial-shuffled p=%d r=%d generates", p, r);
                CHECK_MSG(ca == cb && ca > 1, "spatial-shuffled p=%d r=%d: %lld elements as "
                          "spatial's %lld", p, r, (long long)cb, (long long)ca);
                char *in = calloc(1000, 1);
                for (int64_t i = 0; i < ca && i < cb; i++)
                    in[a[i]] = 1;
                int same = 1;
                for (int64_t i = 0; i < cb; i++) {
                    same &= in[b[i]];
                    if (i > 0)
                        asc &= b[i] > b[i - 1];
                }
                CHECK_MSG(same, "spatial-shuffled p=%d r=%d: the owners of spatial", p, r);
                CHECK_MSG(!asc, "spatial-shuffled p=%d r=%d: the local order is shuffled", p, r);
                free(in);
                bb_free(a);
                bb_free(b);
            }
        /* root: everything on rank 0, in order; other ranks empty */
        CHECK_MSG(bb_layout_parse("root", &lay, NULL, 0) == BB_OK
                      && bb_layout_indices(&lay, 50, 0, 3, &idx, &cnt) == BB_OK && cnt == 50
                      && idx[0] == 0 && idx[49] == 49,
                  "root: rank 0 holds 0..N-1");
        bb_free(idx);
        CHECK_MSG(bb_layout_indices(&lay, 50, 2, 3, &idx, &cnt) == BB_OK && cnt == 0,
                  "root: rank 2 of 3 holds nothing");
        bb_free(idx);
    }

    /* Parsing and formatting. */
    {
        static const char *const bad[] = {
            "", "blocks", "std:1", "block-cyclic", "block-cyclic:0", "block-cyclic:x",
            "spatial:2,2", "spatial:2,2,0", "spatial:1,2,3,4", "random:-1", "random:1x",
            "cyclic:2", "root:1", "spatial-shuffled:x", "spatial-shuffled:1,1,1"
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            bb_layout_t lay;
            char err[256] = "";
            CHECK_MSG(bb_layout_parse(bad[i], &lay, err, sizeof err) == BB_ERR_PARSE && err[0],
                      "'%s' must be refused with a message", bad[i]);
        }
        for (int s = 0; s < nspecs; s++) {
            bb_layout_t lay, again;
            char text[64];
            CHECK_MSG(bb_layout_parse(specs[s], &lay, NULL, 0) == BB_OK, "parse %s", specs[s]);
            bb_layout_format(&lay, text, sizeof text);
            CHECK_MSG(bb_layout_parse(text, &again, NULL, 0) == BB_OK && again.kind == lay.kind
                          && again.seed == lay.seed && again.block == lay.block,
                      "format of %s (%s) parses back", specs[s], text);
        }
    }

    /* bc2d submatrices and trapezoids: each a partition of its N on grids of
     * the code's size and smaller; the element numbered g sits at the
     * submatrix's (g % ROWS, g / ROWS) in the rank's local array (slots
     * ascending); the text parses back; the trapezoid's count is its
     * membership's. */
    {
        static const struct { const char *spec; int64_t n; int p; } subs[] = {
            {"bc2d:5,2,3,1,3,0,1@3,2,9,11", 30, 3}, {"bc2d:5,2,3,1,3,0,1@3,2,9,11", 30, 4},
            {"bc2d:7,3,2,2,1,1,0@4,5,12,9", 28, 2}, {"bc2d:4,1,3@3,1,8,5", 20, 4},
            {"bc2d:6,4,3,1,2,0,1@2,2,10,9", 30, 2},
            {"bc2d:6,2,2,2,2,1,1@2,3,9,11,U,N,4", 18, 4},
            {"bc2d:3,2,2,2,1,0,0@1,1,5,8,L,U,6", 12, 3},
            {"bc2d:7,3,2,1,2,0,1@1,2,9,5,U,U,3", 15, 2},
            {"bc2d:4,2,3,2,2,1,0@2,1,6,9,L,N,7", 22, 4},
        };
        for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
            bb_layout_t lay, again;
            char text[96], err[256];
            CHECK_MSG(bb_layout_parse(subs[i].spec, &lay, err, sizeof err) == BB_OK, "parse %s: %s",
                      subs[i].spec, err);
            CHECK_MSG(bb_layout_check(&lay, subs[i].n, subs[i].p, err, sizeof err) == BB_OK,
                      "%s fits N=%lld on %d: %s", subs[i].spec, (long long)subs[i].n,
                      subs[i].p, err);
            check_partition(subs[i].spec, subs[i].n, subs[i].p);
            bb_layout_format(&lay, text, sizeof text);
            CHECK_MSG(strcmp(text, subs[i].spec) == 0 || (bb_layout_parse(text, &again, NULL, 0)
                                                           == BB_OK && again.gm == lay.gm),
                      "format of %s (%s) parses back", subs[i].spec, text);
            for (int r = 0; r < subs[i].p; r++) {
                int64_t *idx = NULL, *slots = NULL, cnt = 0, cnt2 = 0, full = 0;
                CHECK_MSG(bb_layout_indices(&lay, subs[i].n, r, subs[i].p, &idx, &cnt) == BB_OK
                              && bb_layout_slots(&lay, subs[i].n, r, subs[i].p, &slots,
                                                 &cnt2, &full) == BB_OK && cnt2 == cnt,
                          "%s rank %d: indices and slots", subs[i].spec, r);
                int ok = 1;
                for (int64_t e = 1; e < cnt; e++)
                    ok &= slots[e] > slots[e - 1] && slots[e] < full;
                if (!lay.uplo)
                    for (int64_t e = 1; e < cnt; e++)
                        /* same local column: consecutive rows, consecutive slots */
                        if (idx[e] / lay.rows == idx[e - 1] / lay.rows
                            && slots[e] == slots[e - 1] + 1)
                            ok &= idx[e] % lay.rows > idx[e - 1] % lay.rows;
                CHECK_MSG(ok, "%s rank %d: slots ascending in a local array of %lld",
                          subs[i].spec, r, (long long)full);
                free(idx);
                free(slots);
            }
        }
        static const char *const bad[] = {
            "bc2d:5,2,3@6,2,9,11", "bc2d:5,2,3@3,2,9", "bc2d:5,2,3@0,2,9,11",
            "bc2d:5,2,3@1,1,9,11,X,N,3", "bc2d:5,2,3@1,1,9,11,U,N,12", "bc2d:5,2,3@1,1,9,11,"
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            bb_layout_t lay;
            char err[256] = "";
            CHECK_MSG(bb_layout_parse(bad[i], &lay, err, sizeof err) == BB_ERR_PARSE
                          && (strstr(err, "submatrix") != NULL
                              || strstr(err, "trapezoid") != NULL),
                      "%s refused (%s)", bad[i], err);
        }
        {
            bb_layout_t lay;
            char err[256] = "";
            CHECK_MSG(bb_layout_parse("bc2d:6,2,2,2,2,1,1@2,3,9,11,U,N,4", &lay, NULL, 0) == BB_OK
                          && bb_layout_check(&lay, 12, 4, err, sizeof err) == BB_ERR_ARG
                          && strstr(err, "give --elements 18") != NULL,
                      "a trapezoid's count is required (%s)", err);
        }
        static const char ul[] = "UL", dg[] = "NU";
        for (int64_t m = 1; m <= 7; m++)
            for (int64_t n = 1; n <= 7; n++)
                for (int u = 0; u < 2; u++)
                    for (int d = 0; d < 2; d++) {
                        int64_t brute = 0;
                        for (int64_t j = 0; j < n; j++)
                            for (int64_t i = 0; i < m; i++)
                                brute += bb_layout_trap_in(i, j, m, n, ul[u], dg[d]);
                        CHECK_MSG(brute == bb_layout_trap_count(m, n, ul[u], dg[d]),
                                  "trapezoid %c%c %lld x %lld: count", ul[u], dg[d],
                                  (long long)m, (long long)n);
                    }
        /* by hand: a 3 x 5 upper holds 12 (rows 0..j, capped), a 5 x 3 upper
         * 12 (its diagonal runs into the bottom-right corner), a 3 x 5 unit
         * lower 9 (rows from j - 1) */
        CHECK_MSG(bb_layout_trap_count(3, 5, 'U', 'N') == 12
                      && bb_layout_trap_count(5, 3, 'U', 'N') == 12
                      && bb_layout_trap_count(5, 3, 'L', 'N') == 12
                      && bb_layout_trap_count(3, 5, 'L', 'U') == 9,
                  "trapezoid counts of 3 x 5 and 5 x 3");
    }

    /* Maps: argument checks are local. */
    {
        bb_map_t *m = NULL;
        int64_t idx[3] = {2, 0, 1};
        CHECK_MSG(bb_map_create(3, idx, 3, 0, &m) == BB_OK && bb_map_count(m) == 3
                      && bb_map_elements(m) == 3 && bb_map_epoch(m) == 0
                      && bb_map_indices(m)[0] == 2,
                  "map create");
        bb_map_free(m);
        CHECK_MSG(bb_map_create(-1, idx, 3, 0, &m) == BB_ERR_ARG, "negative N");
        CHECK_MSG(bb_map_create(3, idx, 3, -1, &m) == BB_ERR_ARG, "negative epoch");
        CHECK_MSG(bb_map_create(3, NULL, 3, 0, &m) == BB_ERR_ARG, "NULL indices");
        CHECK_MSG(bb_map_create((int64_t)INT32_MAX + 1, idx, 3, 0, &m) == BB_ERR_ARG, "N too big");
    }

    printf("%d checks, %d failed\n", passed + failed, failed);
    return check_verdict();
}
