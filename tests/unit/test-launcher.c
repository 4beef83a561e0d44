/* test-launcher: the launcher's command line and variables as a record
 * keeps them (runtime/launcher.c): every launcher's way of passing a value
 * is redacted, names and options are kept, counts say so; long arguments
 * and long commands are cut with markers and the program and its options
 * survive.  Serial: no MPI_Init. */
#include "config.h"
#include "runtime/bench.h"
#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The command as one string, arguments joined by spaces (caller frees). */
static char *joined(const cJSON *cmd)
{
    size_t len = 1;
    const cJSON *a;
    cJSON_ArrayForEach(a, cmd) len += strlen(a->valuestring) + 1;
    char *s = calloc(len, 1);
    if (s == NULL)
        return NULL;
    cJSON_ArrayForEach(a, cmd) {
        if (*s)
            strcat(s, " ");
        strcat(s, a->valuestring);
    }
    return s;
}

static double number(const cJSON *o, const char *name)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

/* argv must become want (space-joined), with redacted values counted. */
static void redacts(int line, const char *const *argv, size_t argc, const char *want,
                    int redacted)
{
    cJSON *cap = NULL;
    cJSON *cmd = bb_launcher_command_json(argv, argc, &cap);
    char *got = cmd ? joined(cmd) : NULL;
    check_at(got != NULL && strcmp(got, want) == 0 && (int)number(cap, "redacted") == redacted
             && cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cap, "redaction")) != NULL,
             line, "got \"%s\" (%g redacted), want \"%s\" (%d)", got ? got : "(null)",
             cap ? number(cap, "redacted") : -1.0, want, redacted);
    free(got);
    cJSON_Delete(cmd);
    cJSON_Delete(cap);
}

static void test_forms(void)
{
    /* Issue 23, reproduction 2: Hydra's -genv and -env. */
    const char *hydra[] = {"mpiexec", "-genv", "AWS_SECRET_ACCESS_KEY", "xyz", "-n", "2",
                           "-env", "MY_API_TOKEN", "s3", "bbench-sum", "-c", "8", "-o",
                           "r.json"};
    redacts(__LINE__, hydra, N_OF(hydra), "mpiexec -genv AWS_SECRET_ACCESS_KEY <redacted> "
            "-n 2 -env MY_API_TOKEN <redacted> bbench-sum -c 8 -o r.json", 2);
    /* A harmless name is redacted too: the name says nothing reliable. */
    const char *plain[] = {"mpiexec", "-genv", "FOO", "bar", "-genv", "A=b", "-n", "2", "p"};
    redacts(__LINE__, plain, N_OF(plain), "mpiexec -genv FOO <redacted> -genv A=<redacted> "
            "-n 2 p", 2);
    /* -genvlist names variables: kept, unless it holds values. */
    const char *list[] = {"mpiexec", "-genvlist", "HOME,PATH", "-envlist", "A=1,B,C=2",
                          "-n", "1", "p"};
    redacts(__LINE__, list, N_OF(list), "mpiexec -genvlist HOME,PATH -envlist "
            "A=<redacted>,B,C=<redacted> -n 1 p", 2);
    /* Open MPI: -x NAME=VALUE (a comma is part of the value), -x NAME kept,
     * MCA parameters with secret names; OSU's -x N of a program kept. */
    const char *ompi[] = {"mpiexec.openmpi", "-x", "S3_KEY=a,b", "-x", "PATH", "--mca",
                          "plm_rsh_agent", "ssh", "--mca", "sec_munge_auth_token", "t0k",
                          "-np", "2", "bbench-transfer", "-x", "5"};
    redacts(__LINE__, ompi, N_OF(ompi), "mpiexec.openmpi -x S3_KEY=<redacted> -x PATH "
            "--mca plm_rsh_agent ssh --mca sec_munge_auth_token <redacted> -np 2 "
            "bbench-transfer -x 5", 2);
    /* Slurm's --export, options with secret names, bare NAME=VALUE words,
     * and an MPMD second part. */
    const char *srun[] = {"srun", "--export=ALL,TOKEN=abc,B=1", "--api-key=k1", "--password",
                          "pw", "--auth", "-n", "1", "env", "DB_URL=postgres://u:p@h",
                          "prog", ":", "-env", "Z", "zz", "prog2", "--bind-to=core"};
    redacts(__LINE__, srun, N_OF(srun), "srun --export=ALL,TOKEN=<redacted>,B=<redacted> "
            "--api-key=<redacted> --password <redacted> --auth -n 1 env DB_URL=<redacted> "
            "prog : -env Z <redacted> prog2 --bind-to=core", 6);
    /* Nothing to redact: nothing changes. */
    const char *none[] = {"mpiexec", "-n", "2", "-bind-to", "core", "bbench-sum", "-c", "8"};
    redacts(__LINE__, none, N_OF(none), "mpiexec -n 2 -bind-to core bbench-sum -c 8", 0);
    /* A value that is the marker already is not counted again. */
    const char *twice[] = {"mpiexec", "-genv", "A", BB_REDACTED, "p"};
    redacts(__LINE__, twice, N_OF(twice), "mpiexec -genv A <redacted> p", 0);
}

/* Issue 23, reproduction 6: a long command keeps the program and its
 * options and says what was cut. */
static void test_cut(void)
{
    /* One argument of 100000 bytes the rule keeps (a list of names). */
    char *names = malloc(100001);
    if (names == NULL)
        return;
    memset(names, 'N', 100000);
    names[100000] = '\0';
    const char *one[] = {"mpiexec", "-genvlist", names, "-n", "2", "bbench-sum", "-c", "8",
                         "-o", "r.json"};
    cJSON *cap = NULL;
    cJSON *cmd = bb_launcher_command_json(one, N_OF(one), &cap);
    const char *arg = cJSON_GetStringValue(cJSON_GetArrayItem(cmd, 2));
    CHECK_MSG(cJSON_GetArraySize(cmd) == (int)N_OF(one), "one long argument: %d arguments",
              cJSON_GetArraySize(cmd));
    CHECK_MSG(arg != NULL && strlen(arg) <= 4096 && strstr(arg, "<cut: 100000 bytes>") != NULL,
              "the long argument is cut to 4096 bytes with a marker: %.40s...",
              arg ? arg + (strlen(arg) > 40 ? strlen(arg) - 40 : 0) : "(null)");
    CHECK_MSG(strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(cmd, 9)), "r.json") == 0,
              "the program's options are kept");
    CHECK_MSG(number(cap, "bytes_cut") > 95000 && number(cap, "arguments_cut") == 0,
              "bytes_cut %g, arguments_cut %g", number(cap, "bytes_cut"),
              number(cap, "arguments_cut"));
    cJSON_Delete(cmd);
    cJSON_Delete(cap);
    free(names);

    /* 30000 launcher options: the middle goes, the ends stay. */
    enum { MANY = 30000 };
    const char **many = calloc(MANY + 7, sizeof *many);
    if (many == NULL)
        return;
    size_t n = 0;
    many[n++] = "mpiexec";
    for (int i = 0; i < MANY; i++)
        many[n++] = "-verbose";
    const char *tail[] = {"-n", "2", "bbench-sum", "-c", "8", "-o"};
    for (size_t i = 0; i < N_OF(tail); i++)
        many[n++] = tail[i];
    cmd = bb_launcher_command_json(many, n, &cap);
    char *all = cmd ? joined(cmd) : NULL;
    size_t bytes = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, cmd) bytes += strlen(a->valuestring);
    CHECK_MSG(bytes <= 65536, "the command fits: %zu bytes", bytes);
    CHECK_MSG(all != NULL && strncmp(all, "mpiexec -verbose", 16) == 0
                  && strstr(all, "-n 2 bbench-sum -c 8 -o") != NULL
                  && strstr(all, " arguments, ") != NULL && strstr(all, "<cut: ") != NULL,
              "the program, its options and the start kept, a marker between: %.60s ... %s", all ? all : "", all && strlen(all) > 120 ? all + strlen(all) - 120 : "");
    CHECK_MSG(number(cap, "arguments_cut") > 0 && number(cap, "bytes_cut") > 0
                  && (size_t)cJSON_GetArraySize(cmd) + (size_t)number(cap, "arguments_cut")
                         == n + 1,
              "arguments_cut %g for %d kept of %zu", number(cap, "arguments_cut"),
              cJSON_GetArraySize(cmd), n);
    free(all);
    cJSON_Delete(cmd);
    cJSON_Delete(cap);
    free(many);
}

static void test_env(void)
{
    const char *env[] = {"PMI_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "PMIX_RANK=1", "SLURM_JOB_ID=7",
                   "HYDRA_FOO=1", "MPI_LOCALNRANKS=2", "OMPI_MCA_my_auth_token=s3",
                   "PMIX_SECRET=x", "HOME=/root", "AWS_SECRET_ACCESS_KEY=xyz",
                   "OMPI_MCA_orte_precondition_transports=0123abcd-4567ef89", NULL};
    cJSON *cap = NULL;
    cJSON *e = bb_launcher_env_json(env, &cap);
    char *text = cJSON_PrintUnformatted(e);
    CHECK_MSG(cJSON_GetArraySize(e) == 9, "9 launcher variables: %s", text);
    CHECK_MSG(strstr(text, "s3") == NULL && strstr(text, "xyz") == NULL
                  && strstr(text, "0123abcd") == NULL
                  && strstr(text, "\"PMIX_SECRET\":\"<redacted>\"") != NULL
                  && strstr(text, "\"OMPI_COMM_WORLD_SIZE\":\"2\"") != NULL
                  && strstr(text, "HOME") == NULL,
              "families kept, secret names redacted, others left out: %s", text);
    CHECK_MSG(number(cap, "redacted") == 3, "3 redacted: %g", number(cap, "redacted"));
    free(text);
    cJSON_Delete(e);
    cJSON_Delete(cap);
    CHECK(bb_name_is_secret("my_Api_Token", 12) && bb_name_is_secret("PASSWD", 6)
          && !bb_name_is_secret("PMI_SIZE", 8) && !bb_name_is_secret("TOKE", 4));
}

/* One singleton check: env (NULL-terminated) on a world of world_size;
 * want 1 when it must refuse, its message then naming fix; leader as the
 * process that says it. */
static void singleton(int line, const char *const *env, int world_size, const char *lib,
                      int want, int want_leader, const char *fix)
{
    char msg[512] = "";
    int leader = -1;
    int got = bb_launcher_singleton_check(env, world_size, lib, msg, sizeof msg, &leader);
    check_at(got == want && (!want || (leader == want_leader && strstr(msg, fix) != NULL)),
             line, "got %d (leader %d, \"%s\"), want %d (leader %d, naming \"%s\")", got,
             leader, msg, want, want_leader, fix ? fix : "");
}

/* Processes a launcher started as singletons of their own MPI are caught
 * (another MPI's mpiexec, srun without the plugin), and no real job is:
 * a world as large as the launcher's count, a singleton started alone, a
 * program run in an allocation's batch script, malformed counts. */
static void test_singletons(void)
{
    const char *ompi[] = {"OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=0", NULL};
    singleton(__LINE__, ompi, 1, "mpich", 1, 1, "mpiexec.mpich");
    singleton(__LINE__, ompi, 2, "mpich", 0, 0, NULL);
    const char *ompi1[] = {"OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=1", NULL};
    singleton(__LINE__, ompi1, 1, "mpich", 1, 0, "mpiexec.mpich");
    const char *hydra[] = {"PMI_SIZE=4", "PMI_RANK=0", NULL};
    singleton(__LINE__, hydra, 1, "openmpi", 1, 1, "mpiexec.openmpi");
    singleton(__LINE__, hydra, 4, "openmpi", 0, 0, NULL);
    const char *alone[] = {"PMI_SIZE=1", "PMI_RANK=0", NULL};
    singleton(__LINE__, alone, 1, "mpich", 0, 0, NULL);
    const char *srun[] = {"SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=2", "SLURM_PROCID=0",
                          "SLURM_NTASKS=2", NULL};
    singleton(__LINE__, srun, 1, "mpich", 1, 1, "srun --mpi=pmi2");
    singleton(__LINE__, srun, 1, "openmpi", 1, 1, "srun --mpi=pmix");
    singleton(__LINE__, srun, 2, "mpich", 0, 0, NULL);
    /* srun --mpi=pmi2 under Hydra's or PMI's own count: that one decides. */
    const char *pmi2[] = {"SLURM_STEP_ID=3", "SLURM_STEP_NUM_TASKS=2", "PMI_SIZE=1", NULL};
    singleton(__LINE__, pmi2, 1, "mpich", 0, 0, NULL);
    /* A batch script of 4 tasks running the program by itself. */
    const char *batch[] = {"SLURM_NTASKS=4", "SLURM_STEP_ID=4294967291",
                           "SLURM_STEP_NUM_TASKS=4", NULL};
    singleton(__LINE__, batch, 1, "mpich", 0, 0, NULL);
    const char *nostep[] = {"SLURM_NTASKS=4", "SLURM_STEP_NUM_TASKS=4", NULL};
    singleton(__LINE__, nostep, 1, "mpich", 0, 0, NULL);
    const char *bad[] = {"OMPI_COMM_WORLD_SIZE=2x", "PMI_SIZE=", "SLURM_STEP_ID=0",
                         "SLURM_STEP_NUM_TASKS=99999999999999999999", NULL};
    singleton(__LINE__, bad, 1, "mpich", 0, 0, NULL);
    /* A parent job's variables of the other launcher are stale: the own
     * launcher's count decides (issue 58, finding 5). */
    const char *stale[] = {"OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_RANK=2", "PMI_SIZE=1",
                           "PMI_RANK=0", NULL};
    singleton(__LINE__, stale, 1, "mpich", 0, 0, NULL);
    const char *stale_pmi[] = {"PMI_SIZE=3", "PMI_RANK=1", "OMPI_COMM_WORLD_SIZE=1",
                               "OMPI_COMM_WORLD_RANK=0", NULL};
    singleton(__LINE__, stale_pmi, 1, "openmpi", 0, 0, NULL);
    /* Without the own launcher's count, the other one's still refuses. */
    singleton(__LINE__, stale, 1, "openmpi", 1, 0, "mpiexec.openmpi");
    const char *none[] = {"HOME=/root", NULL};
    singleton(__LINE__, none, 1, "mpich", 0, 0, NULL);
}

/* Open MPI's TCP BTL carries messages (and its thread could progress them)
 * only off shared memory and under ob1. */
static void carries(int line, int hosts, const char *pml, const char *btl, int want,
                    const char *why_part)
{
    char why[256] = "";
    int got = bb_ompi_tcp_carries(hosts, pml, btl, why, sizeof why);
    check_at(got == want && strstr(why, why_part) != NULL, line,
             "hosts %d pml %s btl %s: got %d (\"%s\"), want %d (\"%s\")", hosts,
             pml ? pml : "(unset)", btl ? btl : "(unset)", got, why, want, why_part);
}

static void test_tcp_carries(void)
{
    carries(__LINE__, 1, NULL, NULL, 0, "shared memory (vader)");
    carries(__LINE__, 2, NULL, NULL, 1, "more than one host");
    carries(__LINE__, 1, NULL, "self,tcp", 1, "shared memory excluded");
    carries(__LINE__, 1, NULL, "^vader,sm", 1, "shared memory excluded");
    carries(__LINE__, 1, NULL, "^vader", 0, "shared memory (vader)");
    carries(__LINE__, 1, NULL, "self,vader,tcp", 0, "shared memory (vader)");
    carries(__LINE__, 2, NULL, "^tcp", 0, "not used");
    carries(__LINE__, 2, NULL, "self,vader", 0, "not used");
    carries(__LINE__, 2, "ucx", NULL, 0, "pml ucx");
    carries(__LINE__, 2, "^ucx", NULL, 1, "more than one host");
    carries(__LINE__, 2, "ob1", "tcp,self", 1, "more than one host");
}

int main(void)
{
    test_forms();
    test_cut();
    test_env();
    test_singletons();
    test_tcp_carries();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
