/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Messages, the command line, finding the program and weft-proxy.
 */
#include "mpiexec.h"

void mp_write_all(int fd, const char *buf, size_t len)
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

void mp_msg(const char *fmt, ...)
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
void mp_die(int code, const char *fmt, ...)
{
    char    line[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    mp_msg("mpiexec: error: %s", line);
    mp_agent_final(line);
    mp_ns_close();
    exit(code);
}

void mp_usage(void)
{
    printf("Usage: mpiexec [options] [NAME=value ...] program [args ...]\n"
           "              [: -n N [-path DIRS] [-wdir DIR] program2 [args ...]] ...\n"
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
           "  -env NAME VALUE        same as -genv (every program of the job)\n"
           "  -genvall               pass mpiexec's whole environment (the default)\n"
           "  -genvnone              pass only variables set with -genv/-env/NAME=value\n"
           "  NAME=value             before the program: set NAME for every rank\n"
           "  -l, -prepend-rank      prefix each output line with \"[rank] \"\n"
           "  -timeout SECONDS       kill the job after SECONDS (exit code 124);\n"
           "                         MPIEXEC_TIMEOUT is used when not given\n"
           "  -bind-to core|socket|numa|none\n"
           "                         CPU binding level (see WEFT_CPU_BINDING_* variables)\n"
           "  -usize N               MPI_UNIVERSE_SIZE (default: the hosts' slots, or -n)\n"
           "  -wdir DIR              working directory of the ranks\n"
           "  -path DIRS             look for the program in DIRS (':'-separated) first\n"
           "  -nameserver-file FILE  serve MPI_Publish_name & co. to other jobs: write\n"
           "                         host:port:secret to FILE (mode 0600)\n"
           "  -nameserver ADDR       use another mpirun's name server: its FILE's line\n"
           "                         or path (also WEFT_NAMESERVER)\n"
           "  -kill-on-child-failure end this job when a job it spawned fails\n"
           "  -disable-auto-cleanup  a rank that dies does not end the job: the others\n"
           "                         go on (they see MPI errors on operations that need\n"
           "                         it); the exit code is still the first failure's\n"
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

int mp_parse_count(const char *flag, const char *text)
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

int mp_is_env_word(const char *s)
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

int mp_valid_name(const char *s)
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

void mp_add_env(const char *name, const char *value)
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

void mp_parse_args(int argc, char **argv)
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
        } else if (!strcmp(o, "usize") || !strcmp(o, "universe-size")) {
            mp.universe = mp_parse_count(a, v);
            i++;
        } else if (!strcmp(o, "wdir") || !strcmp(o, "dir")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs a directory", a);
            }
            mp.wdir = v;
            i++;
        } else if (!strcmp(o, "path")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs a directory list", a);
            }
            mp.path = v;
            i++;
        } else if (!strcmp(o, "nameserver-file")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs a file name", a);
            }
            mp.ns_file = v;
            i++;
        } else if (!strcmp(o, "nameserver")) {
            if (v == NULL) {
                mp_die(MP_EXIT_USAGE, "%s needs host:port:secret or an address file", a);
            }
            mp.ns_remote = v;
            i++;
        } else if (!strcmp(o, "kill-on-child-failure")) {
            mp.kill_on_child_failure = 1;
        } else if (!strcmp(o, "disable-auto-cleanup")) {
            mp.no_auto_cleanup = 1;
        } else if (!strcmp(o, "enable-auto-cleanup")) {
            mp.no_auto_cleanup = 0;
        } else if (!strcmp(o, "spawn-fd")) {
            /* Internal: this mpiexec runs a spawned job (pmi/pmi_spawn.h). */
            mp.spawn_fd = v ? atoi(v) : -1;
            if (mp.spawn_fd < 3 || fcntl(mp.spawn_fd, F_GETFD) < 0) {
                mp_die(MP_EXIT_USAGE, "%s needs an open file descriptor", a);
            }
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
    /* Relative program names and the ranks' cwd both start from -wdir. */
    if (mp.wdir != NULL && chdir(mp.wdir) != 0) {
        mp_die(MP_EXIT_USAGE, "-wdir %s: %s", mp.wdir, strerror(errno));
    }
    mp.prog_argv = argv + i;
    while (i < argc && strcmp(argv[i], ":") != 0) {
        i++;
    }
    mp.prog_argc = (int)(argv + i - mp.prog_argv);
    /* MPMD: "A args : -n N [-path P] [-wdir D] B args : ..." (one job; MPI_APPNUM
     * is the program's index). */
    while (i < argc) {
        mp_app_t app = {.np = 1};
        argv[i++]    = NULL; /* ends the previous program's argv */
        for (; i < argc && argv[i][0] == '-'; i += 2) {
            const char *o = argv[i] + (argv[i][1] == '-' ? 2 : 1);
            if (!strcmp(argv[i], "--")) {
                i--;
                i += 2;
                break;
            }
            if (i + 1 >= argc) {
                mp_die(MP_EXIT_USAGE, "%s needs a value", argv[i]);
            }
            if (!strcmp(o, "n") || !strcmp(o, "np")) {
                app.np = mp_parse_count(argv[i], argv[i + 1]);
            } else if (!strcmp(o, "path")) {
                app.search = argv[i + 1];
            } else if (!strcmp(o, "wdir") || !strcmp(o, "dir")) {
                if (mp.wdir != NULL && strcmp(mp.wdir, argv[i + 1]) != 0) {
                    mp_die(MP_EXIT_USAGE, "the programs of one job need the same -wdir");
                }
                mp.wdir = argv[i + 1];
            } else {
                mp_die(MP_EXIT_USAGE, "after ':' only -n, -path and -wdir are accepted, not '%s'",
                       argv[i]);
            }
        }
        if (i >= argc || strcmp(argv[i], ":") == 0) {
            mp_die(MP_EXIT_USAGE, "':' must be followed by a program");
        }
        app.argv = argv + i;
        while (i < argc && strcmp(argv[i], ":") != 0) {
            i++;
        }
        app.argc = (int)(argv + i - app.argv);
        mp.apps  = realloc(mp.apps, sizeof(*mp.apps) * (size_t)(mp.napps + 1));
        if (mp.apps == NULL) {
            mp_die(1, "out of memory");
        }
        mp.apps[mp.napps++] = app;
    }
}

/* The value PATH will have for the ranks. */
const char *mp_rank_path(void)
{
    for (int i = mp.nenvset - 1; i >= 0; i--) {
        if (strncmp(mp.envset[i], "PATH=", 5) == 0) {
            return mp.envset[i] + 5;
        }
    }
    return mp.genvnone ? "/usr/local/bin:/usr/bin:/bin" : (getenv("PATH") ? getenv("PATH") : "");
}

void mp_check_exe(const char *path, const char *name)
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
void mp_absolute(const char *path, char *out, size_t len)
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

static void mp_resolve_one(const char *name, const char *search, char *out, size_t outlen)
{

    if (name[0] == '\0') {
        mp_die(MP_EXIT_USAGE, "empty program name");
    }
    if (strchr(name, '/') != NULL) {
        mp_check_exe(name, name);
        mp_absolute(name, out, outlen);
        return;
    }
    for (const char *p = search; p != NULL && *p;) { /* -path first */
        const char *colon = strchr(p, ':');
        size_t      n     = colon ? (size_t)(colon - p) : strlen(p);
        char        cand[PATH_MAX];
        struct stat st;

        snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, name);
        if (n > 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            mp_absolute(cand, out, outlen);
            return;
        }
        p = colon ? colon + 1 : NULL;
    }
    const char *p = mp_rank_path();
    while (p != NULL) {
        const char *colon = strchr(p, ':');
        size_t      n     = colon ? (size_t)(colon - p) : strlen(p);
        char        cand[PATH_MAX];
        struct stat st;

        snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, n ? p : ".", name);
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            mp_absolute(cand, out, outlen);
            return;
        }
        p = colon ? colon + 1 : NULL;
    }
    mp_die(127, "program '%s' not found in PATH", name);
}

void mp_resolve_program(void)
{
    mp_resolve_one(mp.prog_argv[0], mp.path, mp.prog_path, sizeof(mp.prog_path));
    for (int k = 0; k < mp.napps; k++) {
        mp_resolve_one(mp.apps[k].argv[0], mp.apps[k].search ? mp.apps[k].search : mp.path,
                       mp.apps[k].path, sizeof(mp.apps[k].path));
    }
}

/* The MPMD programs after the first take the ranks after the first's. */
void mp_apps_finish(void)
{
    for (int k = 0; k < mp.napps; k++) {
        mp.apps[k].first = mp.np;
        mp.np += mp.apps[k].np;
    }
}

void mp_find_proxy(void)
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
