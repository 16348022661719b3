/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 attribute bugs:
 *  - bug 5: a delete callback that deletes another attribute of the same
 *    communicator (on MPI_Comm_free and at MPI_Finalize on MPI_COMM_SELF)
 *    must not crash; every attribute is deleted exactly once.
 *  - bug 9: at MPI_Finalize the attributes of MPI_COMM_SELF are deleted in
 *    reverse order of setting (not of key creation); checked after
 *    MPI_Finalize returns from the log the callbacks wrote.
 *  - a freed keyval stays usable by the attributes still carrying it:
 *    MPI_Comm_get_attr, MPI_Comm_delete_attr and MPI_Attr_delete work (and
 *    run the delete callback); new values are refused (MPI_ERR_KEYVAL).
 *  - a failing copy callback makes MPI_Comm_dup return its error and set the
 *    new handle to MPI_COMM_NULL (nothing leaks: the attributes copied before
 *    it are deleted again).
 */
#include "mpitest.h"

static char log_buf[64];
static int  log_len;

static void note(char c)
{
    if (log_len < (int)sizeof(log_buf) - 1) {
        log_buf[log_len++] = c;
        log_buf[log_len]   = '\0';
    }
}

static int keys[8];

/* Logs its letter (extra); the attribute of key 'x' also deletes the
 * attribute of the key whose index is its value. */
static int del_cb(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval;
    note(*(char *)extra);
    if (*(char *)extra == 'x') {
        int rc = MPI_Comm_delete_attr(comm, keys[(int)(intptr_t)val]);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

static int copies;
static int copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    copies++;
    if (*(char *)extra == 'f') {
        return MPI_ERR_OTHER; /* the failing copy */
    }
    *(void **)out = in;
    *flag         = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    static char letters[] = "abcxfs";
    int         rank, flag, failed;
    void       *v;
    MPI_Comm    c1, c2;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 6; i++) {
        CHECK_OK(MPI_Comm_create_keyval(copy_cb, del_cb, &keys[i], &letters[i]));
    }

    /* bug 5 on MPI_Comm_free: x (set last, deleted first) deletes a */
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_attr(c1, keys[0], NULL);
    MPI_Comm_set_attr(c1, keys[1], NULL);
    MPI_Comm_set_attr(c1, keys[2], NULL);
    MPI_Comm_set_attr(c1, keys[3], (void *)(intptr_t)0);
    log_len = 0;
    CHECK_OK(MPI_Comm_free(&c1));
    CHECK(strcmp(log_buf, "xacb") == 0, "Comm_free delete log '%s', want 'xacb'", log_buf);
    /* x deletes the attribute just before it in the list (c) */
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_attr(c1, keys[2], NULL);
    MPI_Comm_set_attr(c1, keys[3], (void *)(intptr_t)2);
    MPI_Comm_set_attr(c1, keys[1], NULL);
    log_len = 0;
    CHECK_OK(MPI_Comm_free(&c1));
    CHECK(strcmp(log_buf, "bxc") == 0, "Comm_free delete log '%s', want 'bxc'", log_buf);

    /* freed keyval: usable by the attributes carrying it */
    {
        int kb = keys[1];
        MPI_Comm_dup(MPI_COMM_WORLD, &c1);
        MPI_Comm_set_attr(c1, kb, (void *)42);
        CHECK_OK(MPI_Comm_free_keyval(&keys[1]));
        CHECK_OK(MPI_Comm_get_attr(c1, kb, &v, &flag));
        CHECK(flag && v == (void *)42, "get on a freed keyval: flag %d value %p", flag, v);
        CHECK_CLASS(MPI_Comm_set_attr(c1, kb, NULL), MPI_ERR_KEYVAL);
        log_len = 0;
        CHECK_OK(MPI_Comm_delete_attr(c1, kb));
        CHECK(strcmp(log_buf, "b") == 0, "delete on a freed keyval ran '%s'", log_buf);
        /* now nothing carries it: it is gone for good */
        CHECK_CLASS(MPI_Comm_get_attr(c1, kb, &v, &flag), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Comm_delete_attr(c1, kb), MPI_ERR_KEYVAL);
        /* the MPI-1 form too */
        int kv, kv_saved;
        MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kv, NULL);
        kv_saved = kv;
        MPI_Attr_put(c1, kv, (void *)7);
        CHECK_OK(MPI_Keyval_free(&kv));
        CHECK_OK(MPI_Attr_delete(c1, kv_saved));
        MPI_Comm_free(&c1);
    }

    /* a failing copy callback: error returned, new handle MPI_COMM_NULL,
     * the attribute copied before it is deleted again */
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_attr(c1, keys[2], NULL);
    MPI_Comm_set_attr(c1, keys[4], NULL);
    c2     = MPI_COMM_WORLD;
    copies = 0;
    log_len = 0;
    failed = MPI_Comm_dup(c1, &c2);
    CHECK(failed != MPI_SUCCESS, "Comm_dup with a failing copy callback succeeded");
    CHECK(c2 == MPI_COMM_NULL, "Comm_dup with a failing copy callback left the handle set");
    CHECK(copies == 2 && strcmp(log_buf, "c") == 0, "copies %d, deletes '%s'", copies, log_buf);
    MPI_Comm_delete_attr(c1, keys[4]);
    MPI_Comm_free(&c1);

    /* bugs 5 and 9 at MPI_Finalize on MPI_COMM_SELF: keys created in order
     * a, c, x, s (b again last); set in order s, c, a, x. Reverse order of
     * setting: x (which deletes c), a, s. */
    CHECK_OK(MPI_Comm_create_keyval(copy_cb, del_cb, &keys[1], &letters[1]));
    MPI_Comm_set_attr(MPI_COMM_SELF, keys[5], NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keys[2], NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keys[0], NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keys[3], (void *)(intptr_t)2);
    log_len = 0;
    {
        int errs = mpitest_errors;
        MPI_Finalize();
        if (strcmp(log_buf, "xcas") != 0) {
            fprintf(stderr, "FAIL rank %d: MPI_COMM_SELF delete order at MPI_Finalize '%s', "
                            "want 'xcas'\n", rank, log_buf);
            errs++;
        }
        if (errs == 0 && rank == 0) {
            printf("No Errors\n");
        }
        fflush(stdout);
        return errs ? 1 : 0;
    }
}
