/* bbench-compare: compare two sets of bbench records (regressions, contract
 * changes, provenance), or extract plot data from one.  Parse, run, report:
 * the work is in the files of compare/.  It links the record library alone (no
 * MPI), so it runs on a login node or in CI without a launcher. */
#include "config.h"
#include "record/bbrecord.h"
#include "common/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "bbench-compare"

/* --help: usage_text with the rule, wrapped, where it says %s. */
static const char usage_text[] =
    "Usage: " PROG " [OPTION]... BASE CAND\n"
    "       " PROG " --extract [--quantity NAME[,NAME]...] RECORDS\n"
    "Compare the bbench records in CAND with those in BASE.  BASE, CAND and\n"
    "RECORDS are record files or directories of *.json records.\n"
    "\n"
    "Points match by benchmark, parameters (member order ignored), rank\n"
    "count (topology.ranks) and host count; unmatched points are listed, and\n"
    "a base point the candidate lacks (a lost point) fails unless\n"
    "--allow-missing or --report.  Timings are quantities with unit s, a\n"
    "median and a range [min, max].  The rule:\n"
    "%s"
    "Quantities the base declares \"deterministic\": true (a contract:\n"
    "payload and tracked bytes, request credit, batches, polls), the\n"
    "declarations (\"deterministic\", \"scope\") of quantities in both, the\n"
    "records' vocabulary and the point status (ok or refused, and the\n"
    "refusal) must be equal: a difference is a contract change.  The\n"
    "candidate cannot exempt a quantity by declaring it a measurement: the\n"
    "base's declaration decides.  Differences of provenance (MPI library,\n"
    "thread levels, build flags, CPU model, kernel, OS, machine, binding) are\n"
    "warnings, named field by field; the kernel rate, load average and timer\n"
    "resolution the records hold are compared to warn when base and\n"
    "candidate ran on visibly different machines.  JSON files in a directory\n"
    "that are not records (no schema, or another kind such as a saved\n"
    "bbench.compare/1 report) are skipped with a warning; a record of\n"
    "another version (bbench.record/2) is unusable input.  Every median and\n"
    "range must agree with its samples (relative difference at most 1e-6).\n"
    "\n"
    "Options:\n"
    "  -t, --tolerance T   relative tolerance of the rule (default 0.10)\n"
    "      --format F      table (default), markdown or json\n"
    "      --report        report mode for CI: timings and lost points are\n"
    "                      shown but never fail; exit 1 only for a contract\n"
    "                      change\n"
    "      --allow-missing accept lost points (listed, not failed)\n"
    "      --time-oversubscribed  judge the timings of records that say\n"
    "                      they were oversubscribed (withheld by default:\n"
    "                      their ranks time-shared cores)\n"
    "      --ignore-parameter L  leave these parameters (comma list,\n"
    "                      repeatable) out of matching, e.g. a budget-chosen\n"
    "                      reps\n"
    "  -a, --all           also list every timing of every matched point\n"
    "                      (default: only what changed)\n"
    "      --details FILE  write the whole report (every timing) to FILE as\n"
    "                      well, in the same format; markdown output longer\n"
    "                      than 60,000 characters is cut there and names FILE.\n"
    "                      FILE must be a regular file or a new path, not a\n"
    "                      BASE or CAND file nor inside their directories\n"
    "      --extract       print tab-separated plot data of RECORDS (one\n"
    "                      line per point, parameters as columns)\n"
    "      --quantity L    quantities to extract (comma list, repeatable;\n"
    "                      default elapsed): columns NAME, NAME.min, NAME.max\n"
    "  -h, --help          show this help and exit\n"
    "  -V, --version       show the version and exit\n"
    "\n"
    "Exit status: 0 nothing regressed, 1 a regression, a lost point or a\n"
    "contract change (with --report: a contract change), 2 unusable input\n"
    "(missing file, not a regular file, malformed JSON, unknown schema, a\n"
    "summary that disagrees with its samples, a candidate quantity whose\n"
    "unit or shape differs from the base, a missing timing, a negative time,\n"
    "nothing matched), an output that would replace an input or is not a\n"
    "regular file, or bad usage, 3 the output could not be written (e.g. a\n"
    "full disk) or out of memory.\n";

/* rc, or BB_EXIT_FATAL when what went to stdout did not all arrive: a
 * report cut short must not pass for a verdict. */
static int finish_stdout(int rc)
{
    int failed = ferror(stdout);
    if (fflush(stdout) != 0)
        failed = 1;
    if (fclose(stdout) != 0)
        failed = 1;
    if (failed) {
        fprintf(stderr, PROG ": writing the output failed: %s\n", strerror(errno));
        return BB_EXIT_FATAL;
    }
    return rc;
}

/* text on stdout in lines of at most width characters (words are not
 * split), each after indent. */
static void put_wrapped(const char *text, const char *indent, size_t width)
{
    size_t col = 0;
    const char *p = text;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        if (col > 0 && col + 1 + n > width) {
            fputc('\n', stdout);
            col = 0;
        }
        if (col == 0) {
            fputs(indent, stdout);
            col = strlen(indent);
        } else {
            fputc(' ', stdout);
            col++;
        }
        fwrite(p, 1, n, stdout);
        col += n;
        p += n;
    }
    fputc('\n', stdout);
}

static void usage_error(const char *message) __attribute__((noreturn));
static void usage_error(const char *message)
{
    fprintf(stderr, PROG ": %s\nTry '" PROG " --help'.\n", message);
    exit(BB_EXIT_USAGE);
}

/* Append the comma-separated names in text to the list. */
static int add_names(const char *text, char ***list, size_t *n)
{
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return -1;
        char **v = realloc(*list, (*n + 1) * sizeof *v);
        if (v == NULL)
            return -1;
        *list = v;
        if ((v[*n] = malloc(len + 1)) == NULL)
            return -1;
        memcpy(v[*n], p, len);
        v[*n][len] = '\0';
        (*n)++;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* A pull-request comment holds 65,536 characters: markdown stays under. */
#define BB_MARKDOWN_MAX 60000

/* The whole report, every timing, in the given format, into path: an exit
 * code.  Opened without following a link, without blocking (O_NONBLOCK: a
 * FIFO put there since the first look fails at once) and without
 * truncating, then checked again on what was opened before a byte of it
 * changes. */
static int write_details(const char *path, const bb_record_set_t *base,
                         const bb_record_set_t *cand, const cJSON *report,
                         bb_compare_format_t format)
{
    char err[1024];
    char *text = bb_compare_render(report, format, 1);
    if (text == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return BB_EXIT_FATAL;
    }
    int rc = BB_EXIT_FATAL;
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0666);
    if (fd < 0) {
        fprintf(stderr, PROG ": --details %s: %s\n", path, strerror(errno));
        rc = errno == ELOOP || errno == ENXIO ? BB_EXIT_USAGE : BB_EXIT_FATAL;
        goto free_text;
    }
    if (bb_compare_check_output(base, cand, "--details", path, fd, err, sizeof err) != BB_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        rc = BB_EXIT_USAGE;
        goto close_fd;
    }
    FILE *f = ftruncate(fd, 0) == 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        fprintf(stderr, PROG ": --details %s: %s\n", path, strerror(errno));
        goto close_fd;
    }
    int failed = fputs(text, f) < 0;
    failed |= fclose(f) != 0;
    if (failed)
        fprintf(stderr, PROG ": --details %s: %s\n", path, strerror(errno));
    else
        rc = BB_EXIT_OK;
    goto free_text;
close_fd:
    close(fd);
free_text:
    free(text);
    return rc;
}

/* text on stdout; with max > 0 and text longer, cut at the last line that
 * fits, with a closing line that says where the rest is. */
static void put_capped(const char *text, size_t max, const char *details)
{
    size_t n = strlen(text);
    if (max == 0 || n <= max) {
        fputs(text, stdout);
        return;
    }
    size_t keep = max - 400;  /* room for the closing line */
    while (keep > 0 && text[keep - 1] != '\n')
        keep--;
    fwrite(text, 1, keep, stdout);
    size_t lines = 0;
    for (const char *p = text + keep; *p; p++)
        lines += *p == '\n';
    if (details != NULL)
        printf("\n**cut at %d characters: %zu more lines; the whole report is in %s**\n",
               BB_MARKDOWN_MAX, lines, details);
    else
        printf("\n**cut at %d characters: %zu more lines (give --details FILE for the "
               "whole report)**\n", BB_MARKDOWN_MAX, lines);
}

static int run_extract(const char *path, char **quantities, size_t nq)
{
    static const char *const default_q[] = {"elapsed"};
    const char *const *q = nq ? (const char *const *)quantities : default_q;
    char err[1024];
    bb_record_set_t *set = NULL;
    if (bb_record_set_load(path, &set, err, sizeof err) != BB_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return BB_EXIT_USAGE;
    }
    char *tsv = NULL;
    bb_status_t st = bb_record_set_extract(set, q, nq ? nq : 1, &tsv, err, sizeof err);
    bb_record_set_free(set);
    if (st != BB_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return st == BB_ERR_PARSE ? BB_EXIT_USAGE : BB_EXIT_FATAL;
    }
    fputs(tsv, stdout);
    free(tsv);
    return BB_EXIT_OK;
}

int main(int argc, char **argv)
{
    /* The bbench letters: -r, -q, -i, -x and -f mean --reps, --quiet and OSU's
     * iterations, warm-up and full columns in the benchmarks, so these are
     * long-only here. */
    enum { OPT_REPORT = 256, OPT_IGNORE, OPT_EXTRACT, OPT_QUANTITY, OPT_FORMAT, OPT_DETAILS,
           OPT_ALLOW_MISSING, OPT_TIME_OVERSUBSCRIBED };
    static const struct option longopts[] = {
        {"tolerance", required_argument, NULL, 't'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"report", no_argument, NULL, OPT_REPORT},
        {"allow-missing", no_argument, NULL, OPT_ALLOW_MISSING},
        {"time-oversubscribed", no_argument, NULL, OPT_TIME_OVERSUBSCRIBED},
        {"all", no_argument, NULL, 'a'},
        {"ignore-parameter", required_argument, NULL, OPT_IGNORE},
        {"extract", no_argument, NULL, OPT_EXTRACT},
        {"quantity", required_argument, NULL, OPT_QUANTITY},
        {"details", required_argument, NULL, OPT_DETAILS},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    double tolerance = BB_COMPARE_DEFAULT_TOLERANCE;
    bb_compare_format_t format = BB_COMPARE_TABLE;
    int report_only = 0, allow_missing = 0, all_timings = 0, extract = 0;
    int time_oversubscribed = 0;
    char **quantities = NULL, **ignored = NULL;
    const char *details = NULL;
    size_t nq = 0, nignored = 0;
    char err[1024];
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:ahV", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (bb_cli_parse_double(optarg, 0.0, 100.0, &tolerance, err,
                                    sizeof err) != BB_OK) {
                char msg[1100];
                snprintf(msg, sizeof msg, "--tolerance: %s", err);
                usage_error(msg);
            }
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "table") == 0)
                format = BB_COMPARE_TABLE;
            else if (strcmp(optarg, "markdown") == 0)
                format = BB_COMPARE_MARKDOWN;
            else if (strcmp(optarg, "json") == 0)
                format = BB_COMPARE_JSON;
            else {
                snprintf(err, sizeof err,
                         "unknown format '%s' (table, markdown or json)", optarg);
                usage_error(err);
            }
            break;
        case OPT_REPORT: report_only = 1; break;
        case OPT_ALLOW_MISSING: allow_missing = 1; break;
        case OPT_TIME_OVERSUBSCRIBED: time_oversubscribed = 1; break;
        case 'a': all_timings = 1; break;
        case OPT_IGNORE:
            if (add_names(optarg, &ignored, &nignored) != 0)
                usage_error("--ignore-parameter: empty name in the list");
            break;
        case OPT_EXTRACT: extract = 1; break;
        case OPT_DETAILS: details = optarg; break;
        case OPT_QUANTITY:
            if (add_names(optarg, &quantities, &nq) != 0)
                usage_error("--quantity: empty name in the list");
            break;
        case 'h': {
            const char *at = strstr(usage_text, "%s");
            fwrite(usage_text, 1, (size_t)(at - usage_text), stdout);
            put_wrapped(BB_COMPARE_RULE, "  ", 76);
            fputs(at + 2, stdout);
            return finish_stdout(BB_EXIT_OK);
        }
        case 'V':
            printf(PROG " (bbench) %s\n", PACKAGE_VERSION);
            return finish_stdout(BB_EXIT_OK);
        case ':':
            snprintf(err, sizeof err, "option '%s' needs a value", argv[optind - 1]);
            usage_error(err);
        default:
            if (optopt)
                snprintf(err, sizeof err, "unknown option '-%c'", optopt);
            else
                snprintf(err, sizeof err, "unknown option '%s'", argv[optind - 1]);
            usage_error(err);
        }
    }
    int npaths = argc - optind;
    int rc;
    if (extract) {
        if (npaths != 1)
            usage_error("--extract takes one record file or directory");
        rc = run_extract(argv[optind], quantities, nq);
        goto free_quantities;
    }
    if (nq > 0)
        usage_error("--quantity is for --extract");
    if (npaths != 2)
        usage_error(npaths < 2 ? "missing BASE or CAND" : "too many arguments (BASE CAND)");

    bb_record_set_t *base = NULL, *cand = NULL;
    if (bb_record_set_load(argv[optind], &base, err, sizeof err) != BB_OK ||
        bb_record_set_load(argv[optind + 1], &cand, err, sizeof err) != BB_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        rc = BB_EXIT_USAGE;
        goto free_sets;
    }
    cJSON *report = NULL;
    /* Nothing the report goes to may be an input: checked before the
     * comparison, so that a refusal costs nothing and writes nothing. */
    if ((details != NULL &&
         bb_compare_check_output(base, cand, "--details", details, -1, err, sizeof err) != BB_OK) ||
        bb_compare_check_output(base, cand, "standard output", NULL, STDOUT_FILENO, err,
                                sizeof err) != BB_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        rc = BB_EXIT_USAGE;
        goto free_sets;
    }
    bb_compare_summary_t summary;
    bb_compare_options_t copts = {.tolerance = tolerance,
                                  .ignore_parameters = (const char *const *)ignored,
                                  .n_ignore = nignored,
                                  .report_only = report_only,
                                  .allow_missing = allow_missing,
                                  .time_oversubscribed = time_oversubscribed};
    bb_status_t st = bb_compare_sets(base, cand, &copts, &report, &summary,
                                     err, sizeof err);
    if (st != BB_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        rc = st == BB_ERR_PARSE ? BB_EXIT_USAGE : BB_EXIT_FATAL;
        goto free_sets;
    }
    for (int k = 0; k < 2; k++) {
        const char *why;
        for (size_t i = 0; (why = bb_record_set_skipped(k ? cand : base, i)) != NULL; i++)
            fprintf(stderr, PROG ": warning: skipped, not a record: %s\n", why);
    }
    char *text = bb_compare_render(report, format, all_timings);
    if (text == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = BB_EXIT_FATAL;
        goto free_report;
    }
    if (details != NULL &&
        (rc = write_details(details, base, cand, report, format)) != BB_EXIT_OK) {
        free(text);
        goto free_report;
    }
    put_capped(text, format == BB_COMPARE_MARKDOWN ? BB_MARKDOWN_MAX : 0, details);
    free(text);
    rc = bb_compare_exit_code(&summary, report_only);
    if (summary.matched == 0)
        fprintf(stderr, PROG ": no point of %s matches a point of %s "
                "(benchmark, parameters and topology.ranks must agree)\n",
                argv[optind], argv[optind + 1]);
    else if (summary.lost_failing > 0)
        fprintf(stderr, PROG ": %zu point%s of %s %s missing from %s (listed as LOST; "
                "--allow-missing accepts them)\n", summary.lost_failing,
                summary.lost_failing == 1 ? "" : "s", argv[optind],
                summary.lost_failing == 1 ? "is" : "are", argv[optind + 1]);
free_report:
    cJSON_Delete(report);
free_sets:
    bb_record_set_free(cand);
    bb_record_set_free(base);
free_quantities:
    for (size_t i = 0; i < nq; i++)
        free(quantities[i]);
    free(quantities);
    for (size_t i = 0; i < nignored; i++)
        free(ignored[i]);
    free(ignored);
    return finish_stdout(rc);
}
