/* fuzz-record.c: fuzz target for the record reader that bbench-compare uses.
 *
 * One input is one candidate record file.  It goes through the whole read
 * path of bbench-compare: bb_record_set_load (bb_record_read, the shape
 * checks, the comparison checks); a set that loads is then compared with
 * itself, rendered in every format and extracted as TSV, so that every
 * reader of record contents sees fuzzed data.  Built two ways: with clang's
 * libFuzzer (scripts/fuzz-record.sh) and, for make check, with replay.c,
 * which feeds the stored corpus deterministically. */
#include "config.h"
#include "record/bbrecord.h"
#include "fuzz-record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The reader works on files: write the input to a private one. */
    char path[] = "/tmp/bbfuzz.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);

    char err[512];
    bb_record_set_t *set = NULL;
    if (done == size && bb_record_set_load(path, &set, err, sizeof err) == BB_OK) {
        bb_compare_options_t opt = {.tolerance = BB_COMPARE_DEFAULT_TOLERANCE};
        cJSON *report = NULL;
        bb_compare_summary_t summary;
        if (bb_compare_sets(set, set, &opt, &report, &summary, err, sizeof err) == BB_OK) {
            (void)bb_compare_exit_code(&summary, 0);
            for (int f = BB_COMPARE_TABLE; f <= BB_COMPARE_JSON; f++)
                bb_free(bb_compare_render(report, (bb_compare_format_t)f, 1));
            cJSON_Delete(report);
        }
        const char *const names[] = { "elapsed", "communication.payload" };
        char *tsv = NULL;
        if (bb_record_set_extract(set, names, 2, &tsv, err, sizeof err) == BB_OK)
            bb_free(tsv);
        bb_record_set_free(set);
    }
    unlink(path);
    return 0;
}
