/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * State and functions shared by the files of mpiexec (mpiexec.c has the
 * overview and main loop). One process, one job: the state is one global.
 */
#ifndef WEFT_LAUNCHER_MPIEXEC_H
#define WEFT_LAUNCHER_MPIEXEC_H

#include "common/auth.h"
#include "common/binding.h"
#include "common/bootstrap.h"
#include "common/buf.h"
#include "common/ctl.h"
#include "common/hosts.h"
#include "common/job.h"
#include "common/listener.h"
#include "common/tree.h"
#include "util/tunables.h"
#include "weft_build_config.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

#define MP_KILL_GRACE_MS    2000
#define MP_STDIN_WINDOW     (256 * 1024)
#define MP_PARTIAL_FLUSH_MS 200
#define MP_EXIT_USAGE       2
/* Budget for looking up the host names to find this machine among them
 * (all at once; a name not answered by then is another machine's) */
#define MP_HOST_LOOKUP_MS   1000

typedef struct {
    char            host[256];
    int             is_local;
    int             connected; /* remote: passed the secret challenge */
    long long       heard_ms;  /* remote: last byte received (heartbeat) */
    long long       term_ms;   /* remote: when we asked its launcher to end, 0 = not yet */
    int             pos;       /* remote: position in the proxy tree (tree.h); -1 local */
    int             late_done; /* remote: exited 0 before its relayed DONE arrived */
    pid_t           pid;       /* the proxy, or for remote hosts the launcher command */
    weft_ctl_conn_t ctl;
    int             ready;
    int             done;
    int             reaped;
    int             fenced;    /* direct: its FENCE_IN of this round arrived */
    int             nranks;
    int            *ranks;
    char            note[256];
} mp_proxy_t;

typedef struct {
    int        proxy;
    pid_t      pid;
    int        exited;
    weft_buf_t line[2]; /* partial stdout / stderr line */
    long long  line_ms[2];
    char      *binding;
} mp_rank_t;

/* Program 1.. of an MPMD command line ("A : -n 2 B"); program 0 is
 * prog_argv/prog_path. */
typedef struct {
    int         np;
    int         first;   /* its first rank */
    int         argc;
    char      **argv;
    const char *search;  /* its -path */
    char        path[PATH_MAX];
} mp_app_t;

/* A client connection of the name server (-nameserver-file). */
typedef struct {
    int        fd;
    weft_buf_t in;
} mp_ns_conn_t;

/* The mpiexec of a job spawned by one of our ranks. */
typedef struct {
    pid_t pid;
    int   reaped;
} mp_agent_t;

typedef struct {
    int                 np;
    int                 np_given;
    int                 ppn;
    int                 prepend;
    int                 verbose;
    int                 timeout;
    int                 genvnone;
    char              **envset; /* NAME=VALUE overrides, in command-line order */
    int                 nenvset;
    const char         *bindto;
    const char         *iface;    /* -iface, else WEFT_IFACE */
    const char         *launcher; /* remote start template (-launcher-exec, WEFT_LAUNCHER_CMD) */
    int                 all_local; /* -launcher fork: every host is this machine */
    int                 slurm_boot; /* proxies start as srun steps (inside an allocation) */
    weft_secret_t       secret;
    weft_listener_t     listener;
    int                 heartbeat_ms; /* silence that ends the job, 0 without remote hosts */
    int                 degree;       /* proxy tree fan-out (WEFT_MT_DEGREE) */
    int                 nremote;
    int                *pos_proxy;    /* tree position -> proxy index */
    int                 ndirect;      /* connections mpiexec itself holds */
    long long           killed_ms;
    long long           next_ping;
    weft_host_t        *hosts;
    int                 nhosts;
    int                 prog_argc;
    char              **prog_argv;
    char                prog_path[PATH_MAX];
    char                proxy_path[PATH_MAX];
    char                jobid[64];
    weft_binding_conf_t bind;

    mp_proxy_t *proxies;
    int         nproxies;
    mp_rank_t  *ranks;
    int        *node_of_rank;
    int         nready;
    int         go_sent;
    int         fence_count;
    int         fences_done;
    weft_buf_t  fence_buf;

    int       failed;
    int       exit_code;
    int       user_signal;
    long long kill_at;  /* escalate to SIGKILL at this time, 0 = not pending */
    int       killed;   /* SIGKILL sent */
    long long timeout_at;
    int       sigpipe[2];
    int       stdin_open;
    long      stdin_outstanding;

    mp_app_t       *apps;          /* MPMD programs after the first */
    int             napps;         /* entries in apps */

    /* Dynamic processes (mp_dynproc.c) */
    int             universe;      /* -usize, else the host list's slots, else np */
    const char     *wdir;          /* -wdir: the ranks' working directory */
    const char     *path;          /* -path: where to look for the program first */
    int             kill_on_child_failure;
    int             no_auto_cleanup; /* -disable-auto-cleanup: a dead rank leaves the rest running */
    const char     *ns_file;       /* -nameserver-file: serve names to other jobs */
    int             ns_file_written;
    const char     *ns_remote;     /* -nameserver / WEFT_NAMESERVER: use another job's */
    char          **ns_names;
    char          **ns_ports;
    int             ns_count;
    weft_secret_t   ns_secret;
    weft_listener_t ns_listener;
    mp_ns_conn_t   *ns_conns;
    int             ns_nconns;
    mp_agent_t     *agents;
    int             nagents;
    int             spawn_fd;      /* --spawn-fd: we run a spawned job; report here */
    int             nstarted;
    int            *noexec;        /* errno of each rank's failed exec, 0 if none */
    int             noexec_first;
} mp_state_t;

extern mp_state_t mp;

/* What every proxy gets in its job spec. */
typedef struct {
    char  *mapping;
    char **env;
    int    nenv;
    char   cwd[4096];
} mp_jobspec_t;

extern mp_jobspec_t mp_jobspec;

/* mp_args.c: messages, the command line, finding the program and weft-proxy */
void mp_write_all(int fd, const char *buf, size_t len);
void mp_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mp_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
void mp_usage(void);
int mp_parse_count(const char *flag, const char *text);
int mp_is_env_word(const char *s);
int mp_valid_name(const char *s);
void mp_add_env(const char *name, const char *value);
void mp_parse_args(int argc, char **argv);
const char *mp_rank_path(void);
void mp_check_exe(const char *path, const char *name);
void mp_absolute(const char *path, char *out, size_t len);
void mp_resolve_program(void);
void mp_find_proxy(void);
void mp_apps_finish(void);

/* mp_place.c: binding, placing ranks on hosts, PMI mapping, rank environment */
void mp_load_binding(void);
void mp_place(void);
char *mp_mapping(void);
char **mp_build_env(int *n_p);

/* mp_jobctl.c: job control: proxy messages, rank exits, failure, signals, reaping */
int mp_send_to(int p, int type, int a0, int a1, const void *data, size_t len);
void mp_signal_all(int sig);
void mp_fence_check(void);
void mp_fail(int code, int sig, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mp_rank_exit(int p, int rank, int status, const char *info);
void mp_abandon_proxies(void);
void mp_start_ranks(void);
void mp_handle(int p, const weft_ctl_hdr_t *hdr, const char *payload);
void mp_on_signal(int sig);
void mp_user_signal(int sig);
int mp_all_done(void);
void mp_drain_proxy(int p);
void mp_reap_proxies(void);

/* mp_stdio.c: ranks' output lines and rank 0's stdin */
void mp_emit_line(int rank, int stream, const char *data, size_t len);
void mp_flush_partial(int rank, int s);
void mp_output(int rank, int stream, const char *data, size_t len);
int mp_stdin_usable(void);
void mp_read_stdin(void);

/* mp_proxies.c: starting proxies (local and remote), the listener, the tree, heartbeats */
void mp_send_job(int p);
int mp_on_remote_conn(void *ctx, int fd, unsigned index);
void mp_on_refused(void *ctx, const char *text);
void mp_open_listener(void);
void mp_end_launcher(mp_proxy_t *px);
void mp_heartbeat(long long now);
void mp_launch_remote(int p, const char *addr, int port);
void mp_drain_remote_links(void);
void mp_launch(void);

/* mp_dynproc.c: name service, spawn (parent and agent side) */
void mp_ns_open(void);
void mp_ns_close(void);
int  mp_ns_nfds(void);
void mp_ns_fill(struct pollfd *pfds);
void mp_ns_service(const struct pollfd *pfds);
void mp_ns_request(int p, int conn, int op, const char *service, const char *port);
void mp_spawn_request(int p, int conn, const char *data, size_t len);
void mp_reap_agents(void);
int  mp_agents_done(void);
void mp_signal_agents(int sig);
void mp_agent_setup(void);
void mp_agent_started(int rank, int exec_errno);
void mp_agent_final(const char *why);

#endif
