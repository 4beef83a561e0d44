/* text.c: growable strings, canonical JSON (object members sorted, numbers
 * exact) and the small text helpers every part of the comparison uses.  Part
 * of bbench-compare's comparison (compare.h); MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bb_buf_reserve(bb_buf_t *b, size_t extra)
{
    if (b->failed || b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (s == NULL) {
        b->failed = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

void bb_buf_add(bb_buf_t *b, const char *text, size_t n)
{
    bb_buf_reserve(b, n);
    if (b->failed)
        return;
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void bb_buf_puts(bb_buf_t *b, const char *text)
{
    bb_buf_add(b, text, strlen(text));
}

void bb_buf_printf(bb_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    bb_buf_reserve(b, (size_t)n);
    if (b->failed)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The finished string (never NULL unless allocation failed). */
char *bb_buf_take(bb_buf_t *b)
{
    if (!b->failed && b->s == NULL)
        bb_buf_add(b, "", 0);
    if (b->failed) {
        free(b->s);
        return NULL;
    }
    return b->s;
}

char *bb_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* A name that holds a control character would break the lines of the
 * reports (a newline could forge a summary line): not a usable name. */
int bb_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

/* The longest prefix of s of at most max bytes that does not split a
 * UTF-8 sequence. */
int bb_utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return (int)n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return (int)max;
}

void bb_canon_number(bb_buf_t *b, double v)
{
    /* Integers (the common case: counts, bytes) print without exponent so
     * that 1048576 and 1.048576e6 agree. */
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0) {
        bb_buf_printf(b, "%.0f", v);
        return;
    }
    /* The shortest of %.15g and %.17g that reads back exactly. */
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
        snprintf(tmp, sizeof tmp, "%.17g", v);
    bb_buf_puts(b, tmp);
}

void bb_canon_string(bb_buf_t *b, const char *s)
{
    bb_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            bb_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            bb_buf_printf(b, "\\u%04x", *p);
        else
            bb_buf_add(b, (const char *)p, 1);
    }
    bb_buf_puts(b, "\"");
}

static int bb_cmp_item_names(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

void bb_canon(bb_buf_t *b, const cJSON *item)
{
    if (item == NULL || cJSON_IsNull(item)) {
        bb_buf_puts(b, "null");
    } else if (cJSON_IsTrue(item)) {
        bb_buf_puts(b, "true");
    } else if (cJSON_IsFalse(item)) {
        bb_buf_puts(b, "false");
    } else if (cJSON_IsNumber(item)) {
        bb_canon_number(b, item->valuedouble);
    } else if (cJSON_IsString(item)) {
        bb_canon_string(b, item->valuestring);
    } else if (cJSON_IsArray(item)) {
        bb_buf_puts(b, "[");
        const cJSON *e;
        int first = 1;
        cJSON_ArrayForEach(e, item) {
            if (!first)
                bb_buf_puts(b, ",");
            first = 0;
            bb_canon(b, e);
        }
        bb_buf_puts(b, "]");
    } else if (cJSON_IsObject(item)) {
        size_t n = (size_t)cJSON_GetArraySize(item), i = 0;
        const cJSON **v = malloc((n ? n : 1) * sizeof *v);
        if (v == NULL) {
            b->failed = 1;
            return;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, item) v[i++] = e;
        qsort(v, n, sizeof *v, bb_cmp_item_names);
        bb_buf_puts(b, "{");
        for (i = 0; i < n; i++) {
            if (i)
                bb_buf_puts(b, ",");
            bb_canon_string(b, v[i]->string ? v[i]->string : "");
            bb_buf_puts(b, ":");
            bb_canon(b, v[i]);
        }
        bb_buf_puts(b, "}");
        free(v);
    } else {
        bb_buf_puts(b, "?");
    }
}

char *bb_canon_string_of(const cJSON *item)
{
    bb_buf_t b = {0};
    bb_canon(&b, item);
    return bb_buf_take(&b);
}

/* A scalar as a human reads it: strings bare, everything else canonical. */
void bb_plain(bb_buf_t *b, const cJSON *item)
{
    if (cJSON_IsString(item))
        bb_buf_puts(b, item->valuestring);
    else
        bb_canon(b, item);
}

int bb_json_equal(const cJSON *a, const cJSON *b)
{
    char *x = bb_canon_string_of(a), *y = bb_canon_string_of(b);
    int eq = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return eq;
}

const cJSON *bb_json_path(const cJSON *doc, const char *dotted)
{
    char name[64];
    const cJSON *cur = doc;
    while (cur != NULL && *dotted) {
        const char *dot = strchr(dotted, '.');
        size_t n = dot ? (size_t)(dot - dotted) : strlen(dotted);
        if (n >= sizeof name)
            return NULL;
        memcpy(name, dotted, n);
        name[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, name);
        dotted += n + (dot != NULL);
    }
    return cur;
}

const char *bb_get_str(const cJSON *o, const char *name)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
    return v ? v : "";
}

const char *bb_seconds_unit(double seconds, double *scale_out)
{
    double a = fabs(seconds);
    if (a < 1e-6) { *scale_out = 1e9; return "ns"; }
    if (a < 1e-3) { *scale_out = 1e6; return "us"; }
    if (a < 1.0) { *scale_out = 1e3; return "ms"; }
    *scale_out = 1.0;
    return "s";
}
