/* payload.c: the one payload of the point-to-point benchmarks: bytes from
 * (sequence, offset), generated and checked outside MPI, and the fixture
 * (provider, consumer, compute batches) every benchmark that drives a
 * transfer phase lends it through (bbench-transfer, bbench-overlap). */
#include "config.h"
#include "runner.h"

#include <stdlib.h>
#include <string.h>

/* Word k of sequence s: a mix of s plus k times an odd constant, so that
 * consecutive words differ in every byte and the fill is one add per word
 * (the fixture should cost little next to the transfer). */
#define PATTERN_STEP 0x9E3779B97F4A7C15u

static uint64_t pattern_base(int64_t seq)
{
    uint64_t x = (uint64_t)seq * 0xBF58476D1CE4E5B9u + 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

/* The little-endian byte order of the pattern, on any host. */
static uint64_t le64(uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(w);
#else
    return w;
#endif
}

unsigned char bb_payload_byte(int64_t seq, int64_t i)
{
    uint64_t word = pattern_base(seq) + (uint64_t)(i / 8) * PATTERN_STEP;
    return (unsigned char)(word >> (8 * (i % 8)));
}

void bb_payload_fill(unsigned char *buf, int64_t n, int64_t seq)
{
    int64_t words = n / 8;
    uint64_t w = pattern_base(seq);
    for (int64_t k = 0; k < words; k++, w += PATTERN_STEP) {
        uint64_t v = le64(w);
        memcpy(buf + 8 * k, &v, 8);
    }
    for (int64_t i = 8 * words; i < n; i++)
        buf[i] = bb_payload_byte(seq, i);
}

int64_t bb_payload_check(const unsigned char *buf, int64_t n, int64_t seq)
{
    int64_t bad = 0, words = n / 8;
    uint64_t sum_got = 0, sum_want = 0, want = pattern_base(seq);
    for (int64_t k = 0; k < words; k++, want += PATTERN_STEP) {
        uint64_t got;
        memcpy(&got, buf + 8 * k, 8);
        got = le64(got);
        sum_got += got * (uint64_t)(2 * k + 1);
        sum_want += want * (uint64_t)(2 * k + 1);
        if (got != want)
            for (int j = 0; j < 8; j++)
                bad += (unsigned char)(got >> (8 * j)) != (unsigned char)(want >> (8 * j));
    }
    for (int64_t i = 8 * words; i < n; i++) {
        unsigned char want_byte = bb_payload_byte(seq, i);
        bad += buf[i] != want_byte;
        sum_got += (uint64_t)buf[i] * (uint64_t)(2 * i + 1);
        sum_want += (uint64_t)want_byte * (uint64_t)(2 * i + 1);
    }
    if (sum_got != sum_want && bad == 0)
        bad = 1;
    return bad;
}

/* ------------------------------------------------------------------------ */
/* The payload fixture */

static int fixture_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    bb_xfer_fixture_t *f = arg;
    if (f->refuse)
        return 1;
    /* The phase presents its current sequence in this ticket. */
    if (!f->sampled)
        bb_payload_fill(f->src, f->nbytes, f->expect_seq);
    *data_out = f->src;
    *len_out = f->nbytes;
    bb_run_lent(f->run);
    return 0;
}

static void fixture_release(void *arg, const void *data)
{
    bb_xfer_fixture_t *f = arg;
    (void)data;
    bb_run_returned(f->run);
}

static int fixture_consume(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    bb_xfer_fixture_t *f = arg;
    const unsigned char *d = data;
    int64_t bad = 0;
    *value_out = NULL;
    if (!f->sampled)
        bad = bb_payload_check(data, nbytes, f->expect_seq);
    for (int i = 0; f->sampled && nbytes > 0 && i < 3; i++) {
        int64_t at = i == 0 ? 0 : i == 1 ? nbytes / 2 : nbytes - 1;
        bad += d[at] != bb_payload_byte(0, at);
    }
    f->bad_bytes += bad;
    return (bad > 0 || f->fail_consumer) ? 1 : 0;
}

static int fixture_compute(void *arg, int64_t index)
{
    bb_xfer_fixture_t *f = arg;
    f->sink += bb_compute_run(f->iterations);
    return index == f->fail_batch ? 1 : 0;
}

unsigned char *bb_payload_alloc_touched(int64_t n)
{
    unsigned char *p = malloc((size_t)n);
    if (p != NULL)
        memset(p, 0, (size_t)n);
    return p;
}

void bb_xfer_fixture_setup(bb_run_t *run, bb_xfer_fixture_t *fx, int64_t max_bytes,
                           int sampled)
{
    fx->run = run;
    fx->sampled = sampled;
    if ((fx->src = bb_payload_alloc_touched(max_bytes)) == NULL)
        bb_run_fatal(run, "cannot allocate %lld bytes", (long long)max_bytes);
    if (sampled)
        bb_payload_fill(fx->src, max_bytes, 0);
    fx->provider = (bb_transfer_provider_t){ fixture_prepare, fixture_release, fx };
    fx->consumer = (bb_transfer_consumer_t){ fixture_consume, NULL, fx };
    fx->compute = (bb_transfer_compute_t){ fixture_compute, fx };
}

void bb_xfer_fixture_free(bb_xfer_fixture_t *fx)
{
    free(fx->src);
    fx->src = NULL;
}
