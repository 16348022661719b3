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

static struct {
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
} mp = {.sigpipe = {-1, -1}, .listener = {.fd = -1}};

static void mp_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return; /* stdout closed: drop the output, keep running */
        }
        buf += n;
        len -= (size_t)n;
    }
}

static void mp_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mp_msg(const char *fmt, ...)
{
    char    line[2048];
    va_list ap;
    int     n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n > sizeof(line) - 2) {
        n = (int)sizeof(line) - 2;
    }
    line[n++] = '\n';
    mp_write_all(STDERR_FILENO, line, (size_t)n);
}

/* One clear line and exit: everything that can be wrong before launch. */
static void mp_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void mp_die(int code, const char *fmt, ...)
{
    char    line[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    mp_msg("mpiexec: error: %s", line);
    exit(code);
}

static void mp_usage(void)
{
    printf("Usage: mpiexec [options] [NAME=value ...] program [args ...]\n"
           "       (mpirun is the same program)\n"
           "\n"
           "Options:\n"
           "  -n, -np N              number of processes (default: 1, or every slot of\n"
           "                         the -hosts/-f hosts)\n"
           "  -ppn N                 processes per host, filled host by host\n"
           "  -hosts a,b[:slots]     hosts to run on\n"
           "  -f, -hostfile FILE     file of host[:slots] lines (or one line per slot)\n"
           "  -launcher ssh|rsh|fork|slurm  how to start weft-proxy on other hosts (default\n"
           "                         ssh, or the template in WEFT_LAUNCHER_CMD, %%h = host;\n"
           "                         slurm, on every host, inside a Slurm allocation)\n"
           "  -launcher-exec PROG    the ssh-like program to use\n"
           "  -iface NAME            advertise this interface's address to remote hosts\n"
           "  -genv NAME VALUE       set NAME=VALUE for every rank\n"
           "  -env NAME VALUE        same as -genv (one program per job for now)\n"
           "  -genvall               pass mpiexec's whole environment (the default)\n"
           "  -genvnone              pass only variables set with -genv/-env/NAME=value\n"
           "  NAME=value             before the program: set NAME for every rank\n"
           "  -l, -prepend-rank      prefix each output line with \"[rank] \"\n"
           "  -timeout SECONDS       kill the job after SECONDS (exit code 124);\n"
           "                         MPIEXEC_TIMEOUT is used when not given\n"
           "  -bind-to core|socket|numa|none\n"
           "                         CPU binding level (see WEFT_CPU_BINDING_* variables)\n"
           "  -verbose               print what the launcher does\n"
           "  -h, --help             this text\n"
           "  --version              print the version\n"
           "\n"
           "CPU binding variables (MV2_* names are accepted too):\n"
           "  WEFT_ENABLE_AFFINITY=0|1, WEFT_CPU_BINDING_POLICY=bunch|scatter|none,\n"
           "  WEFT_CPU_BINDING_LEVEL=core|socket|numanode, WEFT_CPU_MAPPING=0:1 or 0,2-4:1,\n"
           "  WEFT_SHOW_CPU_BINDING=1\n"
           "\n"
           "Exit code: 0 when every rank exits 0; otherwise the first failing rank's\n"
           "code (128+signal when killed), the MPI_Abort code, 124 on timeout, 2 on\n"
           "usage errors.\n");
}

static int mp_parse_count(const char *flag, const char *text)
{
    char *end;
    long  v;

    if (text == NULL) {
        mp_die(MP_EXIT_USAGE, "%s needs a value (see mpiexec -h)", flag);
    }
    errno = 0;
    v     = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v <= 0 || v > 1000000) {
        mp_die(MP_EXIT_USAGE, "%s expects a positive integer, got '%s'", flag, text);
    }
    return (int)v;
}

static int mp_is_env_word(const char *s)
{
    const char *eq = strchr(s, '=');

    if (eq == NULL || eq == s || !(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return 0;
    }
    for (const char *p = s; p < eq; p++) {
        if (!isalnum((unsigned char)*p) && *p != '_') {
            return 0;
        }
    }
    return 1;
}

static int mp_valid_name(const char *s)
{
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return 0;
    }
    for (; *s; s++) {
        if (!isalnum((unsigned char)*s) && *s != '_') {
            return 0;
        }
    }
    return 1;
}

static void mp_add_env(const char *name, const char *value)
{
    size_t n  = strlen(name) + strlen(value) + 2;
    char  *kv = malloc(n);

    mp.envset = realloc(mp.envset, sizeof(char *) * (size_t)(mp.nenvset + 1));
    if (kv == NULL || mp.envset == NULL) {
        mp_die(1, "out of memory");
    }
    snprintf(kv, n, "%s=%s", name, value);
    mp.envset[mp.nenvset++] = kv;
}

static void mp_parse_args(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char *o;

        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-') {
            if (mp_is_env_word(a)) {
                const char *eq = strchr(a, '=');
                char        name[256];
                snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
                mp_add_env(name, eq + 1);
                continue;
            }
            break;
        }
        o = a[1] == '-' ? a + 2 : a + 1; /* accept -flag and --flag */
        if (!strcmp(o, "n") || !strcmp(o, "np")) {
            mp.np       = mp_parse_count(a, v);
            mp.np_given = 1;
            i++;
        } else if (!strcmp(o, "ppn")) {
            mp.ppn = mp_parse_count(a, v);
            i++;
        } else if (!strcmp(o, "hosts") || !strcmp(o, "host")) {
            char err[512];
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs a host list (see mpiexec -h)", a);
            }
            if (weft_hosts_parse_list(v, &mp.hosts, &mp.nhosts, err, sizeof(err)) != 0) {
                mp_die(MP_EXIT_USAGE, "%s", err);
            }
            i++;
        } else if (!strcmp(o, "f") || !strcmp(o, "hostfile") || !strcmp(o, "machinefile")) {
            char err[1200];
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs a file name (see mpiexec -h)", a);
            }
            if (weft_hosts_parse_file(v, &mp.hosts, &mp.nhosts, err, sizeof(err)) != 0) {
                mp_die(MP_EXIT_USAGE, "%s", err);
            }
            i++;
        } else if (!strcmp(o, "genv") || !strcmp(o, "env")) {
            if (v == NULL || i + 2 >= argc) {
                mp_die(MP_EXIT_USAGE, "%s needs NAME and VALUE (see mpiexec -h)", a);
            }
            if (!mp_valid_name(v)) {
                mp_die(MP_EXIT_USAGE, "%s: bad variable name '%s'", a, v);
            }
            mp_add_env(v, argv[i + 2]);
            i += 2;
        } else if (!strcmp(o, "genvall") || !strcmp(o, "envall")) {
            mp.genvnone = 0;
        } else if (!strcmp(o, "genvnone") || !strcmp(o, "envnone")) {
            mp.genvnone = 1;
        } else if (!strcmp(o, "l") || !strcmp(o, "prepend-rank")) {
            mp.prepend = 1;
        } else if (!strcmp(o, "timeout") || !strcmp(o, "t")) {
            mp.timeout = mp_parse_count(a, v);
            i++;
        } else if (!strcmp(o, "bind-to") || !strcmp(o, "binding")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs core|socket|numa|none", a);
            }
            if (strcmp(v, "core") && strcmp(v, "socket") && strcmp(v, "numa") &&
                strcmp(v, "numanode") && strcmp(v, "none")) {
                mp_die(MP_EXIT_USAGE, "%s: unknown level '%s' (expected core|socket|numa|none)", a,
                       v);
            }
            mp.bindto = v;
            i++;
        } else if (!strcmp(o, "iface")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs a network interface name", a);
            }
            mp.iface = v;
            i++;
        } else if (!strcmp(o, "launcher") || !strcmp(o, "bootstrap") || !strcmp(o, "rsh")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs ssh|rsh|fork", a);
            }
            if (!strcmp(v, "fork")) {
                mp.all_local = 1;
            } else if (!strcmp(v, "slurm")) {
                mp.slurm_boot = 1;
            } else if (!strcmp(v, "ssh") || !strcmp(v, "rsh")) {
                mp.launcher = v;
            } else {
                mp_die(MP_EXIT_USAGE, "%s: launcher '%s' is not supported (ssh|rsh|fork|slurm; "
                       "or a command template in WEFT_LAUNCHER_CMD)", a, v);
            }
            i++;
        } else if (!strcmp(o, "launcher-exec") || !strcmp(o, "bootstrap-exec")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs a program", a);
            }
            mp.launcher = v;
            i++;
        } else if (!strcmp(o, "verbose") || !strcmp(o, "v")) {
            mp.verbose = 1;
        } else if (!strcmp(o, "h") || !strcmp(o, "help")) {
            mp_usage();
            exit(0);
        } else if (!strcmp(o, "version") || !strcmp(o, "V")) {
            printf("mpiexec (Weft) %s\n", WEFT_VERSION);
            exit(0);
        } else {
            mp_die(MP_EXIT_USAGE, "unknown option '%s' (see mpiexec -h)", a);
        }
    }
    if (i >= argc) {
        mp_die(MP_EXIT_USAGE, "no program to run (usage: mpiexec [options] program [args])");
    }
    mp.prog_argc = argc - i;
    mp.prog_argv = argv + i;
}

/* The value PATH will have for the ranks. */
static const char *mp_rank_path(void)
{
    for (int i = mp.nenvset - 1; i >= 0; i--) {
        if (strncmp(mp.envset[i], "PATH=", 5) == 0) {
            return mp.envset[i] + 5;
        }
    }
    return mp.genvnone ? "/usr/local/bin:/usr/bin:/bin" : (getenv("PATH") ? getenv("PATH") : "");
}

static void mp_check_exe(const char *path, const char *name)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        mp_die(127, "program '%s' not found", name);
    }
    if (S_ISDIR(st.st_mode)) {
        mp_die(126, "program '%s' is a directory", name);
    }
    if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0) {
        mp_die(126, "program '%s' is not executable", name);
    }
}

/* Absolute form of path without resolving symlinks: a venv's bin/python is a
 * symlink, and following it would start the base interpreter outside the
 * venv (as would happen to any program that looks at its own path). */
static void mp_absolute(const char *path, char *out, size_t len)
{
    char cwd[PATH_MAX];

    if (path[0] == '/' || getcwd(cwd, sizeof(cwd)) == NULL) {
        snprintf(out, len, "%s", path);
        return;
    }
    const char *rel = path[0] == '.' && path[1] == '/' ? path + 2 : path;
    if ((size_t)snprintf(out, len, "%s/%s", cwd, rel) >= len) {
        mp_die(127, "program path '%s' is too long", path);
    }
}

static void mp_resolve_program(void)
{
    const char *name = mp.prog_argv[0];

    if (name[0] == '\0') {
        mp_die(MP_EXIT_USAGE, "empty program name");
    }
    if (strchr(name, '/') != NULL) {
        mp_check_exe(name, name);
        mp_absolute(name, mp.prog_path, sizeof(mp.prog_path));
        return;
    }
    const char *p = mp_rank_path();
    while (p != NULL) {
        const char *colon = strchr(p, ':');
        size_t      n     = colon ? (size_t)(colon - p) : strlen(p);
        char        cand[PATH_MAX];
        struct stat st;

        snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, n ? p : ".", name);
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            mp_absolute(cand, mp.prog_path, sizeof(mp.prog_path));
            return;
        }
        p = colon ? colon + 1 : NULL;
    }
    mp_die(127, "program '%s' not found in PATH", name);
}

static void mp_find_proxy(void)
{
    char        self[PATH_MAX];
    ssize_t     n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    struct stat st;

    if (n > 0) {
        self[n]     = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(mp.proxy_path, sizeof(mp.proxy_path), "%.4000s/weft-proxy", self);
            if (stat(mp.proxy_path, &st) == 0 && access(mp.proxy_path, X_OK) == 0) {
                return;
            }
        }
    }
    snprintf(mp.proxy_path, sizeof(mp.proxy_path), "%s/bin/weft-proxy", WEFT_PREFIX);
    if (access(mp.proxy_path, X_OK) != 0) {
        mp_die(1, "cannot find weft-proxy next to mpiexec or in %s/bin", WEFT_PREFIX);
    }
}

static void mp_load_binding(void)
{
    char err[1200];

    mp.bind.enable = weft_tunables.ENABLE_AFFINITY;
    mp.bind.policy = weft_tunables.CPU_BINDING_POLICY;
    mp.bind.level  = weft_tunables.CPU_BINDING_LEVEL;
    mp.bind.show   = weft_tunables.SHOW_CPU_BINDING;
    snprintf(mp.bind.mapping, sizeof(mp.bind.mapping), "%s",
             weft_tunables.CPU_MAPPING ? weft_tunables.CPU_MAPPING : "");
    if (mp.bindto != NULL) {
        if (!strcmp(mp.bindto, "none")) {
            mp.bind.policy = WEFT_BIND_NONE;
        } else {
            if (mp.bind.policy == WEFT_BIND_NONE) {
                mp.bind.policy = WEFT_BIND_BUNCH;
            }
            mp.bind.level = !strcmp(mp.bindto, "core")     ? WEFT_BIND_CORE
                            : !strcmp(mp.bindto, "socket") ? WEFT_BIND_SOCKET
                                                           : WEFT_BIND_NUMA;
            mp.bind.mapping[0] = '\0'; /* an explicit flag beats an inherited map */
        }
    }
    if (mp.bind.mapping[0] != '\0' &&
        weft_binding_check_mapping(mp.bind.mapping, err, sizeof(err)) != 0) {
        const char *origin = weft_tunables_origin(WEFT_TUNABLE_CPU_MAPPING);
        mp_die(MP_EXIT_USAGE, "%s: %s", origin ? origin : "WEFT_CPU_MAPPING", err);
    }
}

/* Place ranks on hosts and group them into one proxy per distinct host. */
static void mp_place(void)
{
    char err[512];
    int  r = 0;

    if (mp.nhosts == 0) {
        mp.hosts  = calloc(1, sizeof(weft_host_t));
        mp.nhosts = 1;
        if (gethostname(mp.hosts[0].name, sizeof(mp.hosts[0].name)) != 0) {
            snprintf(mp.hosts[0].name, sizeof(mp.hosts[0].name), "localhost");
        }
        mp.hosts[0].name[sizeof(mp.hosts[0].name) - 1] = '\0';
        mp.hosts[0].slots = mp.np;
        mp.proxies        = calloc(1, sizeof(mp_proxy_t));
        mp.proxies[0].is_local = 1;
        snprintf(mp.proxies[0].host, sizeof(mp.proxies[0].host), "%s", mp.hosts[0].name);
        mp.nproxies = 1;
    } else {
        mp.proxies = calloc((size_t)mp.nhosts, sizeof(mp_proxy_t));
        for (int h = 0; h < mp.nhosts; h++) {
            /* Names that do not resolve here are remote: they go to the
             * launcher command as given. */
            int p, local = mp.all_local || (!mp.slurm_boot && weft_host_is_local(
                                                                   mp.hosts[h].name, err,
                                                                   sizeof(err)) == 1);
            for (p = 0; p < mp.nproxies; p++) {
                if (!strcmp(mp.proxies[p].host, mp.hosts[h].name)) {
                    break;
                }
            }
            if (p == mp.nproxies) {
                snprintf(mp.proxies[p].host, sizeof(mp.proxies[p].host), "%s", mp.hosts[h].name);
                mp.proxies[p].is_local = local;
                mp.nproxies++;
            }
        }
    }
    mp.ranks        = calloc((size_t)mp.np, sizeof(mp_rank_t));
    mp.node_of_rank = calloc((size_t)mp.np, sizeof(int));
    if (mp.proxies == NULL || mp.ranks == NULL || mp.node_of_rank == NULL) {
        mp_die(1, "out of memory");
    }
    /* Hosts in order, each taking -ppn (or its slot count) ranks, wrapping
     * around when every host is full. */
    while (r < mp.np) {
        for (int h = 0; h < mp.nhosts && r < mp.np; h++) {
            int block = mp.ppn > 0 ? mp.ppn : mp.hosts[h].slots;
            int p;
            for (p = 0; p < mp.nproxies; p++) {
                if (!strcmp(mp.proxies[p].host, mp.hosts[h].name)) {
                    break;
                }
            }
            for (int k = 0; k < block && r < mp.np; k++, r++) {
                mp_proxy_t *px = &mp.proxies[p];
                px->ranks      = realloc(px->ranks, sizeof(int) * (size_t)(px->nranks + 1));
                px->ranks[px->nranks++] = r;
                mp.ranks[r].proxy       = p;
                mp.node_of_rank[r]      = p;
            }
        }
    }
    /* Hosts that got no rank (-n below the slot count) get no proxy. */
    int kept = 0;
    for (int p = 0; p < mp.nproxies; p++) {
        if (mp.proxies[p].nranks == 0) {
            continue;
        }
        for (int k = 0; k < mp.proxies[p].nranks; k++) {
            int rank                = mp.proxies[p].ranks[k];
            mp.ranks[rank].proxy    = kept;
            mp.node_of_rank[rank]   = kept;
        }
        mp.proxies[kept++] = mp.proxies[p];
    }
    mp.nproxies = kept;
}

/* PMI_process_mapping: one (node,1,count) block per run of ranks. */
static char *mp_mapping(void)
{
    weft_buf_t b = {0};
    char       item[64];

    weft_buf_append(&b, "(vector", 7);
    for (int r = 0; r < mp.np;) {
        int s = r;
        while (r < mp.np && mp.node_of_rank[r] == mp.node_of_rank[s]) {
            r++;
        }
        snprintf(item, sizeof(item), ",(%d,1,%d)", mp.node_of_rank[s], r - s);
        weft_buf_append(&b, item, strlen(item));
    }
    weft_buf_append(&b, ")", 2);
    if (b.len > 1000) {
        b.data[0] = '\0'; /* too long for one PMI value: clients use host names */
    }
    return b.data;
}

static char **mp_build_env(int *n_p)
{
    static const char *const strip[] = {"PMI_FD=",   "PMI_PORT=", "PMI_ID=", "PMI_RANK=",
                                        "PMI_SIZE=", "PMI_JOBID=", "WEFT_JOBID="};
    char **env = NULL;
    int    n   = 0;

    if (!mp.genvnone) {
        for (char **e = environ; *e != NULL; e++) {
            int skip = 0;
            for (size_t s = 0; s < sizeof(strip) / sizeof(strip[0]) && !skip; s++) {
                skip = strncmp(*e, strip[s], strlen(strip[s])) == 0;
            }
            if (!skip) {
                env      = realloc(env, sizeof(char *) * (size_t)(n + 1));
                env[n++] = *e;
            }
        }
    }
    for (int i = 0; i < mp.nenvset; i++) {
        size_t len = strcspn(mp.envset[i], "=") + 1;
        int    j;
        for (j = 0; j < n; j++) {
            if (strncmp(env[j], mp.envset[i], len) == 0) {
                break;
            }
        }
        if (j == n) {
            env = realloc(env, sizeof(char *) * (size_t)(n + 1));
            n++;
        }
        env[j] = mp.envset[i];
    }
    *n_p = n;
    return env;
}

/* To proxy p: directly, or down the tree in a TO envelope via its root. */
static int mp_send_to(int p, int type, int a0, int a1, const void *data, size_t len)
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

static void mp_signal_all(int sig)
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
    if (sig == SIGKILL) {
        mp.killed    = 1;
        mp.kill_at   = 0;
        mp.killed_ms = weft_now_ms();
    }
}

static void mp_abandon_proxies(void);

/* First failure decides the exit code and prints; later ones stay quiet. */
static void mp_fail(int code, int sig, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void mp_fail(int code, int sig, const char *fmt, ...)
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
    if (sig == SIGKILL) {
        if (!mp.killed) {
            mp_signal_all(SIGKILL);
        }
    } else if (!mp.killed && mp.kill_at == 0) {
        mp_signal_all(sig);
        mp.kill_at = weft_now_ms() + MP_KILL_GRACE_MS;
    }
}

static void mp_reap_proxies(void);
static void mp_handle(int p, const weft_ctl_hdr_t *hdr, const char *payload);
static void mp_send_job(int p);
static void mp_launch_remote(int p, const char *addr, int port);
static void mp_end_launcher(mp_proxy_t *px);

static void mp_emit_line(int rank, int stream, const char *data, size_t len)
{
    char   prefix[32];
    size_t plen = 0;

    if (mp.prepend) {
        plen = (size_t)snprintf(prefix, sizeof(prefix), "[%d] ", rank);
    }
    if (plen == 0) {
        mp_write_all(stream, data, len);
        return;
    }
    /* One write per line keeps prefixed lines whole. */
    char  small[4096];
    char *buf = plen + len <= sizeof(small) ? small : malloc(plen + len);
    if (buf == NULL) {
        mp_write_all(stream, prefix, plen);
        mp_write_all(stream, data, len);
        return;
    }
    memcpy(buf, prefix, plen);
    memcpy(buf + plen, data, len);
    mp_write_all(stream, buf, plen + len);
    if (buf != small) {
        free(buf);
    }
}

static void mp_flush_partial(int rank, int s)
{
    weft_buf_t *b = &mp.ranks[rank].line[s];

    if (b->len > 0) {
        mp_emit_line(rank, s + 1, b->data, b->len);
        b->len = 0;
    }
}

static void mp_output(int rank, int stream, const char *data, size_t len)
{
    int         s = stream == 2 ? 1 : 0;
    weft_buf_t *b;
    size_t      start = 0;

    if (rank < 0 || rank >= mp.np) {
        return;
    }
    b = &mp.ranks[rank].line[s];
    if (len == 0) {
        mp_flush_partial(rank, s);
        return;
    }
    weft_buf_append(b, data, len);
    for (size_t i = 0; i < b->len; i++) {
        if (b->data[i] == '\n') {
            mp_emit_line(rank, s + 1, b->data + start, i + 1 - start);
            start = i + 1;
        }
    }
    weft_buf_consume(b, start);
    if (b->len > 65536) {
        mp_flush_partial(rank, s);
    }
    mp.ranks[rank].line_ms[s] = weft_now_ms();
}

static void mp_rank_exit(int p, int rank, int status, const char *info)
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
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        mp_fail(128 + sig, SIGKILL, "mpiexec: error: rank %d (pid %d) on host %s killed by signal %d (%s)",
                rank, pid, host, sig, strsignal(sig));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        mp_fail(WEXITSTATUS(status), SIGKILL,
                "mpiexec: error: rank %d (pid %d) on host %s exited with code %d", rank, pid, host,
                WEXITSTATUS(status));
    } else if (init && !fin) {
        mp_fail(1, SIGKILL,
                "mpiexec: error: rank %d (pid %d) on host %s exited with code 0 without "
                "finalizing (MPI_Init without MPI_Finalize)",
                rank, pid, host);
    }
}

/* Failed before any rank started: closing the connections ends the proxies. */
static void mp_abandon_proxies(void)
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
        } else if (!px->is_local && !px->reaped) {
            kill(-px->pid, SIGKILL); /* the launcher command and what it started here */
        }
    }
    mp_reap_proxies();
}

static void mp_start_ranks(void)
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

static void mp_handle(int p, const weft_ctl_hdr_t *hdr, const char *payload)
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
    case WEFT_CTL_STDIN_ACK:
        mp.stdin_outstanding -= hdr->a0;
        break;
    case WEFT_CTL_FENCE_IN:
        weft_buf_append(&mp.fence_buf, payload, hdr->len);
        /* One FENCE_IN per direct connection: tree roots bring their subtree's. */
        if (++mp.fence_count == mp.ndirect) {
            if (mp.verbose) {
                mp_msg("mpiexec: fence %d: %d message(s) for %d host(s), %zu bytes of puts",
                       ++mp.fences_done, mp.fence_count, mp.nproxies, mp.fence_buf.len);
            }
            for (int q = 0; q < mp.nproxies; q++) {
                if (mp.proxies[q].ctl.fd >= 0) {
                    weft_ctl_send(&mp.proxies[q].ctl, WEFT_CTL_FENCE_OUT, 0, 0,
                                  mp.fence_buf.data, mp.fence_buf.len);
                }
            }
            mp.fence_buf.len = 0;
            mp.fence_count   = 0;
        }
        break;
    case WEFT_CTL_ABORT:
        mp_fail(hdr->a1, SIGKILL, "mpiexec: rank %d called MPI_Abort with code %d: %s", hdr->a0,
                hdr->a1, payload[0] ? payload : "(no message)");
        break;
    case WEFT_CTL_EXIT:
        mp_rank_exit(p, hdr->a0, hdr->a1, payload);
        break;
    case WEFT_CTL_DONE:
        px->done = 1;
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

static void mp_on_signal(int sig)
{
    unsigned char c     = (unsigned char)sig;
    int           saved = errno;
    if (write(mp.sigpipe[1], &c, 1) < 0) {
        /* a wakeup is already pending */
    }
    errno = saved;
}

static void mp_user_signal(int sig)
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

static int mp_stdin_usable(void)
{
    /* Reading a terminal from the background would stop us (SIGTTIN). */
    if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp()) {
        return 0;
    }
    return fcntl(STDIN_FILENO, F_GETFD) >= 0;
}

static void mp_read_stdin(void)
{
    char    chunk[65536];
    int     p0 = mp.ranks[0].proxy;
    ssize_t n  = read(STDIN_FILENO, chunk, sizeof(chunk));

    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        return;
    }
    if (n <= 0) {
        mp.stdin_open = 0;
        mp_send_to(p0, WEFT_CTL_STDIN, 0, 0, NULL, 0);
        return;
    }
    mp.stdin_outstanding += n;
    mp_send_to(p0, WEFT_CTL_STDIN, 0, 0, chunk, (size_t)n);
}

static int mp_all_done(void)
{
    for (int p = 0; p < mp.nproxies; p++) {
        if (!mp.proxies[p].reaped) {
            return 0;
        }
    }
    return 1;
}

/* Read and handle everything proxy p has sent so far. */
static void mp_drain_proxy(int p)
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

static void mp_reap_proxies(void)
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
            }
        }
    }
}

/* The job description for proxy p: sent as soon as its control connection
 * exists (at once for local proxies, after the challenge for remote ones). */
static struct {
    char  *mapping;
    char **env;
    int    nenv;
    char   cwd[4096];
} mp_jobspec;

static void mp_send_job(int p)
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
    job.universe   = mp.np;
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
    if (weft_job_pack(&job, &packed) != 0 ||
        mp_send_to(p, WEFT_CTL_JOB, 0, 0, packed.data, packed.len) != 0) {
        mp_msg("mpiexec: error: cannot send the job to the proxy on %s", px->host);
        mp.failed    = 1;
        mp.exit_code = 1;
    }
    job.argv[0] = saved0;
    weft_buf_free(&packed);
    if (mp.verbose) {
        mp_msg("mpiexec: job %s: proxy pid %d on host %s runs %d rank(s) from %d", mp.jobid,
               (int)px->pid, px->host, px->nranks, px->ranks[0]);
    }
}

/* A tree root proved the secret: index is its tree position. Its HELLO
 * follows on the connection. */
static int mp_on_remote_conn(void *ctx, int fd, unsigned index)
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

static void mp_on_refused(void *ctx, const char *text)
{
    (void)ctx;
    mp_msg("mpiexec: warning: %s", text);
}

static void mp_open_listener(void)
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
    /* Ranks on this host pin the netmod to the interface remote hosts reach
     * us on (a remote proxy overrides it with its own side of that link). */
    static char host_addr[96];
    snprintf(host_addr, sizeof(host_addr), "WEFT_HOST_ADDR=%s", mp.listener.addr);
    mp_jobspec.env = realloc(mp_jobspec.env, sizeof(char *) * (size_t)(mp_jobspec.nenv + 1));
    if (mp_jobspec.env == NULL) {
        mp_die(1, "out of memory");
    }
    mp_jobspec.env[mp_jobspec.nenv++] = host_addr;
    if (mp.verbose) {
        mp_msg("mpiexec: remote proxies connect to %s:%d (interface %s), started by '%s'",
               mp.listener.addr, mp.listener.port, mp.listener.iface, mp.launcher);
    }
}

/* A remote host is lost. SIGTERM first: when the launcher is the proxy
 * itself (ip netns exec), it then kills its ranks' process groups; over ssh
 * the remote proxy ends them when it stops hearing from us. SIGKILL follows
 * after the grace period (mp_heartbeat). */
static void mp_end_launcher(mp_proxy_t *px)
{
    if (px->pid > 0 && !px->reaped && px->term_ms == 0) {
        kill(-px->pid, SIGTERM);
        px->term_ms = weft_now_ms();
    }
}

/* Remote links: say we are here, and give up a host that has been silent
 * for the heartbeat timeout (host down, link down, proxy stopped). */
static void mp_heartbeat(long long now)
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
static void mp_launch_remote(int p, const char *addr, int port)
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
static void mp_drain_remote_links(void)
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

static void mp_launch(void)
{
    char err[512];

    mp_jobspec.mapping = mp_mapping();
    mp_jobspec.env     = mp_build_env(&mp_jobspec.nenv);
    if (getcwd(mp_jobspec.cwd, sizeof(mp_jobspec.cwd)) == NULL) {
        mp_jobspec.cwd[0] = '\0';
    }
    for (int p = 0; p < mp.nproxies && !mp.failed; p++) {
        mp_proxy_t *px = &mp.proxies[p];
        int         fd;

        if (px->is_local) {
            char *proxy_argv[] = {mp.proxy_path, NULL};
            if (weft_bootstrap_launch(px->host, 1, proxy_argv, &fd, &px->pid, err,
                                      sizeof(err)) != 0) {
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
    mp_load_binding();
    mp_resolve_program();
    mp_find_proxy();
    mp_place();
    mp_open_listener();

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
        struct pollfd pfds[mp.nproxies + 2 + nlisten];
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
    return mp.failed ? mp.exit_code : 0;
}
