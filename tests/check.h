/* tests/check.h: the pass/fail counters and check macros of the C tests.
 * Include it once, in the test program's only source file: the counters are
 * static to it.  A failure prints "FAIL file:line: what" on stderr; MPI
 * tests set check_rank to their rank to prefix it with "rank R: ". */
#ifndef BB_TESTS_CHECK_H
#define BB_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int passed, failed;
static int check_rank = -1;  /* >= 0: prefix failures with the rank */

static inline void check_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void check_fail(const char *file, int line, const char *fmt, ...)
{
    failed++;
    va_list ap;
    va_start(ap, fmt);
    if (check_rank >= 0)
        fprintf(stderr, "rank %d: ", check_rank);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* CHECK(cond): the failure names the condition.  CHECK_MSG(cond, fmt, ...):
 * the failure prints the message; its arguments are evaluated only then. */
#define CHECK(cond) CHECK_MSG(cond, "%s", #cond)
#define CHECK_MSG(cond, ...)                                 \
    do {                                                     \
        if (cond)                                            \
            passed++;                                        \
        else                                                 \
            check_fail(__FILE__, __LINE__, __VA_ARGS__);     \
    } while (0)

/* check_at(ok, line, ...): the same with an already evaluated result and the
 * caller's line (helpers that check on behalf of a case). */
#define check_at(ok, line, ...)                              \
    do {                                                     \
        if (ok)                                              \
            passed++;                                        \
        else                                                 \
            check_fail(__FILE__, (line), __VA_ARGS__);       \
    } while (0)

/* The verdict of a serial test: no failure, and at least one check made (a
 * test that checked nothing has tested nothing, whatever it printed). */
static inline int check_verdict(void)
{
    if (passed + failed == 0)
        fprintf(stderr, "FAIL: no check was made\n");
    return failed == 0 && passed > 0 ? 0 : 1;
}

#endif /* BB_TESTS_CHECK_H */
