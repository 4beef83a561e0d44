/* simulated.c: what tells a simulated record's points apart from measured
 * ones (part of bbench-compare, compare.h; MPI-free).  A record whose
 * runtime.simulated is an object was made under SimGrid SMPI
 * (doc/simulate.md): its times are a model's, and comparing them with a
 * real machine's would report the model's error as a regression.  So the
 * points of a simulated record carry, in their matching key and label, the
 * simulator's version and the platform's SHA-256: they match only points
 * simulated alike, and are unmatched against measured ones. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

void bb_simulated_key(bb_buf_t *b, const cJSON *doc)
{
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "runtime"), "simulated");
    if (!cJSON_IsObject(sim))
        return;
    const cJSON *pf = cJSON_GetObjectItemCaseSensitive(sim, "platform");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(pf, "sha256");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(sim, "version");
    bb_buf_printf(b, " simulated=%s/%.12s",
                  cJSON_IsString(ver) ? ver->valuestring : "unknown",
                  cJSON_IsString(sha) ? sha->valuestring : "unknown-platform");
}
