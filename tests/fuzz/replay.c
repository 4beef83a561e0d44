/* replay.c: run the fuzz target once on every file of a corpus, in name
 * order, so that make check replays what the fuzzer found without clang.
 * A crash or sanitizer report fails the test; so does an empty corpus. */
#include "config.h"
#include "fuzz-record.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 0;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            unsigned char *grown = realloc(buf, cap * 2);
            if (grown == NULL)
                free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL)
        return 0;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 1;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    size_t replayed = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (d == NULL) {
            replayed += (size_t)replay_file(argv[i]);
            continue;
        }
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char **grown = realloc(names, (n + 1) * sizeof *names);
            if (grown == NULL)
                break;
            names = grown;
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[n] = malloc(len);
            snprintf(names[n], len, "%s/%s", argv[i], e->d_name);
            n++;
        }
        closedir(d);
        qsort(names, n, sizeof *names, name_cmp);
        for (size_t k = 0; k < n; k++) {
            replayed += (size_t)replay_file(names[k]);
            free(names[k]);
        }
        free(names);
    }
    printf("replayed %zu inputs\n", replayed);
    printf("%zu passed, 0 failed\n", replayed);
    return replayed > 0 ? 0 : 1;
}
