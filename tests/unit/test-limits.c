/* test-limits: values at the edge of what the library computes with:
 * sleeps that would overflow time_t, layout arguments that would overflow
 * int64, out-of-range seeds, and messages longer than their buffer.
 * Serial: no MPI_Init. */
#include "config.h"
#include "bench/redist/redist.h"
#include "private/hooks.h"
#include "../check.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A child sleeps for seconds: 1 iff it is still asleep after 1 s of the
 * parent's time (it is killed then).  A sleep that returns at once makes
 * the child exit 0 first. */
static int still_asleep(double seconds)
{
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        bb_time_sleep(seconds);
        _exit(0);
    }
    struct timespec tick = {0, 10 * 1000 * 1000};
    int status = 0;
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return 0;  /* returned (or crashed: UBSan) */
        nanosleep(&tick, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return 1;
}

static void test_sleep(void)
{
    CHECK_MSG(still_asleep(1e30), "bb_time_sleep(1e30) returned");
    CHECK_MSG(still_asleep(INFINITY), "bb_time_sleep(inf) returned");
    CHECK_MSG(still_asleep(3e9), "bb_time_sleep(3e9) returned");
    /* These return at once (the alarm turns a hang into a failure). */
    alarm(60);
    bb_time_sleep(NAN);
    bb_time_sleep(-1.0);
    bb_time_sleep(0.0);
    bb_time_sleep(1e-3);
    alarm(0);
    CHECK(1);
}

static void test_layouts(void)
{
    char err[256] = "";
    bb_layout_t lay;
    memset(&lay, 0, sizeof lay);
    bb_status_t st = bb_layout_parse("spatial:2147483647,2147483647,2147483647",
                                     &lay, err, sizeof err);
    CHECK_MSG(st == BB_ERR_PARSE && strstr(err, "PX*PY*PZ") != NULL,
              "spatial with a product beyond int64: %s (%s)", bb_status_string(st), err);
    st = bb_layout_parse("spatial:65536,65536,1", &lay, err, sizeof err);
    CHECK_MSG(st == BB_ERR_PARSE, "spatial with a product beyond INT32_MAX: %s",
              bb_status_string(st));
    st = bb_layout_parse("spatial:2,3,4", &lay, err, sizeof err);
    CHECK_MSG(st == BB_OK && lay.dims[2] == 4, "spatial:2,3,4: %s", err);

    /* A layout built by hand with huge dims: refused, not overflowed. */
    bb_layout_t big;
    memset(&big, 0, sizeof big);
    big.kind = BB_LAYOUT_SPATIAL;
    big.dims[0] = big.dims[1] = big.dims[2] = INT32_MAX;
    int64_t *idx = NULL, cnt = -1;
    CHECK(bb_layout_indices(&big, 10, 0, 8, &idx, &cnt) == BB_ERR_ARG && idx == NULL);
    big.dims[0] = 2;
    big.dims[1] = -2;
    big.dims[2] = -2;
    CHECK(bb_layout_indices(&big, 10, 0, 8, &idx, &cnt) == BB_ERR_ARG && idx == NULL);

    /* A hand-built block-cyclic block of 0 would loop for ever. */
    bb_layout_t bc;
    memset(&bc, 0, sizeof bc);
    bc.kind = BB_LAYOUT_BLOCK_CYCLIC;
    alarm(60);
    CHECK(bb_layout_indices(&bc, 10, 0, 2, &idx, &cnt) == BB_ERR_ARG && idx == NULL);
    bc.block = -3;
    CHECK(bb_layout_indices(&bc, 10, 0, 2, &idx, &cnt) == BB_ERR_ARG && idx == NULL);
    alarm(0);
    bc.kind = (bb_layout_kind_t)99;
    char name[64];
    bb_layout_format(&bc, name, sizeof name);
    CHECK_MSG(strcmp(name, "unknown") == 0, "format of kind 99: %s", name);
    /* No ranks: no division by zero. */
    int64_t first = -1, count = -1;
    bb_std_block(10, 0, 0, &first, &count);
    CHECK(first == 0 && count == 0);
    CHECK(bb_std_owner(10, 0, 3) == -1 && bb_std_owner(10, 4, 10) == -1
          && bb_std_owner(10, 4, 9) == 3);

    /* Seeds beyond INT64_MAX are refused, not clamped to it. */
    st = bb_layout_parse("random:99999999999999999999", &lay, err, sizeof err);
    CHECK_MSG(st == BB_ERR_PARSE, "random:99999999999999999999: %s, seed %llu",
              bb_status_string(st), (unsigned long long)lay.seed);
    st = bb_layout_parse("block-irregular:9223372036854775808", &lay, err, sizeof err);
    CHECK_MSG(st == BB_ERR_PARSE, "block-irregular:2^63: %s", bb_status_string(st));
    st = bb_layout_parse("random:9223372036854775807", &lay, err, sizeof err);
    CHECK_MSG(st == BB_OK && lay.seed == (uint64_t)INT64_MAX, "random:INT64_MAX: %s", err);
    st = bb_layout_parse("block-cyclic:99999999999999999999", &lay, err, sizeof err);
    CHECK_MSG(st == BB_ERR_PARSE, "block-cyclic:1e20: %s", bb_status_string(st));

    /* A long name: the list of layouts still fits 256 bytes whole. */
    static char longname[400];
    memset(longname, 'x', sizeof longname - 1);
    st = bb_layout_parse(longname, &lay, err, sizeof err);
    CHECK_MSG(st == BB_ERR_PARSE
                  && strstr(err, "root, bc2d:ROWS,MB,NB[,PR,PC[,RSRC,CSRC]])") != NULL,
              "long layout name: %s", err);
}

/* A message cut by a small buffer ends in "..." (and stays terminated). */
static void test_message_cut(void)
{
    char err[24];
    int64_t v = 0;
    memset(err, 'z', sizeof err);
    bb_status_t st = bb_cli_parse_size("12345678901234567890123", 0, 10, &v, err,
                                       sizeof err);
    CHECK_MSG(st == BB_ERR_PARSE && strlen(err) == sizeof err - 1
                  && strcmp(err + sizeof err - 4, "...") == 0,
              "cut message: \"%.*s\"", (int)sizeof err, err);
}

int main(void)
{
    test_sleep();
    test_layouts();
    test_message_cut();
    printf("test-limits: %d passed, %d failed\n", passed, failed);
    return check_verdict();
}
