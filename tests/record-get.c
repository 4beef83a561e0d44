/* record-get: print one value of a bbench record, for shell tests.
 *
 *   record-get FILE PATH     PATH is dot-separated: points.0.status,
 *                            points.1.quantities.elapsed.median, points.#
 *
 * Reads FILE with bb_record_read (so the record is also validated), prints
 * strings bare, numbers with %.17g, other values as compact JSON, and "#"
 * as the size of an array or object.  Exit 1 if the path does not exist,
 * 2 if the record is invalid. */
#include "config.h"
#include "bbench.h"

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
    char *path = strdup(argv[2]);
    const cJSON *node = doc;
    for (char *part = strtok(path, "."); part && node; part = strtok(NULL, ".")) {
        if (strcmp(part, "#") == 0) {
            printf("%d\n", cJSON_GetArraySize(node));
            free(path);
            cJSON_Delete(doc);
            return 0;
        }
        if (cJSON_IsArray(node)) {
            char *end;
            long i = strtol(part, &end, 10);
            node = (*end == '\0' && end != part) ? cJSON_GetArrayItem(node, (int)i) : NULL;
        } else {
            node = cJSON_GetObjectItemCaseSensitive(node, part);
        }
    }
    int rc = 0;
    if (node == NULL) {
        fprintf(stderr, "record-get: %s: no such member\n", argv[2]);
        rc = 1;
    } else if (cJSON_IsString(node)) {
        printf("%s\n", node->valuestring);
    } else if (cJSON_IsNumber(node)) {
        printf("%.17g\n", node->valuedouble);
    } else {
        char *text = cJSON_PrintUnformatted(node);
        printf("%s\n", text ? text : "?");
        free(text);
    }
    free(path);
    cJSON_Delete(doc);
    return rc;
}
