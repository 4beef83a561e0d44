/* test-cli: sizes, suffixes, exponents, lists and ranges, good and bad, with
 * exact expected values; doubles, rank prefixes and size formatting.
 * Serial: no MPI_Init. */
#include "config.h"
#include "common/cli.h"
#include "../check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define KI ((int64_t)1 << 10)
#define MI ((int64_t)1 << 20)
#define GI ((int64_t)1 << 30)

/* A size that must parse to want within [0, INT64_MAX]. */
static void good_size(int line, const char *text, int64_t want)
{
    char err[256] = "";
    int64_t got = -12345;
    bb_status_t st = bb_cli_parse_size(text, 0, INT64_MAX, &got, err, sizeof err);
    check_at(st == BB_OK && got == want, line,
             "size \"%s\": status %d value %" PRId64 ", expected %" PRId64 " (%s)",
             text, (int)st, got, want, err);
}

/* A size that must fail with a message that quotes the text and contains
 * the fragment. */
static void bad_size(int line, const char *text, int64_t min, int64_t max,
                     const char *fragment)
{
    char err[256] = "";
    char quoted[128];
    int64_t got = -12345;
    bb_status_t st = bb_cli_parse_size(text, min, max, &got, err, sizeof err);
    snprintf(quoted, sizeof quoted, "\"%s\"", text);
    check_at(st == BB_ERR_PARSE && got == -12345 && strstr(err, quoted) != NULL
             && strstr(err, fragment) != NULL, line,
             "size \"%s\": status %d, message \"%s\" (wanted failure naming %s "
             "and \"%s\")", text, (int)st, err, quoted, fragment);
}

/* A list that must parse to exactly want[0..n). */
static void good_list(int line, const char *text, int64_t min, int64_t max,
                      const int64_t *want, size_t n)
{
    char err[256] = "";
    bb_size_list_t list = {NULL, 0};
    bb_status_t st = bb_cli_parse_size_list(text, min, max, &list, err, sizeof err);
    int same = st == BB_OK && list.n == n;
    for (size_t i = 0; same && i < n; i++)
        same = list.values[i] == want[i];
    check_at(same, line, "list \"%s\": status %d, %zu values (expected %zu) %s",
             text, (int)st, list.n, n, err);
    if (!same && st == BB_OK) {
        printf("    got:");
        for (size_t i = 0; i < list.n && i < 20; i++)
            printf(" %" PRId64, list.values[i]);
        printf("\n");
    }
    bb_size_list_clear(&list);
    check_at(list.values == NULL && list.n == 0, line, "clear resets the list");
}

static void bad_list(int line, const char *text, int64_t min, int64_t max,
                     const char *fragment)
{
    char err[512] = "";
    char quoted[128];
    bb_size_list_t list = {NULL, 777};
    bb_status_t st = bb_cli_parse_size_list(text, min, max, &list, err, sizeof err);
    snprintf(quoted, sizeof quoted, "\"%s\"", text);
    check_at(st == BB_ERR_PARSE && list.values == NULL && list.n == 777
             && strstr(err, quoted) != NULL && strstr(err, fragment) != NULL, line,
             "list \"%s\": status %d, message \"%s\" (wanted failure naming %s "
             "and \"%s\")", text, (int)st, err, quoted, fragment);
    if (st == BB_OK)
        bb_size_list_clear(&list);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_sizes(void)
{
    good_size(__LINE__, "0", 0);
    good_size(__LINE__, "8", 8);
    good_size(__LINE__, "007", 7);
    good_size(__LINE__, "4K", 4 * KI);
    good_size(__LINE__, "4k", 4 * KI);
    good_size(__LINE__, "4Ki", 4 * KI);
    good_size(__LINE__, "4kI", 4 * KI);
    good_size(__LINE__, "1M", MI);
    good_size(__LINE__, "1Mi", MI);
    good_size(__LINE__, "1mi", MI);
    good_size(__LINE__, "3G", 3 * GI);
    good_size(__LINE__, "2gi", 2 * GI);
    good_size(__LINE__, "1e6", 1000000);
    good_size(__LINE__, "1E3", 1000);
    good_size(__LINE__, "25e2", 2500);
    good_size(__LINE__, "1.5e3", 1500);
    good_size(__LINE__, "1000e-3", 1);
    good_size(__LINE__, "1e+2", 100);
    good_size(__LINE__, "0e99", 0);
    good_size(__LINE__, "1.5K", 1536);
    good_size(__LINE__, "2.0", 2);
    good_size(__LINE__, "8589934591G", (int64_t)8589934591 * GI);
    good_size(__LINE__, "9223372036854775807", INT64_MAX);

    bad_size(__LINE__, "", 0, 100, "empty");
    bad_size(__LINE__, "abc", 0, 100, "nonnegative whole number");
    bad_size(__LINE__, "-1", -10, 100, "nonnegative whole number");
    bad_size(__LINE__, "+5", 0, 100, "nonnegative whole number");
    bad_size(__LINE__, " 5", 0, 100, "nonnegative whole number");
    bad_size(__LINE__, "5 ", 0, 100, "unexpected \" \"");
    bad_size(__LINE__, "12abc", 0, 100, "unexpected \"abc\"");
    bad_size(__LINE__, "4KB", 0, INT64_MAX, "unexpected \"B\"");
    bad_size(__LINE__, "4T", 0, INT64_MAX, "unexpected \"T\"");
    bad_size(__LINE__, "0x10", 0, 100, "unexpected \"x10\"");
    bad_size(__LINE__, "1.5", 0, 100, "not a whole number");
    bad_size(__LINE__, "1e-3", 0, 100, "not a whole number");
    bad_size(__LINE__, "1.1K", 0, INT64_MAX, "not a whole number");
    bad_size(__LINE__, "1.", 0, 100, "digits after '.'");
    bad_size(__LINE__, "1e", 0, 100, "exponent");
    bad_size(__LINE__, "1e3K", 0, INT64_MAX, "unexpected \"K\"");
    bad_size(__LINE__, "9223372036854775808", 0, INT64_MAX, "too large");
    bad_size(__LINE__, "8589934592G", 0, INT64_MAX, "too large");
    bad_size(__LINE__, "1e19", 0, INT64_MAX, "too large");
    bad_size(__LINE__, "1e99999999999999999999", 0, INT64_MAX, "too large");
    bad_size(__LINE__, "2M", 0, MI, "2097152 is above the maximum 1048576");
    bad_size(__LINE__, "2", 3, 100, "2 is below the minimum 3");

    /* NULL text is an argument error, not a crash. */
    int64_t v = 0;
    check_at(bb_cli_parse_size(NULL, 0, 1, &v, NULL, 0) == BB_ERR_ARG, __LINE__,
             "NULL text");
    /* err may be NULL or tiny: still fails cleanly, NUL-terminated. */
    check_at(bb_cli_parse_size("zz", 0, 1, &v, NULL, 0) == BB_ERR_PARSE, __LINE__,
             "NULL err");
    char tiny[4] = "xxx";
    check_at(bb_cli_parse_size("zz", 0, 1, &v, tiny, sizeof tiny) == BB_ERR_PARSE
             && strlen(tiny) == 3, __LINE__, "truncated err \"%s\"", tiny);
}

static void test_lists(void)
{
    static const int64_t l1[] = {1, 8, 64};
    good_list(__LINE__, "1,8,64", 0, INT64_MAX, l1, N(l1));
    static const int64_t l2[] = {4096};
    good_list(__LINE__, "4K", 0, INT64_MAX, l2, N(l2));
    static const int64_t l3[] = {1, 2, 4, 8, 16};
    good_list(__LINE__, "1:16", 0, INT64_MAX, l3, N(l3));
    static const int64_t l4[] = {1, 4, 16, 64, 256, 1024};
    good_list(__LINE__, "1:1K:x4", 0, INT64_MAX, l4, N(l4));
    /* HI need not be on the progression: stop before passing it. */
    static const int64_t l5[] = {3, 6, 12};
    good_list(__LINE__, "3:20", 0, INT64_MAX, l5, N(l5));
    static const int64_t l6[] = {8, 16, 24, 32};
    good_list(__LINE__, "8:32:+8", 0, INT64_MAX, l6, N(l6));
    static const int64_t l7[] = {0, 5, 10};
    good_list(__LINE__, "0:12:+5", 0, INT64_MAX, l7, N(l7));
    /* From 0 with a factor: 0, 1, then the progression. */
    static const int64_t l8[] = {0, 1, 2, 4, 8};
    good_list(__LINE__, "0:8", 0, INT64_MAX, l8, N(l8));
    static const int64_t l9[] = {0, 1, 4, 16};
    good_list(__LINE__, "0:16:x4", 0, INT64_MAX, l9, N(l9));
    static const int64_t l10[] = {0};
    good_list(__LINE__, "0:0", 0, INT64_MAX, l10, N(l10));
    static const int64_t l11[] = {7};
    good_list(__LINE__, "7:7:x2", 0, INT64_MAX, l11, N(l11));
    static const int64_t l12[] = {1, 2, 4, 100, 1000, 2000};
    good_list(__LINE__, "1:4,100,1e3:2e3:+1000", 0, INT64_MAX, l12, N(l12));
    static const int64_t l13[] = {3, 1, 2};
    good_list(__LINE__, "3,1,2", 0, INT64_MAX, l13, N(l13)); /* order kept */
    static const int64_t l14[] = {MI, 2 * MI};
    good_list(__LINE__, "1Mi:2m:X2", 0, INT64_MAX, l14, N(l14));
    /* Near INT64_MAX the progression stops without overflowing. */
    static const int64_t l15[] = {(int64_t)1 << 62};
    good_list(__LINE__, "4611686018427387904:9223372036854775807", 0,
              INT64_MAX, l15, N(l15));
    static const int64_t l16[] = {INT64_MAX - 1, INT64_MAX};
    good_list(__LINE__, "9223372036854775806:9223372036854775807:+1", 0,
              INT64_MAX, l16, N(l16));

    /* The default sum sweep: 1:1M is 21 values ending at 2^20. */
    char err[256];
    bb_size_list_t list = {NULL, 0};
    check_at(bb_cli_parse_size_list("1:1M", 0, INT32_MAX, &list, err, sizeof err)
             == BB_OK && list.n == 21 && list.values[20] == MI, __LINE__,
             "1:1M has 21 values ending at 1M");
    bb_size_list_clear(&list);
    /* Exactly the cap is allowed. */
    check_at(bb_cli_parse_size_list("1:4096:+1", 0, INT64_MAX, &list, err,
                                    sizeof err) == BB_OK && list.n == 4096
             && list.values[4095] == 4096, __LINE__, "4096 values allowed: %s", err);
    bb_size_list_clear(&list);
    bb_size_list_clear(&list); /* twice is harmless */
    bb_size_list_clear(NULL);

    bad_list(__LINE__, "", 0, 100, "empty");
    bad_list(__LINE__, "1,,8", 0, 100, "empty item");
    bad_list(__LINE__, "1,8,", 0, 100, "empty item");
    bad_list(__LINE__, ",1", 0, 100, "empty item");
    bad_list(__LINE__, "1,x,8", 0, 100, "invalid size \"x\" in size list");
    bad_list(__LINE__, "16:1", 0, 100, "invalid range \"16:1\": HI 1 is below LO 16");
    bad_list(__LINE__, "1,16:1", 0, 100, "invalid range \"16:1\" in size list");
    bad_list(__LINE__, "1:16:x1", 0, 100, "F >= 2");
    bad_list(__LINE__, "1:16:x0", 0, 100, "F >= 2");
    bad_list(__LINE__, "1:16:+0", 0, 100, "D >= 1");
    bad_list(__LINE__, "1:16:-2", 0, 100, "xF (multiply) or +D (add)");
    bad_list(__LINE__, "1:16:x", 0, 100, "F >= 2");
    bad_list(__LINE__, "1:16:x2.5", 0, 100, "F >= 2");
    bad_list(__LINE__, "1:16:", 0, 100, "step");
    bad_list(__LINE__, "1:", 0, 100, "HI \"\": empty");
    bad_list(__LINE__, ":16", 0, 100, "LO \"\": empty");
    bad_list(__LINE__, "1:16:x2:4", 0, 100, "LO:HI:STEP");
    bad_list(__LINE__, "1:2K", 0, 1024, "2048 is above the maximum 1024");
    bad_list(__LINE__, "0:8", 1, 1024, "0 is below the minimum 1");
    bad_list(__LINE__, "4,2048", 0, 1024, "invalid size \"2048\" in size list");
    bad_list(__LINE__, "1:8junk", 0, 1024, "unexpected \"junk\"");
    bad_list(__LINE__, "1:4097:+1", 0, INT64_MAX, "more than 4096 values");
    bad_list(__LINE__, "0:1M:+1", 0, INT64_MAX, "more than 4096 values");
}

static void test_long_list(void)
{
    /* 4097 distinct single items: one more than the cap. */
    static char text[4097 * 5 + 1];
    size_t pos = 0, cut = 0;
    for (int i = 0; i < 4097; i++) {
        if (i == 4096)
            cut = pos - 1;
        pos += (size_t)sprintf(text + pos, "%d,", i);
    }
    text[pos - 1] = '\0';
    char err[512] = "";
    bb_size_list_t list = {NULL, 0};
    check_at(bb_cli_parse_size_list(text, 0, 10000, &list, err, sizeof err)
             == BB_ERR_PARSE && strstr(err, "more than 4096") != NULL
             && list.values == NULL, __LINE__, "4097 items: %s", err);
    text[cut] = '\0'; /* 4096 items */
    check_at(bb_cli_parse_size_list(text, 0, 10000, &list, err, sizeof err) == BB_OK
             && list.n == 4096, __LINE__, "4096 items: %s", err);
    bb_size_list_clear(&list);
}

static void test_doubles(void)
{
    char err[256] = "";
    double d = -1.0;
    check_at(bb_cli_parse_double("0.25", 0.0, 1.0, &d, err, sizeof err) == BB_OK
             && d == 0.25, __LINE__, "0.25: %s", err);
    check_at(bb_cli_parse_double("1e-3", 0.0, 10.0, &d, err, sizeof err) == BB_OK
             && d == 1e-3, __LINE__, "1e-3: %s", err);
    check_at(bb_cli_parse_double("-2", -5.0, 5.0, &d, err, sizeof err) == BB_OK
             && d == -2.0, __LINE__, "-2: %s", err);
    d = 42.0;
    static const char *const bad[] = {"", "abc", "1.5s", " 1", "nan", "inf",
                                      "1e999", "2", "-0.5"};
    for (size_t i = 0; i < N(bad); i++) {
        err[0] = '\0';
        bb_status_t st = bb_cli_parse_double(bad[i], 0.0, 1.0, &d, err, sizeof err);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", bad[i]);
        check_at(st == BB_ERR_PARSE && d == 42.0 && strstr(err, quoted) != NULL,
                 __LINE__, "double \"%s\": status %d \"%s\"", bad[i], (int)st, err);
    }
}

static void test_rank_prefix(void)
{
    char err[256] = "";
    int rank = -1;
    const char *rest = NULL;
    check_at(bb_cli_parse_rank_prefix("1:0.5", 4, &rank, &rest, err, sizeof err)
             == BB_OK && rank == 1 && rest != NULL && strcmp(rest, "0.5") == 0,
             __LINE__, "1:0.5: %s", err);
    check_at(bb_cli_parse_rank_prefix("0:epoch", 1, &rank, &rest, err, sizeof err)
             == BB_OK && rank == 0 && strcmp(rest, "epoch") == 0, __LINE__,
             "0:epoch: %s", err);
    /* A bare rank: rest is the empty string at the end of text. */
    check_at(bb_cli_parse_rank_prefix("3", 4, &rank, &rest, err, sizeof err)
             == BB_OK && rank == 3 && rest != NULL && *rest == '\0', __LINE__,
             "bare 3: %s", err);
    static const char *const bad[] = {"4:x", "x:1", "-1:2", "1:", ":1", "4",
                                      "1x", "1.5", "99999999999999999999:1",
                                      "99999999999999999999", " 1:2", ""};
    for (size_t i = 0; i < N(bad); i++) {
        rank = -7;
        err[0] = '\0';
        bb_status_t st = bb_cli_parse_rank_prefix(bad[i], 4, &rank, &rest, err,
                                                  sizeof err);
        check_at(st == BB_ERR_PARSE && rank == -7 && strstr(err, bad[i]) != NULL,
                 __LINE__, "rank prefix \"%s\": status %d \"%s\"", bad[i], (int)st,
                 err);
    }
}

static void test_rank_seconds(void)
{
    char err[256] = "";
    int rank = -1;
    double s = -1.0;
    check_at(bb_cli_parse_rank_seconds("2:0.25", 4, 3600.0, &rank, &s, err, sizeof err)
             == BB_OK && rank == 2 && s == 0.25, __LINE__, "2:0.25: %s", err);
    check_at(bb_cli_parse_rank_seconds("0:3600", 1, 3600.0, &rank, &s, err, sizeof err)
             == BB_OK && rank == 0 && s == 3600.0, __LINE__, "0:3600: %s", err);
    check_at(bb_cli_parse_rank_seconds("1:0", 2, 1.0, &rank, &s, err, sizeof err)
             == BB_OK && rank == 1 && s == 0.0, __LINE__, "1:0: %s", err);
    /* A bad rank, no seconds (bare rank, "R:"), negative, over max_s, not
     * a number: refused with the text named and both outputs untouched. */
    static const char *const bad[] = {"4:1", "x:1", "1", "1:", "1:-0.5",
                                      "1:3601", "1:soon", "1:nan", "1:1e999",
                                      ":1", ""};
    for (size_t i = 0; i < N(bad); i++) {
        rank = -7;
        s = -7.0;
        err[0] = '\0';
        bb_status_t st = bb_cli_parse_rank_seconds(bad[i], 4, 3600.0, &rank, &s, err,
                                                   sizeof err);
        check_at(st == BB_ERR_PARSE && rank == -7 && s == -7.0 && err[0] != '\0',
                 __LINE__, "rank seconds \"%s\": status %d \"%s\"", bad[i], (int)st,
                 err);
    }
    check_at(bb_cli_parse_rank_seconds("1:3601", 4, 3600.0, &rank, &s, err, sizeof err)
             == BB_ERR_PARSE && strstr(err, "3601") != NULL && strstr(err, "3600") != NULL,
             __LINE__, "1:3601 names value and bound: \"%s\"", err);
}

static void test_format(void)
{
    static const struct { int64_t v; const char *text; } cases[] = {
        {0, "0"}, {8, "8"}, {1000, "1000"}, {1024, "1K"}, {65536, "64K"},
        {1536, "1536"}, {MI, "1M"}, {3 * MI, "3M"}, {GI, "1G"},
        {(int64_t)1 << 40, "1024G"}, {-4, "-4"}
    };
    char buf[32];
    for (size_t i = 0; i < N(cases); i++) {
        bb_cli_format_size(cases[i].v, buf, sizeof buf);
        check_at(strcmp(buf, cases[i].text) == 0, __LINE__,
                 "format %" PRId64 ": \"%s\", expected \"%s\"", cases[i].v, buf,
                 cases[i].text);
        /* What we print parses back to the same value. */
        int64_t back = -1;
        if (cases[i].v >= 0)
            check_at(bb_cli_parse_size(buf, 0, INT64_MAX, &back, NULL, 0) == BB_OK
                     && back == cases[i].v, __LINE__, "round trip \"%s\"", buf);
    }
    char small[3];
    bb_cli_format_size(65536, small, sizeof small);
    check_at(strcmp(small, "64") == 0, __LINE__, "truncated format \"%s\"", small);
}

/* Hostile values: repeated list values, exponents beyond int64, hex in
 * every number, underflow, and messages that must fit 256 bytes whole. */
static void test_hostile(void)
{
    /* Repeats, from items, ranges and both. */
    bad_list(__LINE__, "8,8", 0, 100, "8 appears more than once");
    bad_list(__LINE__, "1:8,8", 0, 100, "8 appears more than once");
    bad_list(__LINE__, "4,1:8", 0, 100, "4 appears more than once");
    bad_list(__LINE__, "1K,1024", 0, 2048, "1024 appears more than once");
    bad_list(__LINE__, "10,1e1", 0, 100, "10 appears more than once");
    static const int64_t distinct[] = {8, 1, 2, 4, 16};
    good_list(__LINE__, "8,1:4,16", 0, 100, distinct, N(distinct));

    /* An exponent beyond the range of strtoll keeps its sign. */
    bad_size(__LINE__, "1e-99999999999999999999", 0, INT64_MAX, "not a whole number");
    bad_size(__LINE__, "1e99999999999999999999", 0, INT64_MAX, "too large");
    good_size(__LINE__, "0e-99999999999999999999", 0);

    /* Hexadecimal is refused by sizes and by doubles alike. */
    bad_size(__LINE__, "0x10", 0, INT64_MAX, "unexpected");
    char err[256] = "";
    double d = 42.0;
    static const char *const hex[] = {"0x1p-10", "0X10", "0x.8", "-0x1", "infinity",
                                      "nan(1)"};
    for (size_t i = 0; i < N(hex); i++) {
        err[0] = '\0';
        bb_status_t st = bb_cli_parse_double(hex[i], -10.0, 10.0, &d, err, sizeof err);
        check_at(st == BB_ERR_PARSE && d == 42.0 && strstr(err, "decimal") != NULL,
                 __LINE__, "double \"%s\": status %d \"%s\"", hex[i], (int)st, err);
    }
    bb_status_t st = bb_cli_parse_double("1e-400", 0.0, 10.0, &d, err, sizeof err);
    check_at(st == BB_ERR_PARSE && d == 42.0 && strstr(err, "too small") != NULL,
             __LINE__, "1e-400: status %d \"%s\"", (int)st, err);
    st = bb_cli_parse_double("0e-400", 0.0, 10.0, &d, err, sizeof err);
    check_at(st == BB_OK && d == 0.0, __LINE__, "0e-400: %s", err);

    /* Long texts: the reason survives whole in 256 bytes. */
    static char longtok[600];
    memset(longtok, '7', 300);
    strcpy(longtok + 300, "Q");
    char msg[256];
    st = bb_cli_parse_size(longtok, 0, INT64_MAX, &(int64_t){0}, msg, sizeof msg);
    check_at(st == BB_ERR_PARSE && strstr(msg, "too large") != NULL, __LINE__,
             "300 digits: %s", msg);
    static char list[700];
    snprintf(list, sizeof list, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16:17%s",
             "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq");
    bb_size_list_t out = {NULL, 0};
    st = bb_cli_parse_size_list(list, 0, INT64_MAX, &out, msg, sizeof msg);
    check_at(st == BB_ERR_PARSE && strstr(msg, "(suffix K, Ki, M, Mi, G, Gi or an "
                                          "exponent: 1e6)") != NULL
             && strstr(msg, "...") != NULL, __LINE__, "long range item: %s", msg);
    memset(list, 0, sizeof list);
    for (int i = 0; i < 60; i++)
        strcat(list, "9,");
    strcat(list, "1x");
    st = bb_cli_parse_size_list(list, 0, INT64_MAX, &out, msg, sizeof msg);
    check_at(st == BB_ERR_PARSE && strstr(msg, "unexpected \"x\" after the number "
                                          "(suffix K, Ki, M, Mi, G, Gi or an "
                                          "exponent: 1e6)") != NULL,
             __LINE__, "long list: %s", msg);
    memset(longtok, 'w', 500);
    longtok[500] = '\0';
    int rank = -1;
    const char *rest = NULL;
    st = bb_cli_parse_rank_prefix(longtok, 4, &rank, &rest, msg, sizeof msg);
    check_at(st == BB_ERR_PARSE && strstr(msg, "with a rank in [0, 4)") != NULL,
             __LINE__, "long rank prefix: %s", msg);
    st = bb_cli_parse_double(longtok, 0.0, 1.0, &d, msg, sizeof msg);
    check_at(st == BB_ERR_PARSE && strstr(msg, ": expected a number") != NULL,
             __LINE__, "long double: %s", msg);
}

int main(void)
{
    test_sizes();
    test_lists();
    test_long_list();
    test_doubles();
    test_rank_prefix();
    test_rank_seconds();
    test_format();
    test_hostile();
    printf("%d passed, %d failed\n", passed, failed);
    return check_verdict();
}
