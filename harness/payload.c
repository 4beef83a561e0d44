/* payload.c: the one payload fixture of the point-to-point benchmarks:
 * bytes from (sequence, offset), generated and checked outside MPI. */
#include "config.h"
#include "runner.h"

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
