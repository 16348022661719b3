/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI-IO files: open/close/delete, size, hints, atomicity, sync, the file's
 * error handler and the shared file pointer.
 *
 * Collective calls agree on one result: every rank contributes its error
 * class to a MAX reduction, so all ranks return an error when any failed and
 * none is left waiting. The shared file pointer is an 8-byte counter in a
 * sidecar file next to the data file, updated under an fcntl lock: that is
 * correct between any processes that see the same file system. Rank 0
 * creates it at open, every rank opens it, and it is unlinked right away, so
 * nothing is left behind even if the job dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io_internal.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/runtime.h"
#include "util/tunables.h"
#include "api_impl.h"

#define MODE_ACCESS (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR)

/* ---- helpers shared by the module ---------------------------------------- */

int weft_io_errno_class(int err, int writing)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case ENAMETOOLONG:
    case EISDIR:
    case EINVAL:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
        return MPI_ERR_FILE_IN_USE;
    default:
        (void)writing;
        return MPI_ERR_IO;
    }
}

static weft_datatype_t *dt_of(MPI_Datatype h)
{
    return weft_datatype_from_handle(h);
}

static weft_op_t *op_max(void)
{
    return weft_op_from_handle(MPI_MAX);
}

/* All ranks of comm agree on the worst error class (0 = success). */
static int agree(weft_comm_t *comm, int cls)
{
    int in = cls, out = cls;

    if (comm->size > 1 &&
        weft_allreduce_impl(&in, &out, 1, dt_of(MPI_INT), op_max(), comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    return out;
}

/* The class to return once the ranks agreed: our own recorded reason, or a
 * note that another rank failed. */
static int agreed_error(int mine, int all, const char *path)
{
    if (all == MPI_SUCCESS || mine != MPI_SUCCESS) {
        return mine != MPI_SUCCESS ? mine : all;
    }
    return weft_error(all, "file \"%s\": the operation failed on another rank", path);
}

/* "ufs:/path" style prefixes name a file-system driver; all are POSIX here. */
static const char *strip_prefix(const char *name)
{
    const char *colon = strchr(name, ':');

    if (colon && colon - name >= 2 && colon - name < 16 && strchr(name, '/') > colon) {
        return colon + 1;
    }
    return name;
}

/* ---- handle <-> object, error handler slot --------------------------------- */

weft_file_t *weft_builtin_file[1];

weft_errhandler_t **weft_file_errhandler_slot(MPI_File file)
{
    weft_file_t *fh = weft_file_from_handle(file);

    return fh ? &fh->errhandler : NULL;
}

/* ---- hints ------------------------------------------------------------------ */

static int tristate(const char *v, int dflt)
{
    if (v == NULL) {
        return dflt;
    }
    if (!strcmp(v, "enable") || !strcmp(v, "true")) {
        return 1;
    }
    if (!strcmp(v, "disable") || !strcmp(v, "false")) {
        return 0;
    }
    if (!strcmp(v, "automatic")) {
        return 2;
    }
    return dflt;
}

static long long positive(const char *v, long long dflt)
{
    char     *end;
    long long x;

    if (v == NULL) {
        return dflt;
    }
    x = strtoll(v, &end, 10);
    return (end != v && *end == '\0' && x > 0) ? x : dflt;
}

static const char *const HINT_KEYS[] = {
    "cb_buffer_size", "cb_nodes", "romio_cb_read", "romio_cb_write", "collective_buffering",
    "romio_ds_read", "romio_ds_write", "ind_rd_buffer_size", "ind_wr_buffer_size",
    "striping_factor", "striping_unit", NULL};

static int is_hint_key(const char *k)
{
    for (int i = 0; HINT_KEYS[i]; i++) {
        if (!strcmp(k, HINT_KEYS[i])) {
            return 1;
        }
    }
    return 0;
}

/* Apply the hints in info (NULL: none) on top of the current ones; keys we
 * do not interpret are kept and returned by MPI_File_get_info. */
static int apply_hints(weft_file_t *fh, const weft_info_t *info)
{
    weft_io_hints_t *h = &fh->hints;
    const char      *cb;

    if (info == NULL) {
        return MPI_SUCCESS;
    }
    h->cb_buffer_size     = positive(weft_info_lookup(info, "cb_buffer_size"), h->cb_buffer_size);
    if (weft_info_lookup(info, "cb_nodes") != NULL) {
        h->cb_nodes      = (int)positive(weft_info_lookup(info, "cb_nodes"), h->cb_nodes);
        h->cb_nodes_read = h->cb_nodes;
    }
    cb                    = weft_info_lookup(info, "collective_buffering");
    h->cb_read            = tristate(cb, h->cb_read);
    h->cb_write           = tristate(cb, h->cb_write);
    h->cb_read            = tristate(weft_info_lookup(info, "romio_cb_read"), h->cb_read);
    h->cb_write           = tristate(weft_info_lookup(info, "romio_cb_write"), h->cb_write);
    h->ds_read            = tristate(weft_info_lookup(info, "romio_ds_read"), h->ds_read);
    h->ds_write           = tristate(weft_info_lookup(info, "romio_ds_write"), h->ds_write);
    h->ind_rd_buffer_size = positive(weft_info_lookup(info, "ind_rd_buffer_size"), h->ind_rd_buffer_size);
    h->ind_wr_buffer_size = positive(weft_info_lookup(info, "ind_wr_buffer_size"), h->ind_wr_buffer_size);
    h->striping_factor    = (int)positive(weft_info_lookup(info, "striping_factor"), h->striping_factor);
    h->striping_unit      = positive(weft_info_lookup(info, "striping_unit"), h->striping_unit);
    if (h->cb_nodes > fh->comm->size) {
        h->cb_nodes = h->cb_nodes_read = fh->comm->size;
    }
    for (const weft_info_entry_t *e = info->head; e; e = e->next) {
        if (!is_hint_key(e->key) && weft_info_put(fh->info, e->key, e->value) != MPI_SUCCESS) {
            return weft_error(MPI_ERR_NO_MEM, "cannot record info key %s", e->key);
        }
    }
    return MPI_SUCCESS;
}

/* Default aggregator count: per_node on each node of comm, or all of a
 * node's ranks when it has fewer (twophase.c picks them node by node). */
static int default_aggregators(const weft_comm_t *comm, int per_node)
{
    int n = 0;

    if (per_node < 1) {
        per_node = 1;
    }
    if (weft_runtime.pmi.node_of_rank == NULL) {
        return comm->size < per_node ? comm->size : per_node;
    }
    for (int i = 0; i < comm->size; i++) {
        int node = weft_runtime.pmi.node_of_rank[comm->peer_world[i]], before = 0;
        for (int j = 0; j < i; j++) {
            before += weft_runtime.pmi.node_of_rank[comm->peer_world[j]] == node;
        }
        n += before < per_node; /* the first per_node ranks of each node count */
    }
    return n;
}

static void default_hints(weft_file_t *fh)
{
    weft_io_hints_t *h = &fh->hints;

    h->cb_buffer_size     = (MPI_Count)weft_tunables.IO_CB_BUFFER_SIZE;
    h->cb_nodes           = weft_tunables.IO_CB_NODES > 0 ? (int)weft_tunables.IO_CB_NODES
                                                          : default_aggregators(fh->comm, 1);
    h->cb_nodes_read      = weft_tunables.IO_CB_NODES > 0
                                ? h->cb_nodes
                                : default_aggregators(fh->comm, (int)weft_tunables.IO_CB_READ_PER_NODE);
    h->cb_read            = 2;
    h->cb_write           = 2;
    h->ds_read            = 2;
    h->ds_write           = 2;
    h->ind_rd_buffer_size = (MPI_Count)weft_tunables.IO_DS_BUFFER_SIZE;
    h->ind_wr_buffer_size = (MPI_Count)weft_tunables.IO_DS_BUFFER_SIZE;
    if (h->cb_buffer_size <= 0) {
        h->cb_buffer_size = 2 << 20;
    }
    if (h->cb_nodes > fh->comm->size) {
        h->cb_nodes = fh->comm->size;
    }
    if (h->cb_nodes_read > fh->comm->size) {
        h->cb_nodes_read = fh->comm->size;
    }
}

static const char *tristate_name(int v)
{
    return v == 0 ? "disable" : v == 1 ? "enable" : "automatic";
}

int weft_file_get_info_impl(weft_file_t *fh, MPI_Info *info_used)
{
    weft_info_t     *out = weft_info_clone(fh->info);
    weft_io_hints_t *h   = &fh->hints;
    char             v[32];
    int              rc  = MPI_SUCCESS;

    if (out == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate an info object");
    }
#define PUT(_k, ...)                                                                                  \
    do {                                                                                              \
        snprintf(v, sizeof(v), __VA_ARGS__);                                                          \
        if (rc == MPI_SUCCESS) {                                                                      \
            rc = weft_info_put(out, _k, v);                                                           \
        }                                                                                             \
    } while (0)
    PUT("cb_buffer_size", "%lld", (long long)h->cb_buffer_size);
    PUT("cb_nodes", "%d", h->cb_nodes);
    PUT("romio_cb_read", "%s", tristate_name(h->cb_read));
    PUT("romio_cb_write", "%s", tristate_name(h->cb_write));
    PUT("romio_ds_read", "%s", tristate_name(h->ds_read));
    PUT("romio_ds_write", "%s", tristate_name(h->ds_write));
    PUT("ind_rd_buffer_size", "%lld", (long long)h->ind_rd_buffer_size);
    PUT("ind_wr_buffer_size", "%lld", (long long)h->ind_wr_buffer_size);
    if (h->striping_factor > 0) {
        PUT("striping_factor", "%d", h->striping_factor);
    }
    if (h->striping_unit > 0) {
        PUT("striping_unit", "%lld", (long long)h->striping_unit);
    }
#undef PUT
    if (rc != MPI_SUCCESS) {
        weft_info_release(out);
        return weft_error(MPI_ERR_NO_MEM, "cannot fill the info object");
    }
    *info_used = (MPI_Info)weft_object_handle(out);
    return MPI_SUCCESS;
}

int weft_file_set_info_impl(weft_file_t *fh, weft_info_t *info)
{
    int rc;

    weft_io_nbc_drain(fh); /* collective: the file's non-blocking collectives (which read the hints) come first */
    rc = apply_hints(fh, info);

    return agreed_error(rc, agree(fh->comm, rc), fh->path);
}

/* ---- shared file pointer ------------------------------------------------- */

static int sidecar_lock(int fd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};

    while (fcntl(fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

static int sidecar_rw(int fd, MPI_Offset *v, int writing)
{
    ssize_t n = writing ? pwrite(fd, v, sizeof(*v), 0) : pread(fd, v, sizeof(*v), 0);

    if (!writing && n == 0) {
        *v = 0;
        return 0;
    }
    return n == (ssize_t)sizeof(*v) ? 0 : -1;
}

int weft_io_shared_fetch_add(weft_file_t *fh, MPI_Offset add, MPI_Offset *old)
{
    MPI_Offset v;
    int        err = 0;

    if (sidecar_lock(fh->shared_fd, F_WRLCK) != 0) {
        return weft_error(weft_io_errno_class(errno, 1), "file \"%s\": cannot lock the shared file pointer: %s",
                          fh->path, strerror(errno));
    }
    if (sidecar_rw(fh->shared_fd, &v, 0) != 0) {
        err = errno ? errno : EIO;
    } else {
        *old = v;
        v += add;
        if (add != 0 && sidecar_rw(fh->shared_fd, &v, 1) != 0) {
            err = errno ? errno : EIO;
        }
    }
    sidecar_lock(fh->shared_fd, F_UNLCK);
    if (err) {
        return weft_error(weft_io_errno_class(err, 1), "file \"%s\": shared file pointer: %s", fh->path,
                          strerror(err));
    }
    return MPI_SUCCESS;
}

int weft_io_shared_set(weft_file_t *fh, MPI_Offset value)
{
    int err = 0;

    if (sidecar_lock(fh->shared_fd, F_WRLCK) != 0) {
        return weft_error(weft_io_errno_class(errno, 1), "file \"%s\": cannot lock the shared file pointer: %s",
                          fh->path, strerror(errno));
    }
    if (sidecar_rw(fh->shared_fd, &value, 1) != 0) {
        err = errno ? errno : EIO;
    }
    sidecar_lock(fh->shared_fd, F_UNLCK);
    if (err) {
        return weft_error(weft_io_errno_class(err, 1), "file \"%s\": shared file pointer: %s", fh->path,
                          strerror(err));
    }
    return MPI_SUCCESS;
}

/* Rank 0 makes the sidecar (next to the file, else in TMPDIR) and tells the
 * others its name; returns the local error class. */
static int shared_pointer_open(weft_file_t *fh, MPI_Offset initial)
{
    static unsigned seq;
    char            name[4096 + 64];
    int             len = 0, rc = MPI_SUCCESS, all;
    weft_comm_t    *comm = fh->comm;

    name[0] = '\0';
    if (comm->rank == 0) {
        snprintf(name, sizeof(name), "%s.weft-shfp-%d-%u", fh->path, (int)getpid(), seq++);
        fh->shared_fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fh->shared_fd < 0) {
            const char *tmp = getenv("TMPDIR");
            snprintf(name, sizeof(name), "%s/weft-shfp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            fh->shared_fd = mkstemp(name);
        }
        if (fh->shared_fd < 0 || sidecar_rw(fh->shared_fd, &initial, 1) != 0) {
            rc = weft_error(weft_io_errno_class(errno, 1),
                            "file \"%s\": cannot create the shared file pointer: %s", fh->path,
                            strerror(errno));
            name[0] = '\0';
        }
        len = (int)strlen(name) + 1;
    }
    if (comm->size > 1) {
        if (weft_bcast_impl(&len, 1, dt_of(MPI_INT), 0, comm) != MPI_SUCCESS ||
            weft_bcast_impl(name, len, dt_of(MPI_CHAR), 0, comm) != MPI_SUCCESS) {
            return MPI_ERR_OTHER;
        }
        if (comm->rank != 0 && name[0] != '\0') {
            fh->shared_fd = open(name, O_RDWR);
            if (fh->shared_fd < 0) {
                rc = weft_error(weft_io_errno_class(errno, 1),
                                "file \"%s\": cannot open the shared file pointer %s: %s", fh->path,
                                name, strerror(errno));
            }
        }
    }
    all = agree(comm, rc);
    if (comm->rank == 0 && name[0] != '\0') {
        unlink(name); /* every rank has it open (or we fail anyway) */
    }
    return agreed_error(rc, all, fh->path);
}

/* ---- open / close / delete ------------------------------------------------- */

static int check_amode(int amode, const char *path)
{
    int access = amode & MODE_ACCESS;

    if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR) {
        return weft_error(MPI_ERR_AMODE, "argument amode: exactly one of MPI_MODE_RDONLY, "
                                         "MPI_MODE_WRONLY and MPI_MODE_RDWR is required (file \"%s\")",
                          path);
    }
    if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL))) {
        return weft_error(MPI_ERR_AMODE, "argument amode: MPI_MODE_RDONLY with MPI_MODE_CREATE or "
                                         "MPI_MODE_EXCL (file \"%s\")",
                          path);
    }
    if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL)) {
        return weft_error(MPI_ERR_AMODE, "argument amode: MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL (file \"%s\")",
                          path);
    }
    if (amode & ~(MODE_ACCESS | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |
                  MPI_MODE_APPEND | MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL)) {
        return weft_error(MPI_ERR_AMODE, "argument amode: unknown bits 0x%x (file \"%s\")", amode, path);
    }
    return MPI_SUCCESS;
}

/* open(2) the file; WRONLY files are opened read-write when allowed, since
 * two-phase writes and data sieving read before they rewrite a range. */
static int posix_open(weft_file_t *fh, int first)
{
    int acc = fh->amode & MODE_ACCESS;
    int flags  = acc == MPI_MODE_RDONLY ? O_RDONLY : O_RDWR;

    if (first && (fh->amode & MPI_MODE_CREATE)) {
        flags |= O_CREAT;
    }
    if (first && (fh->amode & MPI_MODE_EXCL) && (flags & O_CREAT)) {
        flags |= O_EXCL;
    } else if (first && (fh->amode & MPI_MODE_EXCL) && access(fh->path, F_OK) == 0) {
        /* EXCL without CREATE: the file must not exist either */
        return weft_error(MPI_ERR_FILE_EXISTS, "file \"%s\": exists (MPI_MODE_EXCL)", fh->path);
    }
    fh->fd = open(fh->path, flags | O_CLOEXEC, 0644);
    if (fh->fd < 0 && errno == EACCES && acc == MPI_MODE_WRONLY) {
        fh->fd = open(fh->path, (flags & ~O_RDWR) | O_WRONLY | O_CLOEXEC, 0644);
    }
    if (fh->fd >= 0) {
        struct stat st;
        if (fstat(fh->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            close(fh->fd);
            fh->fd = -1;
            errno  = EISDIR;
        }
    }
    fh->can_read = fh->fd >= 0 && (fcntl(fh->fd, F_GETFL) & O_ACCMODE) != O_WRONLY;
    if (fh->fd < 0) {
        int err = errno, cls = weft_io_errno_class(err, acc != MPI_MODE_RDONLY);
        /* A readable file that refuses writing is a read-only file. */
        if (err == EACCES && acc != MPI_MODE_RDONLY && access(fh->path, R_OK) == 0) {
            cls = MPI_ERR_READ_ONLY;
        }
        return weft_error(cls, "file \"%s\": %s", fh->path, strerror(err));
    }
    return MPI_SUCCESS;
}

#define SCRATCH_HUGE ((size_t)2 << 20)

void *weft_io_scratch(weft_file_t *fh, int i, size_t len)
{
    if (fh->scratch_len[i] < len) {
        void *p = NULL;
        free(fh->scratch[i]);
        if (len >= SCRATCH_HUGE) {
            /* Transparent huge pages where the system gives them on request
             * (THP "madvise"): the first touch of a 16 MiB buffer takes 8
             * faults instead of 4096, and every file's first collectives
             * touch fresh buffers. */
            len = len > SIZE_MAX - SCRATCH_HUGE ? SIZE_MAX : (len + SCRATCH_HUGE - 1) & ~(SCRATCH_HUGE - 1);
            if (len == SIZE_MAX || posix_memalign(&p, SCRATCH_HUGE, len) != 0) {
                p = NULL;
            }
#ifdef MADV_HUGEPAGE
            if (p != NULL) {
                (void)madvise(p, len, MADV_HUGEPAGE);
            }
#endif
        } else {
            p = malloc(len);
        }
        fh->scratch[i]     = p;
        fh->scratch_len[i] = p ? len : 0;
    }
    return fh->scratch[i];
}

static void file_free(weft_file_t *fh)
{
    free(fh->scratch[0]);
    free(fh->scratch[1]);
    free(fh->scratch[2]);
    if (fh->fd >= 0) {
        close(fh->fd);
    }
    if (fh->shared_fd >= 0) {
        close(fh->shared_fd);
    }
    weft_io_view_free(&fh->view);
    if (fh->info) {
        weft_info_release(fh->info);
    }
    if (fh->errhandler) {
        weft_errhandler_release(fh->errhandler);
    }
    if (fh->comm) {
        MPI_Comm h = (MPI_Comm)weft_object_handle(fh->comm);
        weft_comm_free_impl(&h);
    }
    if (fh->nbc_comm) {
        MPI_Comm h = (MPI_Comm)weft_object_handle(fh->nbc_comm);
        weft_comm_free_impl(&h);
    }
    pthread_mutex_destroy(&fh->lock);
    pthread_mutex_destroy(&fh->xfer_lock);
    free(fh->path);
    fh->hdr.magic = WEFT_MAGIC_FREED;
    free(fh);
}

static MPI_Offset file_size(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 ? (MPI_Offset)st.st_size : -1;
}

int weft_file_open_impl(weft_comm_t *comm, const char *filename, int amode, weft_info_t *info, MPI_File *fh_out)
{
    weft_file_t *fh;
    MPI_Comm     dup;
    int          rc, all, agreed[3];

    /* Local checks first, then one agreement so no rank hangs on a bad one. */
    rc = filename == NULL ? weft_error(MPI_ERR_BAD_FILE, "argument filename: NULL") : check_amode(amode, filename);
    agreed[0] = rc;
    agreed[1] = amode;
    agreed[2] = -amode;
    if (comm->size > 1) {
        int in[3] = {agreed[0], agreed[1], agreed[2]};
        if (weft_allreduce_impl(in, agreed, 3, dt_of(MPI_INT), op_max(), comm) != MPI_SUCCESS) {
            return MPI_ERR_OTHER;
        }
    }
    if (agreed[0] != MPI_SUCCESS) {
        return agreed_error(rc, agreed[0], filename ? filename : "(null)");
    }
    if (agreed[1] != -agreed[2]) {
        return weft_error(MPI_ERR_AMODE, "argument amode: ranks passed different modes for file \"%s\"",
                          filename);
    }
    fh = calloc(1, sizeof(*fh));
    if (fh == NULL || (fh->path = strdup(strip_prefix(filename))) == NULL) {
        free(fh);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a file object");
    }
    weft_object_init(&fh->hdr, WEFT_KIND_FILE, 0);
    fh->fd        = -1;
    fh->shared_fd = -1;
    fh->amode     = amode;
    pthread_mutex_init(&fh->lock, NULL);
    pthread_mutex_init(&fh->xfer_lock, NULL);
    fh->errhandler = weft_file_errhandler(MPI_FILE_NULL);
    weft_errhandler_retain(fh->errhandler);
    rc = weft_comm_dup_impl(comm, &dup);
    if (rc != MPI_SUCCESS) {
        file_free(fh);
        return rc;
    }
    fh->comm = weft_comm_from_handle(dup);
    rc       = weft_comm_dup_impl(comm, &dup);
    if (rc != MPI_SUCCESS) {
        file_free(fh);
        return rc;
    }
    fh->nbc_comm = weft_comm_from_handle(dup);
    /* Its collectives start from the progress engine: nothing may wait
     * there. Small exchanges only: point-to-point algorithms, no shared
     * region to make at every open (open+close 96 -> 67 us at np 2). */
    rc = weft_coll_comm_prepare(fh->nbc_comm, 0);
    if (rc != MPI_SUCCESS) {
        file_free(fh);
        return rc;
    }
    fh->info     = weft_info_new();
    default_hints(fh);
    rc = fh->info ? apply_hints(fh, info) : weft_error(MPI_ERR_NO_MEM, "cannot allocate an info object");
    if (rc == MPI_SUCCESS) {
        rc = weft_io_view_set(fh, 0, dt_of(MPI_BYTE), dt_of(MPI_BYTE), "native");
    }
    /* Rank 0 creates; the others open what it made. */
    if (fh->comm->rank == 0 && rc == MPI_SUCCESS) {
        rc = posix_open(fh, 1);
    }
    if (fh->comm->size > 1) {
        all = agree(fh->comm, fh->comm->rank == 0 ? rc : MPI_SUCCESS);
        if (all == MPI_SUCCESS && fh->comm->rank != 0 && rc == MPI_SUCCESS) {
            rc = posix_open(fh, 0);
        } else if (all != MPI_SUCCESS && fh->comm->rank != 0) {
            rc = agreed_error(rc, all, fh->path);
        }
        all = agree(fh->comm, rc);
    } else {
        all = rc;
    }
    if (all == MPI_SUCCESS) {
        MPI_Offset size = (amode & MPI_MODE_APPEND) ? file_size(fh->fd) : 0;
        fh->ind_pos     = size > 0 ? size : 0;
        all             = rc = shared_pointer_open(fh, fh->ind_pos);
    }
    if (all != MPI_SUCCESS) {
        rc = agreed_error(rc, all, fh->path);
        file_free(fh);
        return rc;
    }
    *fh_out = (MPI_File)fh;
    return MPI_SUCCESS;
}

int weft_file_close_impl(MPI_File *fh_p)
{
    weft_file_t *fh = fh_p ? weft_file_from_handle(*fh_p) : NULL;
    int          rc = MPI_SUCCESS, all, del;
    char        *path;

    if (fh == NULL) {
        return weft_error(MPI_ERR_FILE, "argument fh: invalid file%s",
                          fh_p && *fh_p == MPI_FILE_NULL ? " (null handle)" : "");
    }
    /* non-blocking transfers still queued (not waited for: erroneous, but no crash or hang) */
    weft_io_nbc_drain(fh);
    weft_io_drain(fh);
    if (fh->fd >= 0 && close(fh->fd) != 0) {
        rc = weft_error(MPI_ERR_IO, "file \"%s\": close: %s", fh->path, strerror(errno));
    }
    fh->fd = -1;
    all    = agree(fh->comm, rc); /* also: everyone closed before the delete */
    del    = (fh->amode & MPI_MODE_DELETE_ON_CLOSE) && fh->comm->rank == 0;
    path   = del ? strdup(fh->path) : NULL;
    file_free(fh);
    *fh_p = MPI_FILE_NULL;
    if (path) {
        unlink(path);
        free(path);
    }
    return all == MPI_SUCCESS ? MPI_SUCCESS : (rc != MPI_SUCCESS ? rc : all);
}

int weft_file_delete_impl(const char *filename, weft_info_t *info)
{
    (void)info;
    if (filename == NULL) {
        return weft_error(MPI_ERR_BAD_FILE, "argument filename: NULL");
    }
    if (unlink(strip_prefix(filename)) != 0) {
        return weft_error(weft_io_errno_class(errno, 1), "file \"%s\": %s", filename, strerror(errno));
    }
    return MPI_SUCCESS;
}

/* ---- size, sync, attributes --------------------------------------------------- */

int weft_io_check_writable(weft_file_t *fh)
{
    if ((fh->amode & MODE_ACCESS) == MPI_MODE_RDONLY) {
        return weft_error(MPI_ERR_READ_ONLY, "file \"%s\" was opened MPI_MODE_RDONLY", fh->path);
    }
    return MPI_SUCCESS;
}

/* Same value on every rank (collective size calls). */
static int check_same(weft_file_t *fh, MPI_Offset v, const char *what)
{
    MPI_Offset in[2] = {v, -v}, out[2] = {v, -v};

    weft_io_nbc_drain(fh); /* collective: the file's non-blocking collectives come first */
    if (fh->comm->size > 1 &&
        weft_allreduce_impl(in, out, 2, dt_of(MPI_INT64_T), op_max(), fh->comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    if (out[0] != -out[1]) {
        return weft_error(MPI_ERR_NOT_SAME, "argument %s: ranks passed different values (file \"%s\")", what,
                          fh->path);
    }
    return MPI_SUCCESS;
}

static int resize(weft_file_t *fh, MPI_Offset size, int grow_only)
{
    int rc = size < 0 ? weft_error(MPI_ERR_ARG, "argument size: negative (%lld)", (long long)size)
                      : weft_io_check_writable(fh);
    int all;

    weft_io_nbc_drain(fh); /* collective: the file's non-blocking collectives come first */
    all = agree(fh->comm, rc);
    if (all != MPI_SUCCESS) {
        return agreed_error(rc, all, fh->path);
    }
    if ((rc = check_same(fh, size, "size")) != MPI_SUCCESS) {
        return rc;
    }
    if (fh->comm->rank == 0) {
        if (grow_only) {
            MPI_Offset cur = file_size(fh->fd);
            int        err = cur < size ? posix_fallocate(fh->fd, 0, size) : 0;
            if (err == EOPNOTSUPP || err == EINVAL) {
                err = ftruncate(fh->fd, size) == 0 ? 0 : errno;
            }
            if (err) {
                rc = weft_error(weft_io_errno_class(err, 1), "file \"%s\": preallocate %lld bytes: %s",
                                fh->path, (long long)size, strerror(err));
            }
        } else if (ftruncate(fh->fd, size) != 0) {
            rc = weft_error(weft_io_errno_class(errno, 1), "file \"%s\": set size %lld: %s", fh->path,
                            (long long)size, strerror(errno));
        }
    }
    return agreed_error(rc, agree(fh->comm, rc), fh->path);
}

int weft_file_set_size_impl(weft_file_t *fh, MPI_Offset size)
{
    return resize(fh, size, 0);
}

int weft_file_preallocate_impl(weft_file_t *fh, MPI_Offset size)
{
    return resize(fh, size, 1);
}

int weft_file_get_size_impl(weft_file_t *fh, MPI_Offset *size)
{
    MPI_Offset s = file_size(fh->fd);

    if (size == NULL) {
        return weft_error(MPI_ERR_ARG, "argument size: NULL pointer for an output argument");
    }
    if (s < 0) {
        return weft_error(MPI_ERR_IO, "file \"%s\": fstat: %s", fh->path, strerror(errno));
    }
    *size = s;
    return MPI_SUCCESS;
}

int weft_file_sync_impl(weft_file_t *fh)
{
    int rc = MPI_SUCCESS;

    weft_io_nbc_drain(fh); /* collective: the file's non-blocking collectives come first */
    if ((fh->amode & MODE_ACCESS) != MPI_MODE_RDONLY && fsync(fh->fd) != 0 && errno != EINVAL) {
        rc = weft_error(weft_io_errno_class(errno, 1), "file \"%s\": fsync: %s", fh->path, strerror(errno));
    }
    return agreed_error(rc, agree(fh->comm, rc), fh->path);
}

int weft_file_get_group_impl(weft_file_t *fh, MPI_Group *group)
{
    return weft_comm_group_impl(fh->comm, group);
}

int weft_file_get_amode_impl(weft_file_t *fh, int *amode)
{
    *amode = fh->amode;
    return MPI_SUCCESS;
}

int weft_file_set_atomicity_impl(weft_file_t *fh, int flag)
{
    int rc = check_same(fh, flag != 0, "flag");

    if (rc == MPI_SUCCESS) {
        fh->atomic = flag != 0;
    }
    return rc;
}

int weft_file_get_atomicity_impl(weft_file_t *fh, int *flag)
{
    *flag = fh->atomic;
    return MPI_SUCCESS;
}

/* ---- views --------------------------------------------------------------------- */

int weft_file_set_view_impl(weft_file_t *fh, MPI_Offset disp, weft_datatype_t *etype,
                            weft_datatype_t *filetype, const char *datarep, weft_info_t *info)
{
    int        rc = MPI_SUCCESS, all;
    MPI_Offset shared;

    weft_io_nbc_drain(fh); /* collective: the file's non-blocking collectives (which use the view) come first */
    if (disp == MPI_DISPLACEMENT_CURRENT && !(fh->amode & MPI_MODE_SEQUENTIAL)) {
        rc = weft_error(MPI_ERR_ARG, "argument disp: MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL");
    }
    if (rc == MPI_SUCCESS && disp == MPI_DISPLACEMENT_CURRENT) {
        rc = weft_io_shared_fetch_add(fh, 0, &shared);
        disp = weft_io_view_byte(&fh->view, shared * fh->view.esize);
    }
    if (rc == MPI_SUCCESS) {
        rc = weft_io_view_set(fh, disp, etype, filetype, datarep);
    }
    if (rc == MPI_SUCCESS) {
        rc = apply_hints(fh, info);
    }
    all = agree(fh->comm, rc);
    if (all == MPI_SUCCESS) {
        /* New view: both file pointers restart at its beginning. */
        fh->ind_pos = 0;
        if (fh->comm->rank == 0) {
            rc = weft_io_shared_set(fh, 0);
        }
        all = agree(fh->comm, rc);
    }
    return agreed_error(rc, all, fh->path);
}

int weft_file_get_view_impl(weft_file_t *fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                            char *datarep)
{
    *disp = fh->view.disp;
    /* Derived types come back as new references the caller frees. */
    weft_datatype_retain(fh->view.etype);
    weft_datatype_retain(fh->view.filetype);
    *etype    = (MPI_Datatype)weft_object_handle(fh->view.etype);
    *filetype = (MPI_Datatype)weft_object_handle(fh->view.filetype);
    strcpy(datarep, fh->view.datarep);
    return MPI_SUCCESS;
}

int weft_file_get_type_extent_c_impl(weft_file_t *fh, weft_datatype_t *datatype, MPI_Count *extent)
{
    MPI_Offset b = weft_io_file_bytes(&fh->view, datatype, 1);

    if (b < 0) {
        return weft_error(MPI_ERR_UNSUPPORTED_DATAREP, "datarep \"%s\" cannot size this datatype",
                          fh->view.datarep);
    }
    *extent = fh->view.drep == WEFT_DREP_NATIVE ? datatype->extent : b;
    return MPI_SUCCESS;
}

int weft_file_get_type_extent_impl(weft_file_t *fh, weft_datatype_t *datatype, MPI_Aint *extent)
{
    MPI_Count e = 0;
    int       rc = weft_file_get_type_extent_c_impl(fh, datatype, &e);

    if (rc == MPI_SUCCESS) {
        *extent = (MPI_Aint)e;
    }
    return rc;
}
