/* cli.c: option values shared by every executable: sizes with suffixes,
 * lists and ranges of sizes, bounded doubles and "RANK:VALUE" prefixes.
 *
 * Every parser takes the whole string (trailing text is an error), uses
 * strtoll/strtod with end pointers and overflow checks, and on failure
 * writes a message that quotes the offending text and says what is wrong.
 *
 * Size grammar (a whole number of bytes or elements):
 *   DIGITS[.DIGITS][SUFFIX | eEXP]
 *   SUFFIX: K/Ki = 2^10, M/Mi = 2^20, G/Gi = 2^30, case-insensitive
 *   eEXP:   exact decimal exponent: 1e6 = 1000000, 1.5e3 = 1500
 * The value must come out whole: 1.5K = 1536 is accepted, 1.5, 1.1K and
 * 1e-3 are not.
 *
 * Lists: comma-separated items, each a size or a range LO:HI[:STEP] with
 * STEP xF (multiply by F >= 2; default x2) or +D (add D >= 1).  A range
 * holds LO and every further step that does not exceed HI, in increasing
 * order.  A multiplicative range from 0 goes 0, 1, F, F^2, ... (0 times F
 * would never advance).  At most BB_CLI_LIST_MAX values in all. */
#include "config.h"
#include "private/bbtext.h"
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BB_CLI_LIST_MAX 4096

/* The why-message of a failed token; the callers add the quoted text.
 * Every quoted piece of user text is clipped to BB_CLIP_CHARS (and marked
 * "..."), so that the longest message still fits the 256-byte buffers of
 * the programs with its reason intact. */
#define BB_WHY_LEN 256
#define BB_CLIP_CHARS 24

typedef struct bb_clip { char s[BB_CLIP_CHARS + 4]; } bb_clip_t;

/* text, or its first BB_CLIP_CHARS characters and "...". */
static const char *bb_clip(const char *text, size_t len, bb_clip_t *buf)
{
    if (len <= BB_CLIP_CHARS) {
        memcpy(buf->s, text, len);
        buf->s[len] = '\0';
    } else {
        memcpy(buf->s, text, BB_CLIP_CHARS);
        memcpy(buf->s + BB_CLIP_CHARS, "...", 4);
    }
    return buf->s;
}
#define BB_CLIP(text, buf) bb_clip((text), strlen(text), (buf))

static int bb_is_digit(char c) { return c >= '0' && c <= '9'; }

/* a * b into *out unless it exceeds INT64_MAX (a, b >= 0). */
static int bb_mul_ok(int64_t a, int64_t b, int64_t *out)
{
    if (a != 0 && b > INT64_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

/* Parse one size token (NUL-terminated) into *out.  On failure, why says
 * what is wrong without quoting the token. */
static int bb_size_token(const char *tok, int64_t *out, char *why)
{
    const char *p = tok;
    char *end = NULL;
    int64_t num = 0;
    int frac_digits = 0;   /* digits after the point, folded into num */
    int64_t exp10 = 0;     /* decimal exponent from eEXP */
    int bin_shift = 0;     /* 10, 20 or 30 from a suffix */

    if (*p == '\0') {
        snprintf(why, BB_WHY_LEN, "empty value");
        return 0;
    }
    /* strtoll would accept blanks and signs; a size has neither. */
    if (!bb_is_digit(*p)) {
        snprintf(why, BB_WHY_LEN, "expected a nonnegative whole number");
        return 0;
    }
    errno = 0;
    long long ip = strtoll(p, &end, 10);
    if (errno == ERANGE || ip > INT64_MAX) {
        snprintf(why, BB_WHY_LEN, "too large (the maximum is %" PRId64 ")",
                 (int64_t)INT64_MAX);
        return 0;
    }
    num = (int64_t)ip;
    p = end;

    if (*p == '.') {
        p++;
        if (!bb_is_digit(*p)) {
            snprintf(why, BB_WHY_LEN, "expected digits after '.'");
            return 0;
        }
        for (; bb_is_digit(*p); p++) {
            if (!bb_mul_ok(num, 10, &num) || num > INT64_MAX - (*p - '0')) {
                snprintf(why, BB_WHY_LEN, "too many digits");
                return 0;
            }
            num += *p - '0';
            frac_digits++;
        }
    }

    if (*p == 'e' || *p == 'E') {
        p++;
        if (!(bb_is_digit(*p)
              || ((*p == '+' || *p == '-') && bb_is_digit(p[1])))) {
            snprintf(why, BB_WHY_LEN, "expected digits in the exponent");
            return 0;
        }
        errno = 0;
        long long e = strtoll(p, &end, 10);
        p = end;
        /* Beyond +-1000 nothing nonzero fits or stays whole; clamping keeps
         * the arithmetic below small.  An out-of-range exponent keeps its
         * sign (strtoll gives LLONG_MIN for a huge negative one). */
        if (e > 1000)
            e = 1000;
        if (e < -1000)
            e = -1000;
        exp10 = (int64_t)e;
    } else if (*p == 'k' || *p == 'K' || *p == 'm' || *p == 'M'
               || *p == 'g' || *p == 'G') {
        bin_shift = (*p == 'k' || *p == 'K') ? 10
                    : (*p == 'm' || *p == 'M') ? 20 : 30;
        p++;
        if (*p == 'i' || *p == 'I')
            p++;
    }
    if (*p != '\0') {
        bb_clip_t c;
        snprintf(why, BB_WHY_LEN, "unexpected \"%s\" after the number "
                 "(suffix K, Ki, M, Mi, G, Gi or an exponent: 1e6)",
                 BB_CLIP(p, &c));
        return 0;
    }

    /* value = num * 10^(exp10 - frac_digits) * 2^bin_shift, exactly. */
    int64_t shift10 = exp10 - frac_digits;
    if (num != 0) {
        for (; shift10 < 0 && num % 10 == 0; shift10++)
            num /= 10;
        if (shift10 < 0) {
            /* A fraction left: only a binary suffix can still make it whole
             * (1.5K); multiply first, then divide exactly. */
            if (!bb_mul_ok(num, (int64_t)1 << bin_shift, &num)) {
                snprintf(why, BB_WHY_LEN, "too large");
                return 0;
            }
            bin_shift = 0;
            for (; shift10 < 0 && num % 10 == 0; shift10++)
                num /= 10;
            if (shift10 < 0) {
                snprintf(why, BB_WHY_LEN, "not a whole number");
                return 0;
            }
        }
        for (; shift10 > 0; shift10--)
            if (!bb_mul_ok(num, 10, &num)) {
                snprintf(why, BB_WHY_LEN, "too large (the maximum is %" PRId64
                         ")", (int64_t)INT64_MAX);
                return 0;
            }
        if (!bb_mul_ok(num, (int64_t)1 << bin_shift, &num)) {
            snprintf(why, BB_WHY_LEN, "too large (the maximum is %" PRId64 ")",
                     (int64_t)INT64_MAX);
            return 0;
        }
    }
    *out = num;
    return 1;
}

static int bb_in_bounds(int64_t v, int64_t min, int64_t max, char *why)
{
    if (v < min) {
        snprintf(why, BB_WHY_LEN, "%" PRId64 " is below the minimum %" PRId64,
                 v, min);
        return 0;
    }
    if (v > max) {
        snprintf(why, BB_WHY_LEN, "%" PRId64 " is above the maximum %" PRId64,
                 v, max);
        return 0;
    }
    return 1;
}

bb_status_t bb_cli_parse_size(const char *text, int64_t min, int64_t max,
                              int64_t *value_out, char *err, size_t errlen)
{
    char why[BB_WHY_LEN];
    int64_t v = 0;

    if (text == NULL || value_out == NULL) {
        bb_errorf(err, errlen, "invalid size: no text");
        return BB_ERR_ARG;
    }
    if (!bb_size_token(text, &v, why) || !bb_in_bounds(v, min, max, why)) {
        bb_clip_t c;
        bb_errorf(err, errlen, "invalid size \"%s\": %s", BB_CLIP(text, &c), why);
        return BB_ERR_PARSE;
    }
    *value_out = v;
    return BB_OK;
}

/* A growing array of values, capped at BB_CLI_LIST_MAX. */
typedef struct bb_vec {
    int64_t *v;
    size_t n, cap;
} bb_vec_t;

/* 1 ok, 0 too many values, -1 out of memory. */
static int bb_vec_push(bb_vec_t *vec, int64_t value)
{
    if (vec->n >= BB_CLI_LIST_MAX)
        return 0;
    if (vec->n == vec->cap) {
        size_t cap = vec->cap ? 2 * vec->cap : 16;
        int64_t *nv = realloc(vec->v, cap * sizeof *nv);
        if (nv == NULL)
            return -1;
        vec->v = nv;
        vec->cap = cap;
    }
    vec->v[vec->n++] = value;
    return 1;
}

/* One range item "LO:HI[:STEP]" (item is a writable copy).  Returns a
 * status; why says what is wrong. */
static bb_status_t bb_range_item(char *item, int64_t min, int64_t max,
                                 bb_vec_t *vec, char *why)
{
    char *lo_s = item;
    char *hi_s = strchr(lo_s, ':');
    *hi_s++ = '\0';
    char *step_s = strchr(hi_s, ':');
    if (step_s != NULL) {
        *step_s++ = '\0';
        if (strchr(step_s, ':') != NULL) {
            snprintf(why, BB_WHY_LEN, "a range is LO:HI or LO:HI:STEP");
            return BB_ERR_PARSE;
        }
    }

    char sub[BB_WHY_LEN];
    bb_clip_t c;
    int64_t lo = 0, hi = 0;
    if (!bb_size_token(lo_s, &lo, sub) || !bb_in_bounds(lo, min, max, sub)) {
        snprintf(why, BB_WHY_LEN, "LO \"%s\": %.200s", BB_CLIP(lo_s, &c), sub);
        return BB_ERR_PARSE;
    }
    if (!bb_size_token(hi_s, &hi, sub) || !bb_in_bounds(hi, min, max, sub)) {
        snprintf(why, BB_WHY_LEN, "HI \"%s\": %.200s", BB_CLIP(hi_s, &c), sub);
        return BB_ERR_PARSE;
    }
    if (hi < lo) {
        snprintf(why, BB_WHY_LEN, "HI %" PRId64 " is below LO %" PRId64, hi, lo);
        return BB_ERR_PARSE;
    }

    int multiply = 1;
    int64_t step = 2;
    if (step_s != NULL) {
        if (step_s[0] == 'x' || step_s[0] == 'X') {
            char *end = NULL;
            if (!bb_is_digit(step_s[1])) {
                snprintf(why, BB_WHY_LEN, "step \"%s\": expected xF with a "
                         "whole factor F >= 2", BB_CLIP(step_s, &c));
                return BB_ERR_PARSE;
            }
            errno = 0;
            long long f = strtoll(step_s + 1, &end, 10);
            if (*end != '\0' || errno == ERANGE || f < 2) {
                snprintf(why, BB_WHY_LEN, "step \"%s\": expected xF with a "
                         "whole factor F >= 2", BB_CLIP(step_s, &c));
                return BB_ERR_PARSE;
            }
            step = (int64_t)f;
        } else if (step_s[0] == '+') {
            multiply = 0;
            if (!bb_size_token(step_s + 1, &step, sub) || step < 1) {
                snprintf(why, BB_WHY_LEN, "step \"%s\": expected +D with a "
                         "whole increment D >= 1", BB_CLIP(step_s, &c));
                return BB_ERR_PARSE;
            }
        } else {
            snprintf(why, BB_WHY_LEN, "step \"%s\": expected xF (multiply) "
                     "or +D (add)", BB_CLIP(step_s, &c));
            return BB_ERR_PARSE;
        }
    }

    for (int64_t v = lo;;) {
        int r = bb_vec_push(vec, v);
        if (r < 0)
            return BB_ERR_NOMEM;
        if (r == 0) {
            snprintf(why, BB_WHY_LEN, "more than %d values", BB_CLI_LIST_MAX);
            return BB_ERR_PARSE;
        }
        /* Stop before the next value would pass HI (or overflow). */
        if (multiply) {
            if (v == 0) {
                if (hi < 1)
                    break;
                v = 1;
            } else {
                if (v > hi / step)
                    break;
                v *= step;
            }
        } else {
            if (v > hi - step)
                break;
            v += step;
        }
    }
    return BB_OK;
}

static int bb_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* BB_OK when the n values are distinct; BB_ERR_PARSE with the smallest
 * repeated value in *twice_out; BB_ERR_NOMEM. */
static bb_status_t bb_find_repeat(const int64_t *v, size_t n, int64_t *twice_out)
{
    if (n < 2)
        return BB_OK;
    int64_t *sorted = malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return BB_ERR_NOMEM;
    memcpy(sorted, v, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, bb_cmp_i64);
    bb_status_t st = BB_OK;
    for (size_t i = 1; i < n; i++)
        if (sorted[i] == sorted[i - 1]) {
            *twice_out = sorted[i];
            st = BB_ERR_PARSE;
            break;
        }
    free(sorted);
    return st;
}

bb_status_t bb_cli_parse_size_list(const char *text, int64_t min, int64_t max,
                                   bb_size_list_t *list_out, char *err,
                                   size_t errlen)
{
    char why[BB_WHY_LEN];
    bb_clip_t ct;
    bb_status_t st = BB_OK;
    bb_vec_t vec = {NULL, 0, 0};

    if (text == NULL || list_out == NULL) {
        bb_errorf(err, errlen, "invalid size list: no text");
        return BB_ERR_ARG;
    }
    if (*text == '\0') {
        bb_errorf(err, errlen, "invalid size list \"\": empty");
        return BB_ERR_PARSE;
    }
    char *copy = strdup(text);
    if (copy == NULL) {
        bb_errorf(err, errlen, "out of memory parsing \"%s\"", BB_CLIP(text, &ct));
        return BB_ERR_NOMEM;
    }

    char *item = copy;
    for (;;) {
        char *comma = strchr(item, ',');
        if (comma != NULL)
            *comma = '\0';
        const char *item_text = text + (item - copy);
        size_t item_len = strlen(item);

        if (item_len == 0) {
            bb_errorf(err, errlen, "invalid size list \"%s\": empty item at "
                      "offset %zu", BB_CLIP(text, &ct), (size_t)(item - copy));
            st = BB_ERR_PARSE;
            goto free_vec;
        }
        if (strchr(item, ':') != NULL) {
            st = bb_range_item(item, min, max, &vec, why);
        } else {
            int64_t v = 0;
            if (!bb_size_token(item, &v, why) || !bb_in_bounds(v, min, max, why)) {
                st = BB_ERR_PARSE;
            } else {
                int r = bb_vec_push(&vec, v);
                if (r < 0) {
                    st = BB_ERR_NOMEM;
                } else if (r == 0) {
                    snprintf(why, sizeof why, "more than %d values",
                             BB_CLI_LIST_MAX);
                    st = BB_ERR_PARSE;
                }
            }
        }
        if (st == BB_ERR_NOMEM) {
            bb_errorf(err, errlen, "out of memory parsing \"%s\"",
                      BB_CLIP(text, &ct));
            goto free_vec;
        }
        if (st != BB_OK) {
            /* Quote the item (from the caller's text, intact) and the list
             * when they differ. */
            size_t text_len = strlen(text);
            const char *kind = memchr(item_text, ':', item_len) ? "range" : "size";
            bb_clip_t ci;
            if (item_len == text_len)
                bb_errorf(err, errlen, "invalid %s \"%s\": %s", kind,
                          BB_CLIP(text, &ct), why);
            else
                bb_errorf(err, errlen, "invalid %s \"%s\" in size list "
                          "\"%s\": %s", kind, bb_clip(item_text, item_len, &ci),
                          BB_CLIP(text, &ct), why);
            goto free_vec;
        }
        if (comma == NULL)
            break;
        item = comma + 1;
    }

    free(copy);
    /* Every value once: a point measured twice is a record that compare
     * refuses, and always a typing mistake. */
    int64_t twice = 0;
    st = bb_find_repeat(vec.v, vec.n, &twice);
    if (st == BB_ERR_NOMEM) {
        bb_errorf(err, errlen, "out of memory parsing \"%s\"", BB_CLIP(text, &ct));
        free(vec.v);
        return st;
    }
    if (st != BB_OK) {
        bb_errorf(err, errlen, "invalid size list \"%s\": %" PRId64 " appears "
                  "more than once (give each value once)", BB_CLIP(text, &ct),
                  twice);
        free(vec.v);
        return st;
    }
    list_out->values = vec.v;
    list_out->n = vec.n;
    return BB_OK;

free_vec:
    free(vec.v);
    free(copy);
    return st;
}

void bb_size_list_clear(bb_size_list_t *list)
{
    if (list == NULL)
        return;
    free(list->values);
    list->values = NULL;
    list->n = 0;
}

bb_status_t bb_cli_parse_double(const char *text, double min, double max,
                                double *value_out, char *err, size_t errlen)
{
    bb_clip_t c;
    if (text == NULL || value_out == NULL) {
        bb_errorf(err, errlen, "invalid number: no text");
        return BB_ERR_ARG;
    }
    /* strtod skips leading blanks; an option value has none. */
    if (*text == '\0' || isspace((unsigned char)*text)) {
        bb_errorf(err, errlen, "invalid number \"%s\": expected a number",
                  BB_CLIP(text, &c));
        return BB_ERR_PARSE;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text) {
        bb_errorf(err, errlen, "invalid number \"%s\": expected a number",
                  BB_CLIP(text, &c));
        return BB_ERR_PARSE;
    }
    /* strtod also reads hexadecimal, inf and nan; every number of bbench
     * is decimal, as sizes are (which refuse 0x10). */
    for (const char *q = text; q < end; q++)
        if (!bb_is_digit(*q) && *q != '.' && *q != 'e' && *q != 'E'
            && *q != '+' && *q != '-') {
            bb_errorf(err, errlen, "invalid number \"%s\": not a decimal "
                      "number (such as 0.5 or 1e-3)", BB_CLIP(text, &c));
            return BB_ERR_PARSE;
        }
    if (*end != '\0') {
        bb_clip_t ce;
        bb_errorf(err, errlen, "invalid number \"%s\": unexpected \"%s\" after "
                  "the number", BB_CLIP(text, &c), BB_CLIP(end, &ce));
        return BB_ERR_PARSE;
    }
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0)) {
        bb_errorf(err, errlen, "invalid number \"%s\": too large",
                  BB_CLIP(text, &c));
        return BB_ERR_PARSE;
    }
    if (errno == ERANGE) {  /* underflow: a nonzero text that rounds away */
        bb_errorf(err, errlen, "invalid number \"%s\": too small (nonzero, "
                  "but below the smallest double)", BB_CLIP(text, &c));
        return BB_ERR_PARSE;
    }
    if (v < min || v > max) {
        bb_errorf(err, errlen, "invalid number \"%s\": outside [%g, %g]",
                  BB_CLIP(text, &c), min, max);
        return BB_ERR_PARSE;
    }
    *value_out = v;
    return BB_OK;
}

bb_status_t bb_cli_parse_rank_prefix(const char *text, int ranks, int *rank_out,
                                     const char **rest_out, char *err,
                                     size_t errlen)
{
    bb_clip_t c;
    if (text == NULL || rank_out == NULL || rest_out == NULL || ranks < 1) {
        bb_errorf(err, errlen, "invalid RANK:VALUE: no text");
        return BB_ERR_ARG;
    }
    if (!bb_is_digit(*text)) {
        bb_errorf(err, errlen, "invalid \"%s\": expected RANK or RANK:VALUE "
                  "with a rank in [0, %d)", BB_CLIP(text, &c), ranks);
        return BB_ERR_PARSE;
    }
    char *end = NULL;
    errno = 0;
    long long r = strtoll(text, &end, 10);
    if (*end != ':' && *end != '\0') {
        bb_clip_t ce;
        bb_errorf(err, errlen, "invalid \"%s\": expected RANK or RANK:VALUE "
                  "(unexpected \"%s\" after the rank)", BB_CLIP(text, &c),
                  BB_CLIP(end, &ce));
        return BB_ERR_PARSE;
    }
    if (errno == ERANGE || r >= ranks) {
        bb_clip_t cr;
        bb_errorf(err, errlen, "invalid \"%s\": rank %s is not in [0, %d)",
                  BB_CLIP(text, &c), bb_clip(text, (size_t)(end - text), &cr),
                  ranks);
        return BB_ERR_PARSE;
    }
    /* "R:" is a value forgotten; a bare "R" is a rank alone (rest ""). */
    if (*end == ':' && end[1] == '\0') {
        bb_errorf(err, errlen, "invalid \"%s\": nothing after ':'",
                  BB_CLIP(text, &c));
        return BB_ERR_PARSE;
    }
    *rank_out = (int)r;
    *rest_out = *end == ':' ? end + 1 : end;
    return BB_OK;
}

bb_status_t bb_cli_parse_rank_seconds(const char *text, int ranks, double max_s,
                                      int *rank_out, double *seconds_out,
                                      char *err, size_t errlen)
{
    int rank;
    double seconds;
    const char *rest;
    bb_status_t st = bb_cli_parse_rank_prefix(text, ranks, &rank, &rest, err, errlen);
    if (st != BB_OK)
        return st;
    if (seconds_out == NULL) {
        bb_errorf(err, errlen, "invalid RANK:SECONDS: no output");
        return BB_ERR_ARG;
    }
    st = bb_cli_parse_double(rest, 0.0, max_s, &seconds, err, errlen);
    if (st != BB_OK)
        return st;
    *rank_out = rank;
    *seconds_out = seconds;
    return BB_OK;
}

void bb_cli_format_size(int64_t value, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return;
    /* The largest binary suffix that divides exactly, so the text parses
     * back to the same value. */
    static const struct { int shift; char suffix; } units[] = {
        {30, 'G'}, {20, 'M'}, {10, 'K'}
    };
    if (value > 0) {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            int64_t unit = (int64_t)1 << units[i].shift;
            if (value % unit == 0) {
                snprintf(buf, len, "%" PRId64 "%c", value / unit,
                         units[i].suffix);
                return;
            }
        }
    }
    snprintf(buf, len, "%" PRId64, value);
}
