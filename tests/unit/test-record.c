/* test-record: build a record with every kind of quantity, write it
 * atomically, read it back and check it; failed writes leave nothing; the
 * reader rejects malformed, truncated and wrongly shaped text and names the
 * place.  Serial: no MPI_Init (records are MPI-free). */
#include "config.h"
#include "record/bbrecord.h"
#include "record/bb-git.h"
#include "../check.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static char tmpdir[256];

/* Number of directory entries other than . and .. (temporaries included). */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static const cJSON *get(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static int is_str(const cJSON *item, const char *want)
{
    return cJSON_IsString(item) && strcmp(item->valuestring, want) == 0;
}

static int is_num(const cJSON *item, double want)
{
    return cJSON_IsNumber(item) && item->valuedouble == want;
}

/* cJSON prints a double with 15 significant digits when that reads back
 * within an ulp or so, so a computed median may come back one ulp off. */
static int is_near(const cJSON *item, double want)
{
    return cJSON_IsNumber(item)
           && fabs(item->valuedouble - want) <= 4e-16 * fabs(want);
}

static const double elapsed_s[] = {3e-6, 1e-6, 2e-6, 5e-6};
static const double prepare_s[] = {4e-7, 2e-7, 3e-7};

static bb_record_t *build_record(void)
{
    char a0[] = "bbench-sum", a1[] = "--count", a2[] = "1:1M";
    char *argv[] = {a0, a1, a2, NULL};
    bb_record_t *rec = NULL;
    CHECK(bb_record_create("sum", 3, argv, &rec) == BB_OK && rec != NULL);
    if (rec == NULL)
        return NULL;

    /* Provenance members, set twice: the second replaces the first. */
    cJSON *rt = cJSON_CreateObject();
    cJSON_AddStringToObject(rt, "mpi_standard", "0.0");
    CHECK(bb_record_set(rec, "runtime", rt) == BB_OK);
    rt = cJSON_CreateObject();
    cJSON_AddStringToObject(rt, "mpi_standard", "4.0");
    CHECK(bb_record_set(rec, "runtime", rt) == BB_OK);
    cJSON *topo = cJSON_CreateObject();
    cJSON_AddNumberToObject(topo, "ranks", 4);
    CHECK(bb_record_set(rec, "topology", topo) == BB_OK);
    CHECK(bb_record_set(rec, "points", cJSON_CreateArray()) == BB_ERR_ARG);

    /* Point 0: ok, every kind of quantity, a first call. */
    cJSON *params = cJSON_CreateObject();
    cJSON_AddNumberToObject(params, "count", 1024);
    cJSON_AddStringToObject(params, "mode", "protocol");
    /* Tabs and colons inside strings must survive the writer's layout. */
    cJSON_AddStringToObject(params, "note", "a\tb:\tc");
    cJSON *qs = cJSON_CreateObject();
    static const char *const inc[] = {"phase.prepare", "phase.admission", NULL};
    cJSON *t = bb_quantity_timing(elapsed_s, 4, "call/max-rank", inc);
    CHECK(t != NULL);
    bb_quantities_add(qs, "elapsed", t);
    bb_quantities_add(qs, "phase.prepare",
                      bb_quantity_timing(prepare_s, 3, "call/max-rank", NULL));
    bb_quantities_add(qs, "memory.tracked_live",
                      bb_quantity_value(16528, "byte", "call/rank"));
    bb_quantities_add(qs, "communication.max_inflight",
                      bb_quantity_value(1, "count", "call/max-rank"));
    bb_quantities_add(qs, "network.bytes",
                      bb_quantity_null("byte", "run/rank",
                                       "no portable counter for NIC traffic"));
    /* Adding a name again replaces it. */
    bb_quantities_add(qs, "memory.rss_peak",
                      bb_quantity_value(1.0, "byte", "run/max-rank"));
    bb_quantities_add(qs, "memory.rss_peak",
                      bb_quantity_value(52428800, "byte", "run/max-rank"));
    cJSON *first = cJSON_CreateObject();
    bb_quantities_add(first, "elapsed",
                      bb_quantity_value(9e-5, "s", "call/max-rank"));
    CHECK(bb_record_add_point(rec, params, "ok", NULL, first, qs) == BB_OK);

    /* Point 1: refused by rank 2 at compute; NULL parameters and quantities. */
    bb_refusal_t r1 = {BB_STAGE_COMPUTE, 2, 7};
    CHECK(bb_record_add_point(rec, NULL, "refused", &r1, NULL, NULL) == BB_OK);

    /* Point 2: a contract refusal blames no rank. */
    bb_refusal_t r2 = {BB_STAGE_CONTRACT, -1, 9};
    params = cJSON_CreateObject();
    cJSON_AddNumberToObject(params, "count", 8);
    CHECK(bb_record_add_point(rec, params, "refused", &r2, NULL, NULL) == BB_OK);

    /* A bad status is refused (and its items are taken, not leaked). */
    CHECK(bb_record_add_point(rec, cJSON_CreateObject(), "maybe", NULL, NULL,
                              cJSON_CreateObject()) == BB_ERR_ARG);
    return rec;
}

static void test_quantity_edges(void)
{
    const double s[] = {1.0, NAN, 2.0};
    CHECK(bb_quantity_timing(s, 0, "call/rank", NULL) == NULL);
    CHECK(bb_quantity_timing(s, 3, "call/rank", NULL) == NULL);
    cJSON *q = bb_quantity_value(INFINITY, "s", "call/rank");
    CHECK(q != NULL && cJSON_IsNull(get(q, "value"))
          && cJSON_IsString(get(q, "reason")));
    cJSON_Delete(q);
    q = bb_quantity_null("s", "call/rank", NULL);
    CHECK(q != NULL && cJSON_IsNull(get(q, "value"))
          && cJSON_IsString(get(q, "reason")) && is_str(get(q, "unit"), "s"));
    cJSON_Delete(q);
    q = bb_quantity_value(0.5, "ratio", "run/max-rank");
    CHECK(q != NULL && is_num(get(q, "value"), 0.5) && cJSON_IsNull(get(q, "reason"))
          && is_str(get(q, "scope"), "run/max-rank") && get(q, "samples") == NULL);
    cJSON_Delete(q);
}

static void check_document(const cJSON *doc, int line)
{
    check_at(is_str(get(doc, "schema"), BB_RECORD_SCHEMA), line, "schema");
    check_at(is_str(get(doc, "vocabulary"), "mpp-01"), line, "vocabulary");
    check_at(is_str(get(doc, "benchmark"), "sum"), line, "benchmark");
    const cJSON *when = get(doc, "created_utc");
    check_at(cJSON_IsString(when) && strlen(when->valuestring) == 20
             && when->valuestring[10] == 'T' && when->valuestring[19] == 'Z'
             && strncmp(when->valuestring, "20", 2) == 0, line, "created_utc %s",
             cJSON_IsString(when) ? when->valuestring : "?");
    const cJSON *cmd = get(doc, "command");
    check_at(cJSON_IsArray(cmd) && cJSON_GetArraySize(cmd) == 3
             && is_str(cJSON_GetArrayItem(cmd, 0), "bbench-sum")
             && is_str(cJSON_GetArrayItem(cmd, 2), "1:1M"), line, "command");

    const cJSON *src = get(doc, "source");
    check_at(is_str(get(src, "package"), PACKAGE_NAME)
             && is_str(get(src, "version"), PACKAGE_VERSION), line, "source");
    const cJSON *git = get(src, "git");
    if (BB_BUILD_GIT[0] != '\0')
        check_at(is_str(git, BB_BUILD_GIT), line, "source.git");
    else
        check_at(cJSON_IsNull(git) && cJSON_IsString(get(src, "git_reason")), line,
                 "source.git null with reason");
    const cJSON *build = get(src, "build");
    check_at(cJSON_IsString(get(build, "cc")) && cJSON_IsString(get(build, "cflags"))
             && cJSON_IsString(get(build, "configure")), line, "source.build");
    check_at(strstr(get(build, "cc")->valuestring, "") != NULL
             && get(build, "cflags")->valuestring[0] != ' ', line,
             "cflags trimmed");

    check_at(is_str(get(get(doc, "runtime"), "mpi_standard"), "4.0"), line,
             "runtime replaced");
    check_at(is_num(get(get(doc, "topology"), "ranks"), 4), line, "topology");

    /* points is the last member, after the provenance set later. */
    const cJSON *last = doc->child;
    while (last != NULL && last->next != NULL)
        last = last->next;
    check_at(last != NULL && strcmp(last->string, "points") == 0, line,
             "points last (last is %s)", last ? last->string : "?");

    const cJSON *points = get(doc, "points");
    check_at(cJSON_IsArray(points) && cJSON_GetArraySize(points) == 3, line,
             "3 points");
    const cJSON *p0 = cJSON_GetArrayItem(points, 0);
    check_at(is_str(get(p0, "status"), "ok") && cJSON_IsNull(get(p0, "refusal")),
             line, "point 0 status");
    check_at(is_num(get(get(p0, "parameters"), "count"), 1024)
             && is_str(get(get(p0, "parameters"), "mode"), "protocol")
             && is_str(get(get(p0, "parameters"), "note"), "a\tb:\tc"), line,
             "point 0 parameters");

    const cJSON *qs = get(p0, "quantities");
    const cJSON *el = get(qs, "elapsed");
    check_at(is_near(get(el, "value"), 2.5e-6) && is_near(get(el, "median"), 2.5e-6)
             && is_str(get(el, "unit"), "s") && is_str(get(el, "scope"), "call/max-rank")
             && cJSON_IsNull(get(el, "reason")), line, "elapsed value/median");
    const cJSON *samples = get(el, "samples");
    int same = cJSON_IsArray(samples) && cJSON_GetArraySize(samples) == 4;
    for (int i = 0; same && i < 4; i++)
        same = is_num(cJSON_GetArrayItem(samples, i), elapsed_s[i]);
    check_at(same, line, "elapsed samples kept in order, exactly");
    const cJSON *range = get(el, "range");
    check_at(cJSON_GetArraySize(range) == 2
             && is_num(cJSON_GetArrayItem(range, 0), 1e-6)
             && is_num(cJSON_GetArrayItem(range, 1), 5e-6), line, "elapsed range");
    check_at(is_num(get(el, "range_confidence"), 0.875), line, "confidence n=4");
    const cJSON *inc = get(el, "includes");
    check_at(cJSON_GetArraySize(inc) == 2
             && is_str(cJSON_GetArrayItem(inc, 0), "phase.prepare")
             && is_str(cJSON_GetArrayItem(inc, 1), "phase.admission"), line,
             "elapsed includes");
    const cJSON *pp = get(qs, "phase.prepare");
    check_at(is_num(get(pp, "median"), 3e-7) && is_num(get(pp, "range_confidence"), 0.75)
             && get(pp, "includes") == NULL, line, "phase.prepare");
    check_at(is_num(get(get(qs, "memory.tracked_live"), "value"), 16528)
             && is_str(get(get(qs, "memory.tracked_live"), "unit"), "byte"), line,
             "tracked_live");
    check_at(is_num(get(get(qs, "memory.rss_peak"), "value"), 52428800)
             && cJSON_GetArraySize(qs) == 6, line, "rss_peak replaced, 6 quantities");
    const cJSON *nb = get(qs, "network.bytes");
    check_at(cJSON_IsNull(get(nb, "value"))
             && is_str(get(nb, "reason"), "no portable counter for NIC traffic"),
             line, "network.bytes null with reason");
    check_at(is_num(get(get(get(p0, "first_call"), "elapsed"), "value"), 9e-5), line,
             "first_call");

    const cJSON *p1 = cJSON_GetArrayItem(points, 1);
    const cJSON *r1 = get(p1, "refusal");
    check_at(is_str(get(p1, "status"), "refused") && is_str(get(r1, "stage"), "compute")
             && is_num(get(r1, "rank"), 2) && is_num(get(r1, "sequence"), 7), line,
             "point 1 refusal");
    check_at(cJSON_IsObject(get(p1, "parameters")) && cJSON_GetArraySize(get(p1, "parameters")) == 0
             && cJSON_IsObject(get(p1, "quantities")) && cJSON_IsNull(get(p1, "first_call")),
             line, "point 1 defaults");
    const cJSON *r2 = get(cJSON_GetArrayItem(points, 2), "refusal");
    check_at(is_str(get(r2, "stage"), "contract") && cJSON_IsNull(get(r2, "rank"))
             && is_num(get(r2, "sequence"), 9), line, "point 2 refusal, rank null");
}

/* Read a whole file into a malloc'd buffer (no NUL added). */
static char *slurp(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            char *nb = realloc(buf, cap);
            if (nb == NULL)
                break;
            buf = nb;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (r == 0)
            break;
        len += r;
    }
    fclose(f);
    *len_out = len;
    return buf;
}

static void test_write_read(void)
{
    char path[512], err[512];
    bb_record_t *rec = build_record();
    if (rec == NULL)
        return;
    check_document(bb_record_json(rec), __LINE__);

    snprintf(path, sizeof path, "%s/rec.json", tmpdir);
    CHECK(bb_record_check_path(path, err, sizeof err) == BB_OK);
    CHECK(dir_entries(tmpdir) == 0); /* the probe file is gone */
    err[0] = '\0';
    check_at(bb_record_write(rec, path, err, sizeof err) == BB_OK, __LINE__,
             "write: %s", err);
    CHECK(dir_entries(tmpdir) == 1); /* no temporary left behind */
    struct stat sb;
    mode_t mask = umask(0);
    umask(mask);
    check_at(stat(path, &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~mask),
             __LINE__, "mode %o", (unsigned)(sb.st_mode & 0777));

    cJSON *doc = NULL;
    check_at(bb_record_read(path, &doc, err, sizeof err) == BB_OK && doc != NULL,
             __LINE__, "read: %s", err);
    if (doc != NULL)
        check_document(doc, __LINE__);
    cJSON_Delete(doc);

    /* Overwriting replaces the file in place, still one entry. */
    CHECK(bb_record_write(rec, path, err, sizeof err) == BB_OK);
    CHECK(dir_entries(tmpdir) == 1);

    /* The written text parses from a buffer of exactly its length, no NUL,
     * and every strict prefix that cuts the object fails cleanly. */
    size_t len = 0;
    char *text = slurp(path, &len);
    CHECK(text != NULL && len > 100 && text[len - 1] == '\n' && text[len - 2] == '}');
    if (text != NULL) {
        /* Conventional layout: "key": value, spaces, no raw tabs. */
        char *z = malloc(len + 1);
        memcpy(z, text, len);
        z[len] = '\0';
        CHECK(strstr(z, "\"schema\": \"bbench.record/1\"") != NULL);
        CHECK(strstr(z, "\"benchmark\": \"sum\"") != NULL);
        CHECK(strstr(z, "\"ranks\": 4") != NULL);
        CHECK(strstr(z, "\n  \"points\": [") != NULL);
        CHECK(strchr(z, '\t') == NULL);
        free(z);

        char *exact = malloc(len);
        memcpy(exact, text, len);
        doc = NULL;
        CHECK(bb_record_parse(exact, len, &doc, err, sizeof err) == BB_OK);
        cJSON_Delete(doc);
        free(exact);

        /* Garbage right after len must not be read. */
        char *padded = malloc(len + 8);
        memcpy(padded, text, len);
        memcpy(padded + len, "]]garbag", 8);
        doc = NULL;
        CHECK(bb_record_parse(padded, len, &doc, err, sizeof err) == BB_OK);
        cJSON_Delete(doc);
        free(padded);

        int prefix_failures = 0, prefix_cases = 0, bad_err = 0;
        for (size_t k = 0; k + 1 < len; k++) {
            char *cut = malloc(k ? k : 1); /* exactly k bytes, unterminated */
            memcpy(cut, text, k);
            doc = NULL;
            err[0] = '\0';
            bb_status_t st = bb_record_parse(cut, k, &doc, err, sizeof err);
            prefix_cases++;
            if (st == BB_ERR_PARSE && doc == NULL)
                prefix_failures++;
            else
                cJSON_Delete(doc);
            if (strncmp(err, "byte ", 5) != 0)
                bad_err++;
            free(cut);
        }
        check_at(prefix_failures == prefix_cases && bad_err == 0, __LINE__,
                 "%d of %d truncations rejected, %d without a byte offset",
                 prefix_failures, prefix_cases, bad_err);

        /* Byte mutations of the whole record: never a crash; a result is
         * either a valid shape or a clean error. */
        int odd = 0;
        static const char subst[] = {'\0', '"', '{', ']', 'x', ':', ','};
        for (size_t k = 0; k < len; k += 3)
            for (size_t v = 0; v < sizeof subst; v++) {
                char *m = malloc(len);
                memcpy(m, text, len);
                m[k] = subst[v];
                doc = NULL;
                err[0] = '\0';
                bb_status_t st = bb_record_parse(m, len, &doc, err, sizeof err);
                if (st == BB_OK)
                    cJSON_Delete(doc);
                else if (st != BB_ERR_PARSE || doc != NULL || err[0] == '\0')
                    odd++;
                free(m);
            }
        check_at(odd == 0, __LINE__, "%d mutated inputs gave no clean answer", odd);
        free(text);
    }

    /* A missing directory: the write fails, says so, and creates nothing. */
    char missing[512];
    snprintf(missing, sizeof missing, "%s/no-such-dir/rec.json", tmpdir);
    err[0] = '\0';
    bb_status_t st = bb_record_write(rec, missing, err, sizeof err);
    check_at(st == BB_ERR_IO && strstr(err, "does not exist") != NULL
             && strstr(err, "no-such-dir") != NULL, __LINE__,
             "missing dir: %d \"%s\"", (int)st, err);
    CHECK(dir_entries(tmpdir) == 1);
    err[0] = '\0';
    check_at(bb_record_check_path(missing, err, sizeof err) == BB_ERR_IO
             && strstr(err, "does not exist") != NULL, __LINE__,
             "check missing dir: \"%s\"", err);

    /* The path is a directory. */
    err[0] = '\0';
    check_at(bb_record_write(rec, tmpdir, err, sizeof err) == BB_ERR_IO
             && strstr(err, "is a directory") != NULL, __LINE__,
             "dir as path: \"%s\"", err);
    err[0] = '\0';
    check_at(bb_record_check_path(tmpdir, err, sizeof err) == BB_ERR_IO
             && strstr(err, "is a directory") != NULL, __LINE__,
             "check dir as path: \"%s\"", err);
    CHECK(dir_entries(tmpdir) == 1);

    /* A directory component that is a regular file. */
    snprintf(missing, sizeof missing, "%s/rec.json/x.json", tmpdir);
    err[0] = '\0';
    check_at(bb_record_write(rec, missing, err, sizeof err) == BB_ERR_IO
             && strstr(err, "not a directory") != NULL, __LINE__,
             "file as dir: \"%s\"", err);

    /* An unwritable directory (root writes anywhere, so only as a user). */
    char ro[300];
    snprintf(ro, sizeof ro, "%s/ro", tmpdir);
    CHECK(mkdir(ro, 0500) == 0);
    snprintf(missing, sizeof missing, "%s/rec.json", ro);
    if (geteuid() != 0) {
        err[0] = '\0';
        check_at(bb_record_check_path(missing, err, sizeof err) == BB_ERR_IO
                 && strstr(err, "cannot create") != NULL, __LINE__,
                 "unwritable: \"%s\"", err);
        check_at(bb_record_write(rec, missing, err, sizeof err) == BB_ERR_IO,
                 __LINE__, "unwritable write");
        CHECK(dir_entries(ro) == 0);
    } else {
        printf("note: running as root, unwritable-directory checks skipped\n");
    }
    rmdir(ro);
    /* Also as root: /proc takes no new files. */
    struct stat proc;
    if (stat("/proc/self", &proc) == 0) {
        err[0] = '\0';
        check_at(bb_record_check_path("/proc/bbench-rec.json", err, sizeof err)
                 == BB_ERR_IO && strstr(err, "cannot create") != NULL, __LINE__,
                 "/proc: \"%s\"", err);
        check_at(bb_record_write(rec, "/proc/bbench-rec.json", err, sizeof err)
                 == BB_ERR_IO && access("/proc/bbench-rec.json", F_OK) != 0,
                 __LINE__, "/proc write: \"%s\"", err);
    }

    /* A write that fails midway (file size limit: write gives EFBIG) leaves
     * the old record intact and no temporary behind. */
    struct rlimit old_lim, small;
    size_t before_len = 0;
    char *before = slurp(path, &before_len);
    if (before != NULL && getrlimit(RLIMIT_FSIZE, &old_lim) == 0) {
        signal(SIGXFSZ, SIG_IGN);
        small = old_lim;
        small.rlim_cur = 64;
        CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
        err[0] = '\0';
        st = bb_record_write(rec, path, err, sizeof err);
        setrlimit(RLIMIT_FSIZE, &old_lim);
        signal(SIGXFSZ, SIG_DFL);
        check_at(st == BB_ERR_IO && strstr(err, "writing") != NULL, __LINE__,
                 "short write: %d \"%s\"", (int)st, err);
        size_t after_len = 0;
        char *after = slurp(path, &after_len);
        CHECK(after != NULL && after_len == before_len
              && memcmp(after, before, before_len) == 0);
        CHECK(dir_entries(tmpdir) == 1);
        free(after);

        /* The same into a new name: nothing appears. */
        char fresh[600];
        snprintf(fresh, sizeof fresh, "%s/fresh.json", tmpdir);
        CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
        signal(SIGXFSZ, SIG_IGN);
        st = bb_record_write(rec, fresh, err, sizeof err);
        setrlimit(RLIMIT_FSIZE, &old_lim);
        signal(SIGXFSZ, SIG_DFL);
        CHECK(st == BB_ERR_IO && access(fresh, F_OK) != 0);
        CHECK(dir_entries(tmpdir) == 1);
    }
    free(before);

    /* Reading: missing file, a directory, bad JSON: err names the file. */
    doc = NULL;
    snprintf(missing, sizeof missing, "%s/absent.json", tmpdir);
    err[0] = '\0';
    check_at(bb_record_read(missing, &doc, err, sizeof err) == BB_ERR_IO
             && doc == NULL && strstr(err, "absent.json") != NULL, __LINE__,
             "read missing: \"%s\"", err);
    err[0] = '\0';
    check_at(bb_record_read(tmpdir, &doc, err, sizeof err) != BB_OK && doc == NULL
             && strstr(err, tmpdir) != NULL, __LINE__, "read dir: \"%s\"", err);
    snprintf(missing, sizeof missing, "%s/bad.json", tmpdir);
    FILE *f = fopen(missing, "w");
    fputs("{\"schema\": \"bbench.record/1\", \"benchmark\": 3, \"points\": []}", f);
    fclose(f);
    err[0] = '\0';
    check_at(bb_record_read(missing, &doc, err, sizeof err) == BB_ERR_PARSE
             && strstr(err, "bad.json: benchmark: not a string") != NULL, __LINE__,
             "read bad: \"%s\"", err);
    unlink(missing);

    unlink(path);
    bb_record_free(rec);
    bb_record_free(NULL);
}

/* text must be rejected with BB_ERR_PARSE and err containing want. */
static void reject(int line, const char *text, const char *want)
{
    char err[512] = "";
    cJSON *doc = NULL;
    bb_status_t st = bb_record_parse(text, strlen(text), &doc, err, sizeof err);
    check_at(st == BB_ERR_PARSE && doc == NULL && strstr(err, want) != NULL, line,
             "parse %s: status %d err \"%s\", wanted \"%s\"", text, (int)st, err,
             want);
    cJSON_Delete(doc);
}

#define HEAD "{\"schema\":\"bbench.record/1\",\"benchmark\":\"sum\","
#define OKQ "{\"value\":1,\"unit\":\"s\"}"
#define OKP "{\"parameters\":{},\"status\":\"ok\",\"quantities\":{\"elapsed\":" OKQ "}}"

static void test_parse_rejects(void)
{
    /* Minimal valid records first, so the rejections below are about the
     * one thing each breaks. */
    char err[256] = "";
    cJSON *doc = NULL;
    const char *good = HEAD "\"points\":[" OKP "," OKP "]}";
    check_at(bb_record_parse(good, strlen(good), &doc, err, sizeof err) == BB_OK,
             __LINE__, "good: %s", err);
    cJSON_Delete(doc);
    const char *empty_points = HEAD "\"points\":[]}";
    CHECK(bb_record_parse(empty_points, strlen(empty_points), &doc, err,
                          sizeof err) == BB_OK);
    cJSON_Delete(doc);

    /* Malformed JSON: the byte offset of the error. */
    reject(__LINE__, "[1, 2, x]", "byte 7");
    reject(__LINE__, "{\"schema\" 1}", "byte 10");
    reject(__LINE__, HEAD "\"points\":[]} trailing", "byte ");
    reject(__LINE__, "", "empty");
    reject(__LINE__, "   ", "byte ");

    reject(__LINE__, "[]", "top level: not an object");
    reject(__LINE__, "42", "top level: not an object");
    reject(__LINE__, "{\"benchmark\":\"sum\",\"points\":[]}", "schema: missing");
    reject(__LINE__, "{\"schema\":1,\"benchmark\":\"sum\",\"points\":[]}",
           "schema: not a string");
    reject(__LINE__, "{\"schema\":\"bbench.record/2\",\"benchmark\":\"sum\","
           "\"points\":[]}", "schema: \"bbench.record/2\" is not \"bbench.record/1\"");
    reject(__LINE__, "{\"schema\":\"bbench.record/1\",\"points\":[]}",
           "benchmark: missing");
    reject(__LINE__, HEAD "\"pts\":[]}", "points: missing");
    reject(__LINE__, HEAD "\"points\":{}}", "points: not an array");
    reject(__LINE__, HEAD "\"points\":[" OKP ",7]}", "points[1]: not an object");
    reject(__LINE__, HEAD "\"points\":[" OKP ",{\"status\":\"ok\",\"quantities\":{}}]}",
           "points[1].parameters: missing");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":[],\"status\":\"ok\","
           "\"quantities\":{}}]}", "points[0].parameters: not an object");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"quantities\":{}}]}",
           "points[0].status: missing");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"status\":\"fine\","
           "\"quantities\":{}}]}", "points[0].status: not \"ok\" or \"refused\"");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"status\":\"ok\"}]}",
           "points[0].quantities: missing");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"status\":\"ok\","
           "\"quantities\":[]}]}", "points[0].quantities: not an object");
    reject(__LINE__, HEAD "\"points\":[" OKP "," OKP "," OKP ",{\"parameters\":{},"
           "\"status\":\"refused\",\"quantities\":{\"elapsed\":{\"value\":1}}}]}",
           "points[3].quantities.elapsed: unit missing");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"status\":\"ok\","
           "\"quantities\":{\"phase.test\":{\"unit\":5}}}]}",
           "points[0].quantities.phase.test: unit is not a string");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"status\":\"ok\","
           "\"quantities\":{\"elapsed\":3}}]}",
           "points[0].quantities.elapsed: not an object");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"status\":\"ok\","
           "\"first_call\":{\"elapsed\":{}},\"quantities\":{}}]}",
           "points[0].first_call.elapsed: unit missing");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{},\"status\":\"ok\","
           "\"refusal\":\"x\",\"quantities\":{}}]}",
           "points[0].refusal: neither null nor an object");

    /* Not UTF-8: refused with the offset of the first bad byte. */
    reject(__LINE__, HEAD "\"points\":[],\"x\":\"r\xff\"}", "byte 64: not UTF-8");
    reject(__LINE__, HEAD "\"points\":[],\"x\":\"\xc0\xaf\"}", "not UTF-8");
    reject(__LINE__, HEAD "\"points\":[],\"x\":\"\xed\xa0\x80\"}", "not UTF-8");
    /* A member twice means two things at once (cJSON finds the first, other
     * readers the last): refused, with the object named. */
    reject(__LINE__, HEAD "\"points\":[],\"benchmark\":\"transfer\"}",
           "top level: member \"benchmark\" appears twice");
    reject(__LINE__, HEAD "\"points\":[" OKP ",{\"parameters\":{},\"status\":\"ok\","
           "\"quantities\":{\"elapsed\":" OKQ ",\"x\":" OKQ ",\"elapsed\":" OKQ "}}]}",
           "points[1].quantities: member \"elapsed\" appears twice");
    reject(__LINE__, HEAD "\"points\":[{\"parameters\":{\"count\":1,\"count\":2},"
           "\"status\":\"ok\",\"quantities\":{}}]}",
           "points[0].parameters: member \"count\" appears twice");

    /* A NUL inside the stated length is not JSON text. */
    const char nul[] = HEAD "\"points\":[]}\0junk";
    err[0] = '\0';
    CHECK(bb_record_parse(nul, sizeof nul - 1, &doc, err, sizeof err)
          == BB_ERR_PARSE && strstr(err, "NUL") != NULL);
    /* ...but the same text cut before the NUL is fine. */
    CHECK(bb_record_parse(nul, strlen(nul), &doc, err, sizeof err) == BB_OK);
    cJSON_Delete(doc);

    /* Deep nesting is refused by cJSON's limit, not by a stack overflow. */
    size_t depth = 100000;
    char *deep = malloc(2 * depth);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    doc = NULL;
    CHECK(bb_record_parse(deep, 2 * depth, &doc, err, sizeof err) == BB_ERR_PARSE
          && doc == NULL);
    free(deep);

    /* Argument errors. */
    CHECK(bb_record_parse(NULL, 5, &doc, err, sizeof err) == BB_ERR_ARG);
    CHECK(bb_record_parse("{}", 2, NULL, err, sizeof err) == BB_ERR_ARG);
    CHECK(bb_record_parse(NULL, 0, &doc, NULL, 0) == BB_ERR_PARSE);
}

/* A file at path with mtime age seconds in the past. */
static void make_old_file(const char *path, int age)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL)
        return;
    fputs("{\"half\": ", f);
    fclose(f);
    struct timeval tv[2];
    gettimeofday(&tv[0], NULL);
    tv[0].tv_sec -= age;
    tv[1] = tv[0];
    CHECK(utimes(path, tv) == 0);
}

/* Output targets that are not regular files, over-long names, stale
 * temporaries of a killed writer, non-UTF-8 strings, and the reader on a
 * FIFO and on duplicate members. */
static void test_hostile_targets(void)
{
    char dir[300], path[600], other[600], err[512];
    snprintf(dir, sizeof dir, "%s/hostile", tmpdir);
    CHECK(mkdir(dir, 0700) == 0);
    /* A non-UTF-8 argument: bytes an invalid sequence each, a truncated
     * one at the end, a surrogate, past U+10FFFF; valid text kept. */
    static char a0[] = "bbench-x", a1[] = "r\xff.json", a2[] = "\xc3\x28",
                a3[] = "\xed\xa0\x80", a4[] = "\xf4\x90\x80\x80",
                a5[] = "caf\xc3\xa9 \xe2\x82\xac", a6[] = "end\xe2\x82";
    char *argv[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
    bb_record_t *rec = NULL;
    CHECK(bb_record_create("sum", 7, argv, &rec) == BB_OK);
    if (rec == NULL)
        return;

    /* A FIFO, a symbolic link to it, and a directory are refused by the
     * start-up check and by the write, and stay what they were. */
    snprintf(path, sizeof path, "%s/fifo.json", dir);
    CHECK(mkfifo(path, 0600) == 0);
    err[0] = '\0';
    check_at(bb_record_check_path(path, err, sizeof err) != BB_OK
             && strstr(err, "FIFO") != NULL, __LINE__, "check fifo: \"%s\"", err);
    err[0] = '\0';
    check_at(bb_record_write(rec, path, err, sizeof err) != BB_OK
             && strstr(err, "FIFO") != NULL, __LINE__, "write fifo: \"%s\"", err);
    struct stat sb;
    CHECK(lstat(path, &sb) == 0 && S_ISFIFO(sb.st_mode));
    snprintf(other, sizeof other, "%s/link.json", dir);
    CHECK(symlink("fifo.json", other) == 0);
    err[0] = '\0';
    check_at(bb_record_write(rec, other, err, sizeof err) != BB_OK
             && strstr(err, "symbolic link to a FIFO") != NULL, __LINE__,
             "write link to fifo: \"%s\"", err);
    CHECK(lstat(other, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(lstat(path, &sb) == 0 && S_ISFIFO(sb.st_mode));

    /* The reader does not wait for a writer on the FIFO (the alarm turns a
     * hang into a failure). */
    cJSON *doc = NULL;
    alarm(30);
    err[0] = '\0';
    check_at(bb_record_read(path, &doc, err, sizeof err) == BB_ERR_IO && doc == NULL
             && strstr(err, "not a regular file") != NULL, __LINE__,
             "read fifo: \"%s\"", err);
    alarm(0);
    unlink(other);
    unlink(path);

    /* A link to a regular file is replaced by the record; its target is
     * left alone.  A dangling link is replaced like an absent file. */
    snprintf(path, sizeof path, "%s/target.txt", dir);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs("keep\n", f);
        fclose(f);
    }
    snprintf(other, sizeof other, "%s/link.json", dir);
    CHECK(symlink("target.txt", other) == 0);
    err[0] = '\0';
    check_at(bb_record_write(rec, other, err, sizeof err) == BB_OK, __LINE__,
             "write over a link: \"%s\"", err);
    CHECK(lstat(other, &sb) == 0 && S_ISREG(sb.st_mode));
    CHECK(stat(path, &sb) == 0 && sb.st_size == 5);
    unlink(other);
    unlink(path);
    CHECK(symlink("nowhere/at/all", other) == 0);
    err[0] = '\0';
    check_at(bb_record_write(rec, other, err, sizeof err) == BB_OK, __LINE__,
             "write over a dangling link: \"%s\"", err);
    CHECK(lstat(other, &sb) == 0 && S_ISREG(sb.st_mode));

    /* The record is valid UTF-8 and reads back; each bad byte became
     * U+FFFD, valid characters stayed. */
    doc = NULL;
    err[0] = '\0';
    check_at(bb_record_read(other, &doc, err, sizeof err) == BB_OK, __LINE__,
             "read non-UTF-8 argv record: \"%s\"", err);
    const cJSON *cmd = get(doc, "command");
    CHECK(is_str(cJSON_GetArrayItem(cmd, 1), "r\xef\xbf\xbd.json"));
    CHECK(is_str(cJSON_GetArrayItem(cmd, 2), "\xef\xbf\xbd("));
    CHECK(is_str(cJSON_GetArrayItem(cmd, 3), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
    CHECK(is_str(cJSON_GetArrayItem(cmd, 4),
                 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
    CHECK(is_str(cJSON_GetArrayItem(cmd, 5), "caf\xc3\xa9 \xe2\x82\xac"));
    CHECK(is_str(cJSON_GetArrayItem(cmd, 6), "end\xef\xbf\xbd\xef\xbf\xbd"));
    cJSON_Delete(doc);
    unlink(other);

    /* Names over NAME_MAX or the path over PATH_MAX: refused before
     * anything is measured, with the reason. */
    char longname[NAME_MAX + 40];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    char *lp = malloc(PATH_MAX + 64);
    if (lp != NULL) {
        snprintf(lp, PATH_MAX + 64, "%s/%s.json", dir, longname);
        err[0] = '\0';
        check_at(bb_record_check_path(lp, err, sizeof err) != BB_OK
                 && strstr(err, "the limit is") != NULL, __LINE__,
                 "long name: \"%s\"", err);
        size_t n = 0;
        n += (size_t)snprintf(lp, PATH_MAX + 64, "%s", dir);
        while (n < PATH_MAX + 8)
            n += (size_t)snprintf(lp + n, PATH_MAX + 64 - n, "/d");
        err[0] = '\0';
        check_at(bb_record_check_path(lp, err, sizeof err) != BB_OK
                 && strstr(err, "the path is") != NULL, __LINE__,
                 "long path: \"%s\"", err);
        free(lp);
    }

    /* Temporaries: an old unlocked one of ours is what a killed writer
     * left, and goes; a fresh one, a locked one and other names stay. */
    char stale[600], fresh[600], locked[600], foreign[600];
    snprintf(stale, sizeof stale, "%s/.bbench-record.Stale1", dir);
    snprintf(fresh, sizeof fresh, "%s/.bbench-record.Fresh1", dir);
    snprintf(locked, sizeof locked, "%s/.bbench-record.Lockd1", dir);
    snprintf(foreign, sizeof foreign, "%s/.bbench-record.notours", dir);
    make_old_file(stale, 7200);
    make_old_file(fresh, 0);
    make_old_file(locked, 7200);
    make_old_file(foreign, 7200);
    int lfd = open(locked, O_RDONLY);
    CHECK(lfd >= 0 && flock(lfd, LOCK_EX) == 0);
    snprintf(path, sizeof path, "%s/r.json", dir);
    err[0] = '\0';
    check_at(bb_record_write(rec, path, err, sizeof err) == BB_OK, __LINE__,
             "write beside temporaries: \"%s\"", err);
    CHECK_MSG(access(stale, F_OK) != 0, "stale temporary %s left", stale);
    CHECK(access(fresh, F_OK) == 0);
    CHECK(access(locked, F_OK) == 0);
    CHECK(access(foreign, F_OK) == 0);
    /* The start-up check tidies as well. */
    make_old_file(stale, 7200);
    CHECK(bb_record_check_path(path, err, sizeof err) == BB_OK);
    CHECK_MSG(access(stale, F_OK) != 0, "stale temporary %s left by the check", stale);
    if (lfd >= 0)
        close(lfd);
    unlink(fresh);
    unlink(locked);
    unlink(foreign);
    unlink(path);
    CHECK(dir_entries(dir) == 0);
    rmdir(dir);
    bb_record_free(rec);
}

/* A timing that lists its parts gets its remainder, NAME.other, in each
 * sample, at the whole's median and in first_call, listed last among the
 * includes; a part within 4 clock reads of zero gets a note.  Exact
 * figures: whole 10, 12, 11 us; parts a 4, 5, 4 and b 5, 6.5, 6 us. */
/* Within 1e-18 s: a difference of microsecond figures rounds at about 1e-21. */
static int close_to(const cJSON *item, double want)
{
    return cJSON_IsNumber(item) && fabs(item->valuedouble - want) <= 1e-18;
}

static void test_remainders(void)
{
    char a0[] = "bbench-sum";
    char *argv[] = {a0, NULL};
    bb_record_t *rec = NULL;
    CHECK(bb_record_create("sum", 1, argv, &rec) == BB_OK);
    if (rec == NULL)
        return;
    cJSON *rt = cJSON_CreateObject(), *timer = cJSON_AddObjectToObject(rt, "timer");
    cJSON_AddNumberToObject(timer, "read_s", 25e-9);
    CHECK(bb_record_set(rec, "runtime", rt) == BB_OK);
    static const double whole[] = {10e-6, 12e-6, 11e-6}, a[] = {4e-6, 5e-6, 4e-6},
                        b[] = {5e-6, 6.5e-6, 6e-6}, tiny[] = {5e-8, 6e-8, 4e-8};
    static const char *const inc[] = {"a", "b", NULL}, *const inc2[] = {"tiny", NULL};
    cJSON *qs = cJSON_CreateObject(), *first = cJSON_CreateObject();
    bb_quantities_add(qs, "elapsed", bb_quantity_timing(whole, 3, "call/max-rank", inc));
    cJSON *qa = bb_quantity_timing(a, 3, "call/max-rank", NULL);
    cJSON_AddNumberToObject(qa, "at_whole_median", 4e-6);  /* the sample of 11 us */
    bb_quantities_add(qs, "a", qa);
    cJSON *qb = bb_quantity_timing(b, 3, "call/max-rank", NULL);
    cJSON_AddNumberToObject(qb, "at_whole_median", 6e-6);
    bb_quantities_add(qs, "b", qb);
    /* A whole whose part is 50 ns at its median: within 4 reads of 25 ns. */
    bb_quantities_add(qs, "w2", bb_quantity_timing(whole, 3, "call/max-rank", inc2));
    cJSON *qt = bb_quantity_timing(tiny, 3, "call/max-rank", NULL);
    cJSON_AddNumberToObject(qt, "at_whole_median", 5e-8);
    bb_quantities_add(qs, "tiny", qt);
    bb_quantities_add(first, "elapsed", bb_quantity_includes(
                                            bb_quantity_value(20e-6, "s", "call/max-rank"), inc));
    bb_quantities_add(first, "a", bb_quantity_value(8e-6, "s", "call/max-rank"));
    bb_quantities_add(first, "b", bb_quantity_value(9e-6, "s", "call/max-rank"));
    CHECK(bb_record_add_point(rec, NULL, "ok", NULL, first, qs) == BB_OK);

    const cJSON *p = cJSON_GetArrayItem(get(bb_record_json(rec), "points"), 0);
    const cJSON *q = get(p, "quantities"), *other = get(q, "elapsed.other");
    const cJSON *s = get(other, "samples");
    CHECK(cJSON_GetArraySize(s) == 3 && close_to(cJSON_GetArrayItem(s, 0), 1e-6)
          && close_to(cJSON_GetArrayItem(s, 1), 0.5e-6) && close_to(cJSON_GetArrayItem(s, 2), 1e-6));
    CHECK(close_to(get(other, "at_whole_median"), 1e-6) && is_str(get(other, "unit"), "s")
          && is_str(get(other, "scope"), "call/max-rank"));
    const cJSON *inc_out = get(get(q, "elapsed"), "includes");
    CHECK(cJSON_GetArraySize(inc_out) == 3
          && is_str(cJSON_GetArrayItem(inc_out, 2), "elapsed.other"));
    CHECK(close_to(get(get(get(p, "first_call"), "elapsed.other"), "value"), 3e-6));
    CHECK(cJSON_GetArraySize(get(get(get(p, "first_call"), "elapsed"), "includes")) == 3);
    /* The near-zero note: on tiny (50 ns < 100 ns), not on a (4 us). */
    CHECK(cJSON_IsString(get(get(q, "tiny"), "note"))
          && strstr(get(get(q, "tiny"), "note")->valuestring, "within 4 clock reads") != NULL);
    CHECK(get(get(q, "a"), "note") == NULL && get(get(q, "elapsed"), "note") == NULL);
    /* w2's remainder: 11 us - 50 ns at the median, its samples every one positive. */
    CHECK(close_to(get(get(q, "w2.other"), "at_whole_median"), 11e-6 - 5e-8));
    bb_record_free(rec);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/bbrec.XXXXXX",
             base && base[0] ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        printf("FAIL: mkdtemp %s: %s\n0 passed, 1 failed\n", tmpdir,
               strerror(errno));
        return 1;
    }
    test_quantity_edges();
    test_remainders();
    test_write_read();
    test_parse_rejects();
    test_hostile_targets();
    if (rmdir(tmpdir) != 0) {
        printf("FAIL: temp dir %s not empty at the end\n", tmpdir);
        failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return check_verdict();
}
