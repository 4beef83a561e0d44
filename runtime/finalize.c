/* finalize.c: MPI_Finalize that cannot hang after the work is done.
 *
 * MPICH 4.0.2 (ch4:ucx) with UCX 1.13 over TCP can hang in MPI_Finalize
 * (measured: 3 runs in 10 with 4 ranks on 2 namespace hosts): each rank
 * closes every endpoint with a flush and then enters the launcher's (PMI)
 * barrier, where it no longer progresses UCX; a rank whose close still
 * needs a peer's progress then never finishes, and the job waits until
 * MPIEXEC_TIMEOUT kills it.  No UCX or MPICH setting of these versions was
 * found that avoids it (a barrier first, draining the application's
 * traffic, leaves about as many hangs).
 *
 * So: MPI_Barrier (every rank has finished, rank 0 has written its record
 * and the exit code is agreed), then MPI_Finalize with its PMI-1 socket
 * behind a relay thread (Hydra only: PMI_FD set).  When MPI_Finalize has
 * been silent on that socket for BB_FINALIZE_TIMEOUT seconds (default 5; 0
 * turns the relay off; anything but a number in [0, 3600] is refused at
 * start) with no reply outstanding, the relay completes the
 * launcher's barrier and finalize for it and the process leaves with the
 * agreed exit code, after one line on stderr. */
#include "config.h"
#include "bench.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BB_FINALIZE_TIMEOUT_DEFAULT 5.0

static int bb_finalize_code = BB_EXIT_OK;
static double bb_finalize_limit_s;

void bb_finalize_expect_exit(int code)
{
    bb_finalize_code = code;
}

static int bb_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One line from fd into line (NUL-terminated, newline kept), waiting at
 * most limit_s; 0 on success. */
static int bb_read_line(int fd, char *line, size_t size, double limit_s)
{
    size_t got = 0;
    double waited = 0.0;
    while (got < size - 1) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 100);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0) {
            if ((waited += 0.1) > limit_s)
                return -1;
            continue;
        }
        ssize_t n = read(fd, line + got, 1);
        if (n <= 0)
            return -1;
        if (line[got++] == '\n')
            break;
    }
    line[got] = '\0';
    return 0;
}

static int bb_is(const char *line, const char *cmd)
{
    size_t n = strlen(cmd);
    return strncmp(line, cmd, n) == 0 && (line[n] == '\n' || line[n] == ' ');
}

/* One PMI-1 request of our own to the launcher; 0 when the reply is want. */
static int bb_finalize_pmi(int real, const char *cmd, const char *want)
{
    char line[1024];
    if (bb_write_all(real, cmd, strlen(cmd)) != 0
        || bb_read_line(real, line, sizeof line, 60.0) != 0)
        return -1;
    return bb_is(line, want) ? 0 : -1;
}

/* The relay between MPI_Finalize's PMI client (main, a socketpair end now
 * behind PMI_FD) and the launcher (real).  It forwards every line and so
 * knows whether the launcher's barrier has been passed.  When MPI_Finalize
 * has nothing outstanding and says nothing for the limit, it is stuck in
 * the endpoint close: the relay passes the barrier (if not yet) and the PMI
 * finalize for it, so that the peers and Hydra see a clean end, and the
 * process leaves with the agreed code (MPI_Finalize never talks to the
 * launcher again, so nothing is sent twice). */
typedef struct bb_relay {
    int main_fd, real_fd;
} bb_relay_t;

static void *bb_finalize_relay(void *arg)
{
    bb_relay_t r = *(bb_relay_t *)arg;
    free(arg);
    char buf[1024];
    size_t have = 0;
    int outstanding = 0, barrier_done = 0;
    double quiet = 0.0;
    for (;;) {
        struct pollfd p[2] = {{.fd = r.main_fd, .events = POLLIN},
                              {.fd = r.real_fd, .events = POLLIN}};
        int n = poll(p, 2, 50);
        if (n < 0 && errno != EINTR)
            return NULL;
        if (n <= 0) {
            quiet += 0.05;
            if (!outstanding && quiet >= bb_finalize_limit_s)
                break;
            continue;
        }
        quiet = 0.0;
        if (p[1].revents & (POLLIN | POLLHUP)) {
            char line[1024];
            if (bb_read_line(r.real_fd, line, sizeof line, 10.0) != 0)
                return NULL;
            if (bb_is(line, "cmd=barrier_out"))
                barrier_done = 1;
            outstanding = 0;
            if (bb_write_all(r.main_fd, line, strlen(line)) != 0)
                return NULL;
        }
        if (p[0].revents & (POLLIN | POLLHUP)) {
            ssize_t got = read(r.main_fd, buf + have, sizeof buf - 1 - have);
            if (got <= 0)
                return NULL;
            have += (size_t)got;
            char *nl;
            while ((nl = memchr(buf, '\n', have)) != NULL) {
                size_t len = (size_t)(nl - buf) + 1;
                char line[1024];
                memcpy(line, buf, len);
                line[len] = '\0';
                memmove(buf, buf + len, have - len);
                have -= len;
                outstanding = 1;
                if (bb_write_all(r.real_fd, line, len) != 0)
                    return NULL;
            }
            if (have == sizeof buf - 1)
                have = 0;  /* not PMI-1: lines are shorter */
        }
    }
    int ok = 1;
    if (!barrier_done)
        ok = bb_finalize_pmi(r.real_fd, "cmd=barrier_in\n", "cmd=barrier_out") == 0;
    ok = ok && bb_finalize_pmi(r.real_fd, "cmd=finalize\n", "cmd=finalize_ack") == 0;
    char msg[256];
    int m = snprintf(msg, sizeof msg,
                     "bbench: MPI_Finalize still closing UCX endpoints %.0f s after "
                     "every rank finished: %s, exit %d (doc/hosts.md: shutdown "
                     "across hosts)\n", bb_finalize_limit_s,
                     ok ? "launcher's barrier and finalize done for it"
                        : "launcher's barrier failed", bb_finalize_code);
    if (m > 0)
        (void)!write(STDERR_FILENO, msg, (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1);
    _exit(bb_finalize_code);
    return NULL;
}

bb_status_t bb_finalize_timeout(double *limit_out, char *err, size_t errlen)
{
    const char *lim = getenv("BB_FINALIZE_TIMEOUT");
    *limit_out = BB_FINALIZE_TIMEOUT_DEFAULT;
    if (lim == NULL || *lim == '\0')
        return BB_OK;
    char *end = NULL;
    errno = 0;
    double v = strtod(lim, &end);
    if (end == lim || *end != '\0' || errno == ERANGE || !(v >= 0.0) || v > 3600.0) {
        snprintf(err, errlen, "BB_FINALIZE_TIMEOUT='%.64s%s' is not a number of seconds "
                 "in [0, 3600] (0 turns the finalize guard off; unset: %g)", lim,
                 strlen(lim) > 64 ? "..." : "", BB_FINALIZE_TIMEOUT_DEFAULT);
        return BB_ERR_PARSE;
    }
    *limit_out = v;
    return BB_OK;
}

/* Whether the relay will run, with its limit; else why not. */
static int bb_finalize_guard_state(double *limit_out, int *fd_out, char *why, size_t len)
{
    char err[256];
    if (bb_finalize_timeout(limit_out, err, sizeof err) != BB_OK) {
        snprintf(why, len, "%s", err);
        return 0;
    }
    if (*limit_out == 0.0) {
        snprintf(why, len, "BB_FINALIZE_TIMEOUT=0 turns it off");
        return 0;
    }
    const char *fd = getenv("PMI_FD");
    if (fd == NULL) {
        snprintf(why, len, "no PMI_FD in the environment: the launcher gave no PMI-1 "
                 "socket (Hydra does; Open MPI's PMIx, Slurm's PMI-2 and a singleton "
                 "do not), so only the MPI_Barrier before MPI_Finalize applies");
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(fd, &end, 10);
    if (end == fd || *end != '\0' || errno != 0 || v < 0 || v > 65535) {
        snprintf(why, len, "PMI_FD='%.32s' is not a descriptor number", fd);
        return 0;
    }
    *fd_out = (int)v;
    return 1;
}

cJSON *bb_finalize_guard_json(void)
{
    double limit = 0.0;
    int fd = -1;
    char why[320] = "";
    cJSON *g = cJSON_CreateObject();
    if (g == NULL)
        return NULL;
    int active = bb_finalize_guard_state(&limit, &fd, why, sizeof why);
    cJSON_AddBoolToObject(g, "active", active);
    if (active) {
        cJSON_AddNumberToObject(g, "timeout_s", limit);
        cJSON_AddStringToObject(g, "what", "MPI_Finalize's PMI-1 socket (PMI_FD) goes "
                                "behind a relay; silent for timeout_s with no reply due, "
                                "the relay ends the launcher's barrier and finalize for it "
                                "(doc/hosts.md: shutdown across hosts)");
    } else {
        cJSON_AddStringToObject(g, "reason", why);
    }
    cJSON_AddStringToObject(g, "scope", "rank 0's environment when the record was made");
    return g;
}

/* The relay runs only under Hydra's PMI-1 (PMI_FD names its socket).  A
 * bad BB_FINALIZE_TIMEOUT was refused, with its message, when the bench
 * started (bb_bench_init), and the usage exit then comes here: no guard,
 * nothing said twice. */
static void bb_finalize_arm(void)
{
    double limit = 0.0;
    int v = -1;
    char why[320];
    if (!bb_finalize_guard_state(&limit, &v, why, sizeof why))
        return;
    bb_finalize_limit_s = limit;
    bb_relay_t *r = malloc(sizeof *r);
    int sv[2] = {-1, -1};
    if (r == NULL)
        return;
    r->real_fd = dup(v);
    if (r->real_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        goto undo;
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) != 0)
        goto undo;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    r->main_fd = sv[1];
    /* From here on MPI_Finalize's PMI client talks to the relay. */
    if (dup2(sv[0], v) < 0) {
        pthread_attr_destroy(&attr);
        goto undo;
    }
    close(sv[0]);
    if (pthread_create(&t, &attr, bb_finalize_relay, r) != 0) {
        /* Put the launcher's socket back. */
        dup2(r->real_fd, v);
        close(sv[1]);
        close(r->real_fd);
        free(r);
    }
    pthread_attr_destroy(&attr);
    return;
undo:
    if (sv[0] >= 0) {
        close(sv[0]);
        close(sv[1]);
    }
    if (r->real_fd >= 0)
        close(r->real_fd);
    free(r);
}

int bb_finalize(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return MPI_SUCCESS;
    /* Nothing of the application is in flight past this point. */
    MPI_Barrier(MPI_COMM_WORLD);
    bb_finalize_arm();
    return MPI_Finalize();
}
