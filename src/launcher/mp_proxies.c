/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Starting proxies (local and remote), the listener, the tree, heartbeats.
 */
#include "mpiexec.h"
#include "proxy.h"

void mp_send_job(int p)
{
    mp_proxy_t *px     = &mp.proxies[p];
    weft_job_t  job    = {0};
    weft_buf_t  packed = {0};

    snprintf(job.jobid, sizeof(job.jobid), "%s", mp.jobid);
    snprintf(job.kvsname, sizeof(job.kvsname), "weft_kvs_%s", mp.jobid);
    snprintf(job.host, sizeof(job.host), "%s", px->host);
    snprintf(job.cwd, sizeof(job.cwd), "%s", mp_jobspec.cwd);
    job.mapping    = mp_jobspec.mapping;
    job.size       = mp.np;
    job.universe   = mp.universe;
    job.node_id    = p;
    job.node_count = mp.nproxies;
    job.nlocal     = px->nranks;
    job.ranks      = px->ranks;
    job.argc       = mp.prog_argc;
    job.argv       = mp.prog_argv;
    job.nenv       = mp_jobspec.nenv;
    job.env        = mp_jobspec.env;
    job.bind       = mp.bind;
    char *saved0   = job.argv[0];
    job.argv[0]    = mp.prog_path;
    int    first[mp.napps + 1], argc[mp.napps + 1];
    char **argv[mp.napps + 1], *saved[mp.napps + 1];
    job.napps     = mp.napps + 1;
    job.app_first = first;
    job.app_argc  = argc;
    job.app_argv  = argv;
    for (int k = 1; k <= mp.napps; k++) {
        first[k]              = mp.apps[k - 1].first;
        argc[k]               = mp.apps[k - 1].argc;
        argv[k]               = mp.apps[k - 1].argv;
        saved[k]              = argv[k][0];
        argv[k][0]            = mp.apps[k - 1].path;
    }
    if (weft_job_pack(&job, &packed) != 0 ||
        mp_send_to(p, WEFT_CTL_JOB, 0, 0, packed.data, packed.len) != 0) {
        mp_msg("mpiexec: error: cannot send the job to the proxy on %s", px->host);
        mp.failed    = 1;
        mp.exit_code = 1;
    }
    job.argv[0] = saved0;
    for (int k = 1; k <= mp.napps; k++) {
        argv[k][0] = saved[k];
    }
    weft_buf_free(&packed);
    if (mp.verbose) {
        mp_msg("mpiexec: job %s: proxy pid %d on host %s runs %d rank(s) from %d", mp.jobid,
               (int)px->pid, px->host, px->nranks, px->ranks[0]);
    }
}

/* A tree root proved the secret: index is its tree position. Its HELLO
 * follows on the connection. */
int mp_on_remote_conn(void *ctx, int fd, unsigned index)
{
    (void)ctx;
    if (index >= (unsigned)mp.nremote || weft_tree_parent((int)index, mp.degree) != -1 ||
        mp.failed) {
        return -1;
    }
    mp_proxy_t *px = &mp.proxies[mp.pos_proxy[index]];
    if (px->ctl.fd >= 0 || px->ctl.eof) {
        return -1;
    }
    px->heard_ms = weft_now_ms();
    weft_ctl_conn_init(&px->ctl, fd);
    if (mp.verbose) {
        mp_msg("mpiexec: weft-proxy on host %s connected and authenticated", px->host);
    }
    return 0;
}

void mp_on_refused(void *ctx, const char *text)
{
    (void)ctx;
    mp_msg("mpiexec: warning: %s", text);
}

void mp_open_listener(void)
{
    char err[512];
    int  remote = 0;

    mp.pos_proxy = calloc((size_t)mp.nproxies, sizeof(int));
    if (mp.pos_proxy == NULL) {
        mp_die(1, "out of memory");
    }
    mp.degree = weft_tunables.MT_DEGREE;
    if (mp.degree < 1) {
        mp_die(MP_EXIT_USAGE, "WEFT_MT_DEGREE must be at least 1, got %d", mp.degree);
    }
    for (int p = 0; p < mp.nproxies; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        px->ctl.fd     = -1;
        px->pos        = px->is_local ? -1 : mp.nremote++;
        if (px->is_local) {
            mp.ndirect++;
        } else {
            mp.pos_proxy[px->pos] = p;
        }
    }
    mp.ndirect += mp.nremote < mp.degree ? mp.nremote : mp.degree;
    remote = mp.nremote > 0;
    if (!remote) {
        return; /* listen only where the job needs it */
    }
    if (mp.iface == NULL) {
        mp.iface = weft_tunables.IFACE;
    }
    if (mp.slurm_boot) {
        /* As hydra's slurm bootstrap: each proxy is a one-task step on its
         * node, so Slurm accounts for it and cleans up after it. srun passes
         * its stdin to the task, which is how the secret travels. */
        mp.launcher = "srun --nodes=1 --ntasks=1 --nodelist=%h --overlap --mpi=none "
                      "--kill-on-bad-exit=1 --cpu-bind=none --quiet";
    } else if (mp.launcher == NULL) {
        mp.launcher = weft_tunables.LAUNCHER_CMD && weft_tunables.LAUNCHER_CMD[0]
                          ? weft_tunables.LAUNCHER_CMD
                          : "ssh";
    }
    mp.heartbeat_ms = weft_tunables.HEARTBEAT_TIMEOUT * 1000;
    if (mp.heartbeat_ms <= 0) {
        mp_die(MP_EXIT_USAGE, "WEFT_HEARTBEAT_TIMEOUT must be a positive number of seconds");
    }
    if (weft_secret_new(&mp.secret) != 0) {
        mp_die(1, "cannot create the job secret: no randomness available");
    }
    if (weft_listener_open(&mp.listener, mp.iface, &mp.secret, err, sizeof(err)) != 0) {
        mp_die(1, "%s", err);
    }
    if (mp.verbose) {
        mp_msg("mpiexec: remote proxies connect to %s:%d (interface %s), started by '%s'",
               mp.listener.addr, mp.listener.port, mp.listener.iface, mp.launcher);
    }
}

/* A remote host is lost. SIGTERM first: when the launcher is the proxy
 * itself (ip netns exec), it then kills its ranks' process groups; over ssh
 * the remote proxy ends them when it stops hearing from us. SIGKILL follows
 * after the grace period (mp_heartbeat). */
void mp_end_launcher(mp_proxy_t *px)
{
    if (px->pid > 0 && !px->reaped && px->term_ms == 0) {
        kill(-px->pid, SIGTERM);
        px->term_ms = weft_now_ms();
    }
}

/* Remote links: say we are here, and give up a host that has been silent
 * for the heartbeat timeout (host down, link down, proxy stopped). */
void mp_heartbeat(long long now)
{
    mp.next_ping = now + mp.heartbeat_ms / 4;
    for (int p = 0; p < mp.nproxies; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        if (px->term_ms > 0 && !px->reaped && now - px->term_ms > MP_KILL_GRACE_MS) {
            kill(-px->pid, SIGKILL);
        }
        if (px->is_local || !px->connected || px->done) {
            continue;
        }
        if (px->ctl.fd >= 0 && !px->ctl.eof) { /* roots pass it down */
            weft_ctl_send(&px->ctl, WEFT_CTL_PING, 0, 0, NULL, 0);
        }
        if (now - px->heard_ms > mp.heartbeat_ms) {
            px->done = 1;
            mp_fail(1, SIGKILL,
                    "mpiexec: error: lost contact with weft-proxy on host %s (silent for %d s: "
                    "host or link down)",
                    px->host, mp.heartbeat_ms / 1000);
            if (px->ctl.fd >= 0) {
                weft_ctl_conn_fini(&px->ctl);
            }
            px->ctl.eof = 1;
            mp_end_launcher(px);
        }
    }
    /* Safety net: a remote proxy still running well after the job was
     * killed (say a child whose parent is gone) is ended from here. */
    for (int p = 0; mp.killed && p < mp.nproxies; p++) {
        if (!mp.proxies[p].is_local && now - mp.killed_ms > 3 * MP_KILL_GRACE_MS / 2) {
            mp_end_launcher(&mp.proxies[p]);
        }
    }
}

/* Start remote proxy p; it connects to addr:port (mpiexec for tree roots,
 * its parent proxy otherwise) and proves the job secret, which it reads from
 * the launcher's stdin. */
void mp_launch_remote(int p, const char *addr, int port)
{
    mp_proxy_t *px = &mp.proxies[p];
    char        ports[16], index[16], beat[16], degree[16], count[16], err[512];
    char        secret_line[2 * WEFT_AUTH_SECRET_LEN + 2];
    char       *proxy_argv[] = {mp.proxy_path, "--connect", (char *)addr, ports, "--index", index,
                                "--tree",      degree,      count,        "--host", px->host,
                                "--heartbeat", beat,        NULL};

    snprintf(ports, sizeof(ports), "%d", port);
    snprintf(index, sizeof(index), "%d", px->pos);
    snprintf(degree, sizeof(degree), "%d", mp.degree);
    snprintf(count, sizeof(count), "%d", mp.nremote);
    snprintf(beat, sizeof(beat), "%d", mp.heartbeat_ms);
    weft_secret_to_hex(&mp.secret, secret_line);
    strcat(secret_line, "\n");
    if (weft_bootstrap_launch_remote(px->host, mp.launcher, proxy_argv, secret_line, &px->pid,
                                     err, sizeof(err)) != 0) {
        mp_msg("mpiexec: error: %s", err);
        mp_abandon_proxies();
    } else if (mp.verbose) {
        mp_msg("mpiexec: started weft-proxy on host %s via '%s' (pid %d), connecting to %s:%d",
               px->host, mp.launcher, (int)px->pid, addr, port);
    }
    memset(secret_line, 0, sizeof(secret_line));
}

/* After every proxy has exited: read what the remote links still hold
 * (DONEs relayed up the tree), for at most a second. */
void mp_drain_remote_links(void)
{
    long long deadline = weft_now_ms() + 1000;

    for (int p = 0; p < mp.nproxies; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        while (!px->is_local && px->ctl.fd >= 0 && !px->ctl.eof && weft_now_ms() < deadline) {
            struct pollfd pfd = {.fd = px->ctl.fd, .events = POLLIN};
            if (poll(&pfd, 1, 50) > 0) {
                mp_drain_proxy(p);
            }
        }
    }
}

/* The forked child that is the proxy of this host: what mpiexec knows and
 * the proxy must not (the job secrets) is wiped before the proxy runs. */
static int mp_run_local_proxy(int ctl_fd, void *arg)
{
    char  fdnum[16];
    char *argv[] = {"weft-proxy", "--control-fd", fdnum, NULL};

    (void)arg;
    memset(&mp.secret, 0, sizeof(mp.secret));
    memset(&mp.ns_secret, 0, sizeof(mp.ns_secret));
    snprintf(fdnum, sizeof(fdnum), "%d", ctl_fd);
    return weft_proxy_main(3, argv);
}

/* Proxy p runs on this host: by default a fork of mpiexec running the proxy
 * code (no exec and dynamic linking of weft-proxy: about 1-2 ms of every
 * start), with WEFT_LOCAL_PROXY_EXEC=1 the weft-proxy program. */
static int mp_launch_local(mp_proxy_t *px, int *fd, char *err, size_t errlen)
{
    if (weft_tunables.LOCAL_PROXY_EXEC) {
        char *proxy_argv[] = {mp.proxy_path, NULL};
        return weft_bootstrap_launch(px->host, 1, proxy_argv, fd, &px->pid, err, errlen);
    }
    return weft_bootstrap_fork_run("weft-proxy", mp_run_local_proxy, NULL, fd, &px->pid, err,
                                   errlen);
}

void mp_launch(void)
{
    char err[512];

    mp_jobspec.mapping = mp_mapping();
    mp_jobspec.env     = mp_build_env(&mp_jobspec.nenv);
    /* Ranks on this host pin the netmod to the interface remote hosts reach
     * us on (a remote proxy overrides it with its own side of that link).
     * Added after the environment is built, which would drop it. */
    static char host_addr[96];
    if (mp.listener.addr[0] != '\0') { /* no listener: every host is this one */
        snprintf(host_addr, sizeof(host_addr), "WEFT_HOST_ADDR=%s", mp.listener.addr);
        mp_jobspec.env = realloc(mp_jobspec.env, sizeof(char *) * (size_t)(mp_jobspec.nenv + 1));
        if (mp_jobspec.env == NULL) {
            mp_die(1, "out of memory");
        }
        mp_jobspec.env[mp_jobspec.nenv++] = host_addr;
    }
    if (getcwd(mp_jobspec.cwd, sizeof(mp_jobspec.cwd)) == NULL) {
        mp_jobspec.cwd[0] = '\0';
    }
    for (int p = 0; p < mp.nproxies && !mp.failed; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        int         fd;

        if (px->is_local) {
            if (mp_launch_local(px, &fd, err, sizeof(err)) != 0) {
                mp_msg("mpiexec: error: %s", err);
                mp_abandon_proxies();
                break;
            }
            weft_ctl_conn_init(&px->ctl, fd);
            mp_send_job(p);
            continue;
        }
        if (px->pos < mp.degree) {
            mp_launch_remote(p, mp.listener.addr, mp.listener.port);
        }
    }
}
