/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * pmi_dynproc_probe: exercises spawn and the name service of the PMI client
 * (pmi.h "Dynamic processes") under a launcher. Every rank inits; rank 0
 * runs the steps given on the command line, in order; all ranks fence and
 * finalize. Steps:
 *   pub SERVICE PORT | look SERVICE | unpub SERVICE
 *       print "dyn: op=pub|look|unpub service=S rc=RC [port=P]"
 *   spawn N PROG NARGS ARG... NINFO KEY VAL... NPREPUT KEY VAL...
 *       print "dyn: op=spawn rc=RC errcodes=E,.. msg=TEXT"
 *   spawnm COUNT then COUNT x (N PROG NARGS ARG... NINFO KEY VAL...), then
 *       NPREPUT KEY VAL...: one spawn of COUNT commands (spawn_multiple)
 *   waitfile PATH      wait (at most 60 s) until PATH exists
 *   touch PATH         create PATH
 * Every rank prints "dyn: rank=R size=S spawned=0|1 universe=U appnum=A nodes=N kvs=K"
 * and, when spawned, "dyn: rank=R preput KEY=VALUE" for --preput KEY.
 * Options before the steps: --preput KEY (repeatable), --all (every rank
 * runs the steps, not only rank 0). Exit 0, or 4 on a PMI failure.
 */
#include "pmi/pmi.h"
#include "util/tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *errname(int rc)
{
    switch (rc) {
    case 0: return "0";
    case WEFT_PMI_ERR_SPAWN: return "SPAWN";
    case WEFT_PMI_ERR_NOT_FOUND: return "NOT_FOUND";
    case WEFT_PMI_ERR_DUPLICATE: return "DUPLICATE";
    case WEFT_PMI_ERR_UNSUPPORTED: return "UNSUPPORTED";
    default: return "GENERIC";
    }
}

/* count x (N PROG NARGS ARG... NINFO KEY VAL...), then NPREPUT KEY VAL... */
static int do_spawn(char **argv, int argc, int *i, int count)
{
    weft_pmi_spawn_cmd_t cmds[8] = {{0}};
    const char          *ikeys[8][16], *ivals[8][16], *pkeys[16], *pvals[16], **args[8];
    int                  npp, errcodes[256], rc, total = 0;
    char                 msg[512] = "";

    for (int c = 0; c < count && c < 8; c++) {
        if (*i + 3 >= argc) {
            return -1;
        }
        cmds[c].maxprocs = atoi(argv[++*i]);
        cmds[c].command  = argv[++*i];
        int nargs        = atoi(argv[++*i]);
        args[c]          = calloc((size_t)nargs + 1, sizeof(char *));
        for (int a = 0; a < nargs; a++) {
            args[c][a] = argv[++*i];
        }
        cmds[c].argv  = args[c];
        cmds[c].ninfo = atoi(argv[++*i]);
        for (int k = 0; k < cmds[c].ninfo && k < 16; k++) {
            ikeys[c][k] = argv[++*i];
            ivals[c][k] = argv[++*i];
        }
        cmds[c].info_keys   = ikeys[c];
        cmds[c].info_values = ivals[c];
        total += cmds[c].maxprocs;
    }
    npp = atoi(argv[++*i]);
    for (int k = 0; k < npp && k < 16; k++) {
        pkeys[k] = argv[++*i];
        pvals[k] = argv[++*i];
    }
    rc = weft_pmi_spawn(count, cmds, npp, pkeys, pvals, errcodes, msg, sizeof(msg));
    printf("dyn: op=spawn rc=%s errcodes=", errname(rc));
    for (int k = 0; k < total && k < 256; k++) {
        printf("%s%d", k ? "," : "", errcodes[k]);
    }
    printf(" msg=%s\n", rc ? msg : "");
    fflush(stdout);
    for (int c = 0; c < count && c < 8; c++) {
        free(args[c]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    weft_pmi_info_t info;
    char            err[512], port[WEFT_PMI_MAX_VAL];
    const char     *preput[16];
    int             npreput = 0, all = 0, i = 1, rc;

    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--preput") && i + 1 < argc && npreput < 16) {
            preput[npreput++] = argv[++i];
        } else if (!strcmp(argv[i], "--all")) {
            all = 1;
        } else {
            break;
        }
    }
    if (weft_tunables_load(err, sizeof(err)) != 0) {
        fprintf(stderr, "pmi_dynproc_probe: %s\n", err);
        return 2;
    }
    if (weft_pmi_init(&info) != 0) {
        return 4;
    }
    printf("dyn: rank=%d size=%d spawned=%d universe=%d appnum=%d nodes=%d kvs=%s\n", info.rank,
           info.size, weft_pmi_is_spawned(), weft_pmi_universe_size(), info.appnum,
           info.node_count, info.kvsname);
    for (int k = 0; k < npreput; k++) {
        char val[WEFT_PMI_MAX_VAL];
        rc = weft_pmi_get_preput(preput[k], val, sizeof(val));
        printf("dyn: rank=%d preput %s=%s\n", info.rank, preput[k], rc == 0 ? val : "(none)");
    }
    fflush(stdout);
    for (; i < argc && (info.rank == 0 || all); i++) {
        const char *s = argv[i];
        if (!strcmp(s, "pub") && i + 2 < argc) {
            rc = weft_pmi_publish_name(argv[i + 1], argv[i + 2]);
            printf("dyn: op=pub service=%s rc=%s\n", argv[i + 1], errname(rc));
            i += 2;
        } else if (!strcmp(s, "look") && i + 1 < argc) {
            port[0] = '\0';
            rc      = weft_pmi_lookup_name(argv[i + 1], port, sizeof(port));
            printf("dyn: op=look service=%s rc=%s port=%s\n", argv[i + 1], errname(rc),
                   rc == 0 ? port : "");
            i += 1;
        } else if (!strcmp(s, "unpub") && i + 1 < argc) {
            rc = weft_pmi_unpublish_name(argv[i + 1]);
            printf("dyn: op=unpub service=%s rc=%s\n", argv[i + 1], errname(rc));
            i += 1;
        } else if (!strcmp(s, "spawn") || (!strcmp(s, "spawnm") && i + 1 < argc)) {
            int count = !strcmp(s, "spawn") ? 1 : atoi(argv[++i]);
            if (do_spawn(argv, argc, &i, count) != 0) {
                fprintf(stderr, "pmi_dynproc_probe: bad spawn step\n");
                return 2;
            }
        } else if (!strcmp(s, "waitfile") && i + 1 < argc) {
            struct stat st;
            for (int t = 0; t < 6000 && stat(argv[i + 1], &st) != 0; t++) {
                usleep(10000);
            }
            i += 1;
        } else if (!strcmp(s, "touch") && i + 1 < argc) {
            FILE *f = fopen(argv[i + 1], "w");
            if (f != NULL) {
                fclose(f);
            }
            i += 1;
        } else {
            fprintf(stderr, "pmi_dynproc_probe: unknown step %s\n", s);
            return 2;
        }
        fflush(stdout);
    }
    if (weft_pmi_fence() != 0 || weft_pmi_finalize() != 0) {
        return 4;
    }
    return 0;
}
