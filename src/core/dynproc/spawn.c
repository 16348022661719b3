/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Comm_spawn, MPI_Comm_spawn_multiple and the children's side
 * (MPI_Comm_get_parent).
 *
 * The root opens a port and asks the launcher (weft_pmi_spawn) to start the
 * children as one new job, passing the port name as the preput pair
 * "weft_parent_port"; it broadcasts the outcome (and per-child error codes)
 * in the parent communicator, so a failed start returns MPI_ERR_SPAWN at
 * every parent and nothing waits; on success the parents accept on the port
 * and the children, inside MPI_Init, connect to it over their
 * MPI_COMM_WORLD. The resulting intercommunicator is the parent's result and
 * the children's MPI_Comm_get_parent.
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/comm_ctx.h"
#include "core/comm_internal.h"
#include "core/dynproc/dynproc.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/runtime.h"
#include "pmi/pmi.h"
#include "util/tunables.h"

#define PARENT_PORT_KEY "weft_parent_port"

typedef struct {
    int32_t status; /* MPI_SUCCESS or MPI_ERR_SPAWN (or another class at the root) */
    int32_t total;  /* children asked for */
} spawn_outcome_t;

/* Info keys/values of one command as arrays (pointers into the info). */
static int info_arrays(const weft_info_t *info, int *n_p, const char ***keys_p,
                       const char ***vals_p)
{
    int                      n = info ? info->nkeys : 0, i = 0;
    const char             **k = calloc((size_t)n + 1, sizeof(char *));
    const char             **v = calloc((size_t)n + 1, sizeof(char *));

    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return weft_error(MPI_ERR_NO_MEM, "no memory for spawn info keys");
    }
    for (const weft_info_entry_t *e = info ? info->head : NULL; e != NULL && i < n; e = e->next) {
        k[i]   = e->key;
        v[i++] = e->value;
    }
    *n_p    = i;
    *keys_p = k;
    *vals_p = v;
    return MPI_SUCCESS;
}

/* At the root: start the children. codes: one per child. */
static int root_spawn(int count, char *commands[], char **argvs[], const int maxprocs[],
                      weft_info_t *const infos[], const char *port, int *codes, int total)
{
    weft_pmi_spawn_cmd_t *cmds = calloc((size_t)count, sizeof(*cmds));
    const char           *pk[1] = {PARENT_PORT_KEY}, *pv[1] = {port};
    char                  msg[512] = "";
    int                   rc = MPI_SUCCESS, prc;

    if (cmds == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for spawn commands");
    }
    for (int c = 0; c < count && rc == MPI_SUCCESS; c++) {
        cmds[c].command  = commands[c];
        cmds[c].argv     = (const char *const *)(argvs ? argvs[c] : NULL);
        cmds[c].maxprocs = maxprocs[c];
        rc = info_arrays(infos[c], &cmds[c].ninfo, (const char ***)&cmds[c].info_keys,
                         (const char ***)&cmds[c].info_values);
    }
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < total; i++) {
            codes[i] = 0;
        }
        prc = weft_pmi_spawn(count, cmds, 1, pk, pv, codes, msg, sizeof(msg));
        if (prc == WEFT_PMI_ERR_SPAWN) {
            rc = weft_error(MPI_ERR_SPAWN, "%s", msg[0] ? msg : "a child could not be started");
        } else if (prc == WEFT_PMI_ERR_UNSUPPORTED) {
            rc = weft_error(MPI_ERR_SPAWN, "the process manager cannot spawn: %s", msg);
        } else if (prc != 0) {
            rc = weft_error(MPI_ERR_SPAWN, "spawn failed: %s", msg[0] ? msg : "launcher error");
        }
        for (int i = 0; i < total; i++) {
            codes[i] = rc == MPI_SUCCESS ? MPI_SUCCESS : codes[i] ? MPI_ERR_SPAWN : rc;
        }
    }
    for (int c = 0; c < count; c++) {
        free((void *)cmds[c].info_keys);
        free((void *)cmds[c].info_values);
    }
    free(cmds);
    return rc;
}

/* Children go elsewhere than this host only when the info keys say so
 * (host, hostfile), when our job spans hosts already (the netmod is open then
 * and the port carries its address anyway), or when the launcher has other
 * hosts it may map them onto (it then sets WEFT_HOST_ADDR, the address remote
 * hosts reach it on); otherwise they reach us through shared memory. */
static int children_may_be_remote(int count, weft_info_t *const infos[])
{
    if (weft_tunables.HOST_ADDR != NULL && weft_tunables.HOST_ADDR[0] != '\0') {
        return 1;
    }
    for (int c = 0; c < count; c++) {
        const char *host = infos[c] ? weft_info_lookup(infos[c], "host") : NULL;
        if (infos[c] != NULL && (weft_info_lookup(infos[c], "hostfile") != NULL ||
                                 weft_info_lookup(infos[c], "hosts") != NULL)) {
            return 1;
        }
        if (host != NULL && strcmp(host, "localhost") != 0 && strcmp(host, "127.0.0.1") != 0 &&
            strcmp(host, weft_runtime.processor_name) != 0) {
            return 1;
        }
    }
    return 0;
}

static int spawn_common(int count, char *commands[], char **argvs[], const int maxprocs[],
                        weft_info_t *const infos[], int root, weft_comm_t *comm,
                        MPI_Comm *intercomm, int errcodes[])
{
    weft_xgroup_t   x;
    spawn_outcome_t out  = {MPI_SUCCESS, 0};
    char            port[MPI_MAX_PORT_NAME] = "";
    int            *codes = NULL, rc;

    weft_xgroup_of_comm(&x, comm);
    *intercomm = MPI_COMM_NULL;
    if (comm->rank == root) {
        for (int c = 0; c < count && out.status == MPI_SUCCESS; c++) {
            if (commands == NULL || commands[c] == NULL || commands[c][0] == '\0') {
                out.status = weft_error(MPI_ERR_ARG, "argument command: empty or NULL at the root");
            } else if (maxprocs[c] <= 0) {
                out.status = weft_error(MPI_ERR_ARG, "argument maxprocs: %d is not positive",
                                        maxprocs[c]);
            } else {
                out.total += maxprocs[c];
            }
        }
        if (out.status == MPI_SUCCESS && (codes = calloc((size_t)out.total, sizeof(int))) == NULL) {
            out.status = weft_error(MPI_ERR_NO_MEM, "no memory for spawn error codes");
        }
        if (out.status == MPI_SUCCESS) {
            out.status = weft_dynproc_open_port(port, children_may_be_remote(count, infos));
        }
        if (out.status == MPI_SUCCESS) {
            out.status = root_spawn(count, commands, argvs, maxprocs, infos, port, codes, out.total);
            if (out.status != MPI_SUCCESS) {
                weft_close_port_impl(port);
            }
        }
    }
    /* Everyone learns the outcome before anyone waits in accept. */
    rc = weft_x_bcast(&x, &out, sizeof(out), root, WEFT_XTAG_DYNPROC + 8);
    if (rc != MPI_SUCCESS) {
        free(codes);
        return rc;
    }
    if (comm->rank != root && out.total > 0 &&
        (codes = calloc((size_t)out.total, sizeof(int))) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for spawn error codes");
    }
    if (out.total > 0) {
        rc = weft_x_bcast(&x, codes, sizeof(int) * (size_t)out.total, root, WEFT_XTAG_DYNPROC + 9);
    }
    if (rc == MPI_SUCCESS && out.status == MPI_SUCCESS) {
        /* Children that die before connecting must not hang the parents. */
        rc = weft_dynproc_accept(port, NULL, root, comm, (double)weft_tunables.SPAWN_TIMEOUT,
                                 intercomm);
        if (rc != MPI_SUCCESS) {
            rc = weft_error(MPI_ERR_SPAWN, "the spawned processes did not connect to their "
                                           "parents (WEFT_SPAWN_TIMEOUT=%ld s)",
                            weft_tunables.SPAWN_TIMEOUT);
        }
        if (comm->rank == root) {
            weft_close_port_impl(port);
        }
    } else if (rc == MPI_SUCCESS) {
        rc = comm->rank == root ? out.status
                                : weft_error(out.status, "the spawn root could not start the "
                                                         "children");
    }
    if (errcodes != MPI_ERRCODES_IGNORE && codes != NULL) {
        for (int i = 0; i < out.total; i++) {
            errcodes[i] = rc == MPI_SUCCESS ? MPI_SUCCESS : codes[i];
        }
    }
    free(codes);
    return rc;
}

int weft_comm_spawn_impl(const char *command, char *argv[], int maxprocs, weft_info_t *info,
                         int root, weft_comm_t *comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char        *cmds[1]  = {(char *)command};
    char       **argvs[1] = {argv};
    weft_info_t *infos[1] = {info};

    return spawn_common(1, cmds, argv == MPI_ARGV_NULL ? NULL : argvs, &maxprocs, infos, root,
                        comm, intercomm, array_of_errcodes);
}

int weft_comm_spawn_multiple_impl(int count, char *array_of_commands[], char **array_of_argv[],
                                  const int array_of_maxprocs[], const MPI_Info array_of_info[],
                                  int root, weft_comm_t *comm, MPI_Comm *intercomm,
                                  int array_of_errcodes[])
{
    weft_info_t **infos = NULL;
    int           rc;

    if (comm->rank == root) {
        if (count <= 0) {
            return weft_error(MPI_ERR_ARG, "argument count: %d is not positive", count);
        }
        if (array_of_commands == NULL || array_of_maxprocs == NULL) {
            return weft_error(MPI_ERR_ARG, "argument array_of_commands/array_of_maxprocs: NULL");
        }
        infos = calloc((size_t)count, sizeof(*infos));
        if (infos == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "no memory for spawn info");
        }
        for (int c = 0; array_of_info != NULL && c < count; c++) {
            if (array_of_info[c] != MPI_INFO_NULL &&
                (infos[c] = weft_info_from_handle(array_of_info[c])) == NULL) {
                free(infos);
                return weft_error(MPI_ERR_INFO, "argument array_of_info[%d]: invalid info object",
                                  c);
            }
        }
    }
    rc = spawn_common(count, array_of_commands, array_of_argv, array_of_maxprocs, infos, root,
                      comm, intercomm, array_of_errcodes);
    free(infos);
    return rc;
}

/* ---- the children's side ----------------------------------------------- */

static void parent_fini(void)
{
    weft_dynproc_set_parent(NULL);
}

int weft_dynproc_init(void)
{
    char     port[MPI_MAX_PORT_NAME];
    MPI_Comm inter = MPI_COMM_NULL;
    int      rc;

    weft_finalize_register(parent_fini);
    if (!weft_pmi_is_spawned()) {
        return MPI_SUCCESS;
    }
    if (weft_pmi_get_preput(PARENT_PORT_KEY, port, sizeof(port)) != 0) {
        return weft_error(MPI_ERR_SPAWN, "spawned, but the launcher passed no parent port (%s)",
                          PARENT_PORT_KEY);
    }
    /* The parents accept as soon as the launcher reports us started; a
     * loaded machine can take a while: wait as long as a spawn may. */
    rc = weft_dynproc_connect(port, NULL, 0, &weft_comm_world,
                              (double)(weft_tunables.SPAWN_TIMEOUT > weft_tunables.CONNECT_TIMEOUT
                                           ? weft_tunables.SPAWN_TIMEOUT
                                           : weft_tunables.CONNECT_TIMEOUT),
                              &inter);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    /* Two references: the handle's (MPI_Comm_disconnect/free drops it and
     * get_parent then says MPI_COMM_NULL) and ours (until finalize). */
    weft_dynproc_set_parent(weft_comm_from_handle(inter));
    return MPI_SUCCESS;
}
