/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * mpiexec / mpirun: parses the command line, checks everything it can before
 * starting anything (flags, tunables, hosts, program), places ranks on hosts,
 * starts one weft-proxy per host through the bootstrap layer, and then runs
 * the job: merges the proxies' fences (the KVS round), prints the ranks'
 * output line by line, feeds stdin to rank 0, forwards signals, enforces
 * -timeout, and decides the job's end and exit code:
 *   - all ranks exit 0                      -> 0
 *   - first failing rank                    -> its exit code, 128+signal if killed
 *   - MPI_Abort (PMI abort)                 -> the abort code
 *   - a rank that did PMI init and exits without PMI finalize counts as a
 *     failure (exit 1), since its peers could otherwise wait forever
 *   - -timeout                              -> 124
 *   - SIGINT/SIGTERM/SIGHUP to mpiexec      -> forwarded; 128+signal
 *   - SIGUSR1/SIGUSR2 to mpiexec            -> forwarded to every rank; the job goes on
 * On any failure every rank's process group is killed (SIGKILL; user signals
 * and timeouts get the signal first and SIGKILL after a grace period).
 */
#include "mpiexec.h"

mp_state_t mp = {.sigpipe = {-1, -1}, .listener = {.fd = -1}, .ns_listener = {.fd = -1},
                 .spawn_fd = -1, .noexec_first = -1};
mp_jobspec_t mp_jobspec;

int main(int argc, char **argv)
{
    char             err[1024];
    struct sigaction sa;
    uint32_t         rnd = 0;
    const char      *envto;

    mp.np = 1;
    mp_parse_args(argc, argv);
    if (weft_tunables_load(err, sizeof(err)) != 0) {
        mp_die(MP_EXIT_USAGE, "%s", err);
    }
    if (mp.timeout == 0 && (envto = getenv("MPIEXEC_TIMEOUT")) != NULL && *envto != '\0') {
        mp.timeout = mp_parse_count("MPIEXEC_TIMEOUT", envto);
    }
    if (mp.nhosts == 0 && getenv("SLURM_JOB_NODELIST") != NULL &&
        getenv("SLURM_JOB_NODELIST")[0] != '\0') {
        /* Inside an allocation: its nodes, unless -hosts/-f said otherwise. */
        if (weft_hosts_parse_slurm(getenv("SLURM_JOB_NODELIST"), getenv("SLURM_TASKS_PER_NODE"),
                                   &mp.hosts, &mp.nhosts, err, sizeof(err)) != 0) {
            mp_die(MP_EXIT_USAGE, "%s", err);
        }
        /* Its nodes are reached by srun unless a launcher was named. */
        if (mp.launcher == NULL && !mp.all_local && getenv("WEFT_LAUNCHER_CMD") == NULL &&
            getenv("SLURM_JOB_ID") != NULL) {
            mp.slurm_boot = 1;
        }
    }
    if (!mp.np_given && mp.nhosts > 0) {
        /* Like hydra: without -n, fill every slot of the given hosts. */
        mp.np = 0;
        for (int h = 0; h < mp.nhosts; h++) {
            mp.np += mp.ppn > 0 ? mp.ppn : mp.hosts[h].slots;
        }
    }
    mp_apps_finish();
    if (mp.universe == 0) {
        /* MPI_UNIVERSE_SIZE: the slots of the host list (Slurm's allocation
         * included), never less than the job. */
        for (int h = 0; h < mp.nhosts; h++) {
            mp.universe += mp.hosts[h].slots;
        }
        if (mp.universe < mp.np) {
            mp.universe = mp.np;
        }
    }
    mp_agent_setup();
    mp_load_binding();
    mp_resolve_program();
    mp_find_proxy();
    mp_place();
    mp_open_listener();
    mp_ns_open();

    if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
        rnd = (uint32_t)weft_now_ms();
    }
    snprintf(mp.jobid, sizeof(mp.jobid), "%x%08x", (unsigned)getpid(), (unsigned)rnd);

    if (pipe2(mp.sigpipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        mp_die(1, "pipe: %s", strerror(errno));
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = mp_on_signal;
    sa.sa_flags   = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    mp_launch();
    mp.stdin_open = !mp.failed && mp_stdin_usable();
    if (mp.stdin_open) {
        weft_fd_set_nonblock(STDIN_FILENO);
    }
    if (mp.timeout > 0) {
        mp.timeout_at = weft_now_ms() + (long long)mp.timeout * 1000;
    }

    while (!mp_all_done()) {
        int           nlisten = weft_listener_nfds(&mp.listener);
        int           nns     = mp_ns_nfds();
        struct pollfd pfds[mp.nproxies + 2 + nlisten + nns];
        int           n = 0, timeout = -1, partial = 0;
        long long     now = weft_now_ms();

        pfds[n++] = (struct pollfd){.fd = mp.sigpipe[0], .events = POLLIN};
        pfds[n++] = (struct pollfd){
            .fd     = (mp.stdin_open && mp.go_sent && mp.stdin_outstanding < MP_STDIN_WINDOW &&
                   !mp.failed)
                          ? STDIN_FILENO
                          : -1,
            .events = POLLIN};
        for (int p = 0; p < mp.nproxies; p++) {
            mp_proxy_t *px = &mp.proxies[p];
            pfds[n++]      = (struct pollfd){.fd     = px->ctl.eof ? -1 : px->ctl.fd,
                                             .events = POLLIN | (px->ctl.out.len ? POLLOUT : 0)};
        }
        for (int r = 0; r < mp.np && !partial; r++) {
            partial = mp.ranks[r].line[0].len || mp.ranks[r].line[1].len;
        }
        if (partial) {
            timeout = MP_PARTIAL_FLUSH_MS;
        }
        weft_listener_fill(&mp.listener, &pfds[n]);
        n += nlisten;
        mp_ns_fill(&pfds[n]);
        n += nns;
        if (nlisten > 1) {
            int left = weft_listener_timeout(&mp.listener);
            timeout  = timeout >= 0 && timeout < left ? timeout : left;
        }
        if (mp.kill_at > 0) {
            long long left = mp.kill_at - now;
            timeout        = (int)(left < 0 ? 0 : (timeout >= 0 && timeout < left ? timeout : left));
        }
        if (mp.timeout_at > 0 && !mp.failed) {
            long long left = mp.timeout_at - now;
            timeout        = (int)(left < 0 ? 0 : (timeout >= 0 && timeout < left ? timeout : left));
        }
        if (mp.heartbeat_ms > 0) {
            long long left = mp.next_ping - now;
            timeout        = (int)(left < 0 ? 0 : (timeout >= 0 && timeout < left ? timeout : left));
        }
        int rc = poll(pfds, (nfds_t)n, timeout);
        if (rc < 0 && errno != EINTR) {
            mp_die(1, "poll: %s", strerror(errno));
        }
        now = weft_now_ms();

        if (pfds[0].revents & POLLIN) {
            unsigned char sigs[64];
            ssize_t       k = read(mp.sigpipe[0], sigs, sizeof(sigs));
            for (ssize_t s = 0; s < k; s++) {
                if (sigs[s] == SIGCHLD) {
                    mp_reap_proxies();
                    mp_reap_agents();
                } else if (sigs[s] == SIGUSR1 || sigs[s] == SIGUSR2) {
                    /* For the ranks (checkpoint, report...): pass on, job goes on. */
                    if (mp.go_sent && !mp.killed) {
                        mp_signal_all(sigs[s]);
                    }
                } else {
                    mp_user_signal(sigs[s]);
                }
            }
        }
        if (pfds[1].fd >= 0 && pfds[1].revents) {
            mp_read_stdin();
        }
        for (int p = 0; p < mp.nproxies; p++) {
            mp_proxy_t *px = &mp.proxies[p];
            short       ev = pfds[2 + p].revents;
            if (pfds[2 + p].fd < 0) {
                continue;
            }
            if (ev & POLLOUT) {
                weft_ctl_flush(&px->ctl);
            }
            if (ev & (POLLIN | POLLHUP | POLLERR)) {
                mp_drain_proxy(p);
                if (px->ctl.eof) {
                    mp_reap_proxies();
                }
            }
        }
        if (nlisten > 0) {
            weft_listener_service(&mp.listener, &pfds[2 + mp.nproxies], mp_on_remote_conn,
                                  mp_on_refused, NULL);
        }
        if (nns > 0) {
            mp_ns_service(&pfds[2 + mp.nproxies + nlisten]);
        }
        if (rc == 0 && partial) {
            for (int r = 0; r < mp.np; r++) {
                for (int s = 0; s < 2; s++) {
                    if (mp.ranks[r].line[s].len && now - mp.ranks[r].line_ms[s] >= MP_PARTIAL_FLUSH_MS) {
                        mp_flush_partial(r, s);
                    }
                }
            }
        }
        if (mp.timeout_at > 0 && !mp.failed && now >= mp.timeout_at) {
            mp_msg("mpiexec: error: job timed out after %d seconds (-timeout); killing all ranks",
                   mp.timeout);
            mp_fail(124, SIGTERM, NULL);
        }
        if (mp.kill_at > 0 && now >= mp.kill_at) {
            if (mp.verbose) {
                mp_msg("mpiexec: grace period over; sending SIGKILL");
            }
            mp_signal_all(SIGKILL);
        }
        if (mp.heartbeat_ms > 0 && now >= mp.next_ping) {
            mp_heartbeat(now);
        }
        /* A proxy whose connection closed and who has exited is done. */
        for (int p = 0; p < mp.nproxies; p++) {
            mp_proxy_t *px = &mp.proxies[p];
            if (px->ctl.eof && !px->reaped) {
                mp_reap_proxies();
            }
            if (px->ctl.eof && !px->done && !px->reaped && !px->is_local && px->connected) {
                /* The link to a remote proxy broke while its launcher
                 * command lives on: the host is lost to the job. */
                px->done = 1;
                mp_fail(1, SIGKILL, "mpiexec: error: lost the connection to weft-proxy on host %s",
                        px->host);
                mp_end_launcher(px);
            }
        }
    }
    mp_drain_remote_links();
    for (int p = 0; p < mp.nproxies; p++) {
        if (mp.proxies[p].late_done && !mp.proxies[p].done) {
            mp_fail(1, SIGKILL, "mpiexec: error: weft-proxy on host %s ended without reporting "
                    "its ranks' end", mp.proxies[p].host);
        }
    }
    for (int r = 0; r < mp.np; r++) {
        mp_flush_partial(r, 0);
        mp_flush_partial(r, 1);
    }
    mp_agent_final(NULL);
    mp_ns_close();
    return mp.failed ? mp.exit_code : 0;
}
