/* record-get: print one value of a bbench record, for shell tests.
 *
 *   record-get FILE PATH     PATH is dot-separated: points.0.status,
 *                            points.1.quantities.elapsed.median, points.#
 *
 * Reads FILE with bb_record_read (so the record is also validated), prints
 * strings bare, numbers with %.17g, other values as compact JSON, and "#"
 * as the size of an array or object.  Exit 1 if the path does not exist,
 * 2 if the record is invalid, 3 if the member exists and is null (it still
 * prints "null"): a test that wants a value cannot mistake null for one. */
#include "config.h"
#include "record/bbrecord.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    char err[512];
    cJSON *doc = NULL;
    if (argc != 3) {
        fprintf(stderr, "usage: record-get FILE PATH\n");
        return 2;
    }
    if (bb_record_read(argv[1], &doc, err, sizeof err) != BB_OK) {
        fprintf(stderr, "record-get: %s\n", err);
        return 2;
    }
    const cJSON *node = doc;
    const char *rest = argv[2];
    /* Member names contain dots (phase.prepare): at each step take the
     * longest member name that the rest of the path starts with. */
    while (node != NULL && *rest != '\0') {
        if (strcmp(rest, "#") == 0) {
            printf("%d\n", cJSON_GetArraySize(node));
            cJSON_Delete(doc);
            return 0;
        }
        const cJSON *next = NULL;
        size_t used = 0;
        if (cJSON_IsArray(node)) {
            char *end;
            long i = strtol(rest, &end, 10);
            if (end != rest && (*end == '.' || *end == '\0')) {
                next = cJSON_GetArrayItem(node, (int)i);
                used = (size_t)(end - rest);
            }
        } else {
            const cJSON *child;
            cJSON_ArrayForEach(child, node) {
                size_t n = strlen(child->string);
                if (n > used && strncmp(rest, child->string, n) == 0
                    && (rest[n] == '.' || rest[n] == '\0')) {
                    next = child;
                    used = n;
                }
            }
        }
        node = next;
        rest += used;
        if (*rest == '.')
            rest++;
    }
    int rc = 0;
    if (node == NULL) {
        fprintf(stderr, "record-get: %s: no such member\n", argv[2]);
        rc = 1;
    } else if (cJSON_IsNull(node)) {
        printf("null\n");
        rc = 3;
    } else if (cJSON_IsString(node)) {
        printf("%s\n", node->valuestring);
    } else if (cJSON_IsNumber(node)) {
        printf("%.17g\n", node->valuedouble);
    } else {
        char *text = cJSON_PrintUnformatted(node);
        printf("%s\n", text ? text : "?");
        free(text);
    }
    cJSON_Delete(doc);
    return rc;
}
