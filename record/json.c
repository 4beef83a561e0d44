/* json.c: small JSON builders every record writer shares. */
#include "config.h"
#include "bbrecord.h"

#include <stdio.h>

void bb_json_add_or_null(cJSON *o, const char *name, const char *value,
                         const char *reason)
{
    if (value != NULL && *value) {
        cJSON_AddStringToObject(o, name, value);
        return;
    }
    char key[64];
    cJSON_AddNullToObject(o, name);
    snprintf(key, sizeof key, "%s_reason", name);
    cJSON_AddStringToObject(o, key, reason);
}
