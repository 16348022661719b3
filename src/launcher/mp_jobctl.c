/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Job control: proxy messages, rank exits, failure, signals, reaping.
 */
#include "mpiexec.h"
#include "common/guard.h"

/* To proxy p: directly, or down the tree in a TO envelope via its root. */
int mp_send_to(int p, int type, int a0, int a1, const void *data, size_t len)
{
    mp_proxy_t *px = &mp.proxies[p];
    weft_buf_t  env = {0};
    int         root, rc;

    if (px->ctl.fd >= 0) {
        return weft_ctl_send(&px->ctl, type, a0, a1, data, len);
    }
    if (px->is_local || px->pos < 0) {
        return -1;
    }
    root = weft_tree_route(-1, px->pos, mp.degree);
    if (root < 0 || mp.proxies[mp.pos_proxy[root]].ctl.fd < 0 ||
        weft_ctl_encode(&env, type, a0, a1, data, len) != 0) {
        weft_buf_free(&env);
        return -1;
    }
    rc = weft_ctl_send(&mp.proxies[mp.pos_proxy[root]].ctl, WEFT_CTL_TO, px->pos, 0, env.data,
                       env.len);
    weft_buf_free(&env);
    return rc;
}

void mp_signal_all(int sig)
{
    for (int p = 0; p < mp.nproxies; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        if (!px->done && px->ctl.fd >= 0) {
            weft_ctl_send(&px->ctl, WEFT_CTL_SIGNAL, sig, 0, NULL, 0);
        } else if (!px->is_local && !px->connected && px->pid > 0 && !px->reaped &&
                   sig == SIGKILL) {
            /* Not connected yet: it has no ranks; stop its launcher. */
            kill(-px->pid, SIGKILL);
        }
    }
    mp_signal_agents(sig);
    if (sig == SIGKILL) {
        mp.killed    = 1;
        mp.kill_at   = 0;
        mp.killed_ms = weft_now_ms();
    }
}


/* First failure decides the exit code and prints; later ones stay quiet.
 * sig: what ends the job (SIGKILL at once, others after a grace period), 0
 * to leave it running (-disable-auto-cleanup). */
void mp_fail(int code, int sig, const char *fmt, ...)
{
    char    line[2048];
    va_list ap;

    if (!mp.failed) {
        mp.failed    = 1;
        mp.exit_code = code;
        if (fmt != NULL) {
            va_start(ap, fmt);
            vsnprintf(line, sizeof(line), fmt, ap);
            va_end(ap);
            mp_msg("%s", line);
        }
    }
    if (!mp.go_sent) {
        /* No rank runs yet (a host failed to start): closing the control
         * connections ends the proxies that did start. */
        mp_abandon_proxies();
        return;
    }
    if (sig == 0) {
        return;
    }
    if (sig == SIGKILL) {
        if (!mp.killed) {
            mp_signal_all(SIGKILL);
        }
    } else if (!mp.killed && mp.kill_at == 0) {
        mp_signal_all(sig);
        mp.kill_at = weft_now_ms() + MP_KILL_GRACE_MS;
    }
}


void mp_rank_exit(int p, int rank, int status, const char *info)
{
    int         pid = 0, init = 0, fin = 0, aborted = 0;
    const char *host = mp.proxies[p].host;

    if (rank < 0 || rank >= mp.np) {
        return;
    }
    sscanf(info, "pid=%d init=%d fin=%d abort=%d", &pid, &init, &fin, &aborted);
    mp.ranks[rank].exited = 1;
    mp_flush_partial(rank, 0);
    mp_flush_partial(rank, 1);
    if (mp.verbose) {
        mp_msg("mpiexec: rank %d (pid %d) ended, wait status 0x%x", rank, pid, status);
    }
    if (aborted) {
        return; /* reported when the abort arrived */
    }
    /* -disable-auto-cleanup: the others go on (and learn of it through MPI
     * errors); every such failure is told, the first one's code is the job's. */
    int         end   = mp.no_auto_cleanup ? 0 : SIGKILL;
    const char *goes  = mp.no_auto_cleanup ? "; the other ranks go on (-disable-auto-cleanup)" : "";
    int         first = mp.failed ? mp.exit_code : -1;
    if (mp.no_auto_cleanup && !mp.killed &&
        (WIFSIGNALED(status) || WEXITSTATUS(status) != 0 || (init && !fin))) {
        mp.failed = 0; /* so this one is told too (the first code stays) */
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        mp_fail(128 + sig, end, "mpiexec: error: rank %d (pid %d) on host %s killed by signal %d (%s)%s",
                rank, pid, host, sig, strsignal(sig), goes);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        mp_fail(WEXITSTATUS(status), end,
                "mpiexec: error: rank %d (pid %d) on host %s exited with code %d%s", rank, pid, host,
                WEXITSTATUS(status), goes);
    } else if (init && !fin) {
        mp_fail(1, end,
                "mpiexec: error: rank %d (pid %d) on host %s exited with code 0 without "
                "finalizing (MPI_Init without MPI_Finalize)%s",
                rank, pid, host, goes);
    }
    if (first >= 0) {
        mp.exit_code = first;
    }
    /* The others go on: tell every host, so ranks there that never talked
     * to this one (no keepalive) fail what needs it instead of waiting. */
    if (mp.no_auto_cleanup && !mp.killed && !fin) {
        for (int q = 0; q < mp.nproxies; q++) {
            mp_proxy_t *px = &mp.proxies[q];
            if (!px->done && px->ctl.fd >= 0) {
                weft_ctl_send(&px->ctl, WEFT_CTL_RANK_LOST, rank, 0, NULL, 0);
            }
        }
    }
}

/* Failed before any rank started: closing the connections ends the proxies. */
void mp_abandon_proxies(void)
{
    mp.failed = 1;
    if (mp.exit_code == 0) {
        mp.exit_code = 1;
    }
    for (int p = 0; p < mp.nproxies; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        if (px->ctl.fd >= 0) {
            weft_ctl_conn_fini(&px->ctl);
        }
        px->ctl.fd  = -1;
        px->ctl.eof = 1;
        px->done    = 1;
        if (px->pid <= 0) {
            px->reaped = 1;
        } else if (!px->is_local && !px->reaped && px->connected) {
            /* It has the job and its /dev/shm files: SIGTERM (its guard
             * passes it on and then sweeps the host; the closed connection
             * ends it too), SIGKILL after the grace period (mp_heartbeat). */
            mp_end_launcher(px);
        } else if (!px->is_local && !px->reaped) {
            kill(-px->pid, SIGKILL); /* the launcher command and what it started here */
        }
    }
    mp_reap_proxies();
}

void mp_start_ranks(void)
{
    int shown = 0;

    for (int p = 0; p < mp.nproxies; p++) {
        if (mp.bind.show && mp.proxies[p].note[0] != '\0') {
            printf("mpiexec: host %s: %s\n", mp.proxies[p].host, mp.proxies[p].note);
            shown = 1;
        }
    }
    if (mp.bind.show) {
        for (int r = 0; r < mp.np; r++) {
            printf("RANK:%d CPU_SET: %s\n", r, mp.ranks[r].binding ? mp.ranks[r].binding : "?");
            shown = 1;
        }
    }
    if (shown) {
        fflush(stdout);
    }
    for (int p = 0; p < mp.nproxies; p++) {
        if (mp.proxies[p].ctl.fd >= 0) { /* proxies pass GO down their tree */
            weft_ctl_send(&mp.proxies[p].ctl, WEFT_CTL_GO, 0, 0, NULL, 0);
        }
    }
    mp.go_sent = 1;
}

/* One FENCE_IN per direct connection (tree roots bring their subtree's)
 * ends a fence. Under -disable-auto-cleanup a direct proxy whose ranks all
 * died has ended: the survivors' fences no longer wait for it. */
void mp_fence_check(void)
{
    int gone = 0;

    if (mp.fence_count == 0) {
        return;
    }
    for (int q = 0; mp.no_auto_cleanup && q < mp.nproxies; q++) {
        mp_proxy_t *px = &mp.proxies[q];
        gone += px->done && !px->fenced && (px->is_local || (px->pos >= 0 && px->pos < mp.degree));
    }
    if (mp.fence_count + gone < mp.ndirect) {
        return;
    }
    if (mp.verbose) {
        mp_msg("mpiexec: fence %d: %d message(s) for %d host(s), %zu bytes of puts",
               ++mp.fences_done, mp.fence_count, mp.nproxies, mp.fence_buf.len);
    }
    for (int q = 0; q < mp.nproxies; q++) {
        mp.proxies[q].fenced = 0;
        if (mp.proxies[q].ctl.fd >= 0) {
            weft_ctl_send(&mp.proxies[q].ctl, WEFT_CTL_FENCE_OUT, 0, 0, mp.fence_buf.data,
                          mp.fence_buf.len);
        }
    }
    mp.fence_buf.len = 0;
    mp.fence_count   = 0;
}

void mp_handle(int p, const weft_ctl_hdr_t *hdr, const char *payload)
{
    mp_proxy_t *px = &mp.proxies[p];

    switch (hdr->type) {
    case WEFT_CTL_BINDING:
        if (hdr->a0 >= 0 && hdr->a0 < mp.np) {
            free(mp.ranks[hdr->a0].binding);
            mp.ranks[hdr->a0].binding = strdup(payload);
        }
        break;
    case WEFT_CTL_READY:
        if (hdr->a0 != 0) {
            mp_msg("mpiexec: error: host %s: %s", px->host, payload);
            mp_abandon_proxies();
            break;
        }
        snprintf(px->note, sizeof(px->note), "%s", payload);
        px->ready = 1;
        if (++mp.nready == mp.nproxies && !mp.failed) {
            mp_start_ranks();
        }
        break;
    case WEFT_CTL_STARTED:
        if (hdr->a0 >= 0 && hdr->a0 < mp.np) {
            mp.ranks[hdr->a0].pid = hdr->a1;
            if (mp.verbose) {
                mp_msg("mpiexec: rank %d started on host %s as pid %d", hdr->a0, px->host,
                       hdr->a1);
            }
        }
        break;
    case WEFT_CTL_OUTPUT:
        mp_output(hdr->a0, hdr->a1, payload, hdr->len);
        break;
    case WEFT_CTL_NOEXEC:
        mp_agent_started(hdr->a0, hdr->a1);
        break;
    case WEFT_CTL_EXECED:
        mp_agent_started(hdr->a0, 0);
        break;
    case WEFT_CTL_NAME: {
        const char *service = payload;
        const char *port    = hdr->len > strlen(service) ? service + strlen(service) + 1 : "";
        mp_ns_request(p, hdr->a0, hdr->a1, service, port);
        break;
    }
    case WEFT_CTL_SPAWN:
        mp_spawn_request(p, hdr->a0, payload, hdr->len);
        break;
    case WEFT_CTL_STDIN_ACK:
        mp.stdin_outstanding -= hdr->a0;
        break;
    case WEFT_CTL_FENCE_IN:
        weft_buf_append(&mp.fence_buf, payload, hdr->len);
        if (!px->fenced) {
            px->fenced = 1;
            mp.fence_count++;
        }
        mp_fence_check();
        break;
    case WEFT_CTL_ABORT: {
        int first = mp.failed ? mp.exit_code : -1;
        if (mp.no_auto_cleanup && !mp.killed) {
            mp.failed = 0; /* told even after a lost rank (which may be why) */
        }
        mp_fail(hdr->a1, SIGKILL, "mpiexec: rank %d called MPI_Abort with code %d: %s", hdr->a0,
                hdr->a1, payload[0] ? payload : "(no message)");
        if (first >= 0) {
            mp.exit_code = first; /* the first failure's code stays the job's */
        }
        break;
    }
    case WEFT_CTL_EXIT:
        mp_rank_exit(p, hdr->a0, hdr->a1, payload);
        break;
    case WEFT_CTL_DONE:
        px->done = 1;
        mp_fence_check();
        break;
    case WEFT_CTL_HELLO:
        /* A remote proxy is up and authenticated: give it its job, and
         * start its children, which connect to it (a0 = its port). */
        if (px->is_local || px->connected) {
            break;
        }
        px->connected = 1;
        px->heard_ms  = weft_now_ms();
        if (mp.verbose) {
            mp_msg("mpiexec: weft-proxy on host %s (tree position %d) is up", px->host, px->pos);
        }
        mp_send_job(p);
        if (hdr->a0 > 0 && !mp.failed) {
            int first = weft_tree_first_child(px->pos, mp.degree);
            int n     = weft_tree_nchildren(px->pos, mp.degree, mp.nremote);
            for (int c = first; c < first + n && !mp.failed; c++) {
                mp_launch_remote(mp.pos_proxy[c], payload, hdr->a0);
            }
        }
        break;
    case WEFT_CTL_LOST:
        if (!px->done) {
            px->done = 1;
            mp_fail(1, SIGKILL, "mpiexec: error: lost the connection to weft-proxy on host %s",
                    px->host);
            mp_end_launcher(px);
        }
        break;
    default:
        break;
    }
}

void mp_on_signal(int sig)
{
    unsigned char c     = (unsigned char)sig;
    int           saved = errno;
    if (write(mp.sigpipe[1], &c, 1) < 0) {
        /* a wakeup is already pending */
    }
    errno = saved;
}

void mp_user_signal(int sig)
{
    if (mp.user_signal || mp.killed) {
        /* Second signal: no more grace. */
        mp_signal_all(SIGKILL);
        return;
    }
    mp.user_signal = sig;
    if (!mp.failed) {
        mp_msg("mpiexec: received signal %d (%s); forwarding it to all ranks", sig, strsignal(sig));
    }
    mp_fail(128 + sig, sig, NULL);
}

int mp_all_done(void)
{
    if (!mp_agents_done()) {
        return 0;
    }
    for (int p = 0; p < mp.nproxies; p++) {
        if (!mp.proxies[p].reaped) {
            return 0;
        }
    }
    return 1;
}

/* Read and handle everything proxy p has sent so far. */
void mp_drain_proxy(int p)
{
    mp_proxy_t *px = &mp.proxies[p];
    int         rd;

    if (px->ctl.fd < 0 || px->ctl.eof) {
        return;
    }
    rd = weft_ctl_read(&px->ctl);
    if (rd > 0) {
        px->heard_ms = weft_now_ms();
    }
    for (;;) {
        weft_ctl_hdr_t hdr;
        char          *payload;
        if (weft_ctl_next(&px->ctl, &hdr, &payload) != 1) {
            break;
        }
        if (hdr.type == WEFT_CTL_FROM) {
            /* From a proxy in p's subtree (or p itself): act as if it came
             * straight from that proxy. */
            weft_ctl_hdr_t inner;
            const char    *body;
            if (hdr.a0 >= 0 && hdr.a0 < mp.nremote &&
                weft_ctl_decode(payload, hdr.len, &inner, &body) == 0) {
                int   origin = mp.pos_proxy[hdr.a0];
                char *copy   = malloc(inner.len + 1);
                if (copy != NULL) {
                    memcpy(copy, body, inner.len);
                    copy[inner.len]              = '\0';
                    mp.proxies[origin].heard_ms = weft_now_ms();
                    mp_handle(origin, &inner, copy);
                    free(copy);
                }
            }
        } else {
            mp_handle(p, &hdr, payload);
        }
        free(payload);
    }
    if (rd <= 0) {
        px->ctl.eof = 1;
    }
}

/* A proxy on this host ended without cleaning up (kill -9): what it would
 * have done is ours. Its ranks died with it, but not their own children, in
 * the ranks' process groups; and the job's /dev/shm entries remain. (Remote
 * hosts have their guard for this, guard.h.) */
static void mp_cleanup_local(int p)
{
    for (int r = 0; r < mp.np; r++) {
        if (mp.node_of_rank[r] == p && mp.ranks[r].pid > 0) {
            kill(-mp.ranks[r].pid, SIGKILL);
        }
    }
    weft_cleanup_shm(mp.jobid, NULL);
}

void mp_reap_proxies(void)
{
    for (int p = 0; p < mp.nproxies; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        int         status;

        if (px->reaped || px->pid <= 0) {
            continue;
        }
        if (weft_bootstrap_wait(px->pid, &status, 1) == 1) {
            px->reaped = 1;
            /* Its last messages (exits, DONE) may still be in the socket.
             * A socketpair reaches EOF once the proxy is gone; a TCP link
             * that is down never may, so take only what has arrived. */
            if (!px->is_local) {
                mp_drain_proxy(p);
            }
            while (px->is_local && !px->done && px->ctl.fd >= 0 && !px->ctl.eof) {
                mp_drain_proxy(p);
            }
            if (!px->done && !px->is_local && !px->connected && WIFEXITED(status) &&
                WEXITSTATUS(status) == 127) {
                mp_fail(1, SIGKILL, "mpiexec: error: host %s has no weft-proxy at %s", px->host,
                        mp.proxy_path);
            } else if (!px->done && !px->is_local && !px->connected) {
                mp_fail(1, SIGKILL,
                        "mpiexec: error: host %s: launcher command '%s' failed (%s %d) before "
                        "weft-proxy connected back",
                        px->host, mp.launcher, WIFSIGNALED(status) ? "signal" : "exit code",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            } else if (!px->done && !px->is_local && WIFEXITED(status) &&
                       WEXITSTATUS(status) == 0) {
                /* A clean exit whose DONE is still on its way up the tree:
                 * judged when the job's connections have drained. */
                px->late_done = 1;
            } else if (!px->done) {
                /* Died without saying goodbye: its ranks died with it
                 * (parent-death signal); end the rest of the job. */
                mp_fail(1, SIGKILL, "mpiexec: error: weft-proxy on host %s died unexpectedly (%s %d)",
                        px->host, WIFSIGNALED(status) ? "signal" : "exit code",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                if (px->is_local) {
                    mp_cleanup_local(p);
                }
            }
        }
    }
}

/* The job description for proxy p: sent as soon as its control connection
 * exists (at once for local proxies, after the challenge for remote ones). */
