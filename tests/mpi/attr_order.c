/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Attribute caching: copy callbacks run on MPI_Comm_dup in the order the
 * attributes were set, delete callbacks on MPI_Comm_free in reverse order of
 * setting (Weft's documented order, src/core/attr.h); MPI_COMM_DUP_FN /
 * MPI_COMM_NULL_COPY_FN; replacing and deleting attributes; a failing
 * delete callback makes MPI_Comm_free fail; keyvals freed while in use;
 * wrong-kind keyvals; the predefined attributes; datatype attributes;
 * the deprecated MPI-1 forms.
 */
#include "mpitest.h"

static char log_buf[256];
static int  log_len;

static void note(char c)
{
    if (log_len < (int)sizeof(log_buf) - 1) {
        log_buf[log_len++] = c;
        log_buf[log_len]   = '\0';
    }
}

static int copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    note(*(char *)extra);
    *(void **)out = (char *)in + 1; /* copied value = old value + 1 */
    *flag         = 1;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    note((char)(*(char *)extra - 'a' + 'A'));
    return MPI_SUCCESS;
}

static int fail_delete = 0;
static int failing_delete_cb(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int type_deletes;
static int type_delete_cb(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)t;
    (void)keyval;
    (void)val;
    (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    static char names[] = "abc";
    int         k[3], flag, kdup, knull, kfail;
    void       *v;
    MPI_Comm    c1, c2;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* keys a, b, c created in that order; attributes set in order c, a, b */
    for (int i = 0; i < 3; i++) {
        CHECK_OK(MPI_Comm_create_keyval(copy_cb, delete_cb, &k[i], &names[i]));
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_attr(c1, k[2], (void *)300);
    MPI_Comm_set_attr(c1, k[0], (void *)100);
    MPI_Comm_set_attr(c1, k[1], (void *)200);
    log_len = 0;
    CHECK_OK(MPI_Comm_dup(c1, &c2));
    CHECK(strcmp(log_buf, "cab") == 0, "copy order '%s', want 'cab'", log_buf);
    MPI_Comm_get_attr(c2, k[1], &v, &flag);
    CHECK(flag && v == (void *)201, "copied value %p", v);
    log_len = 0;
    MPI_Comm_free(&c2);
    CHECK(strcmp(log_buf, "BAC") == 0, "delete order '%s', want 'BAC'", log_buf);

    /* replacing a value calls delete on the old one (and keeps its place);
     * delete_attr calls delete */
    log_len = 0;
    MPI_Comm_set_attr(c1, k[0], (void *)101);
    CHECK(strcmp(log_buf, "A") == 0, "replace: '%s'", log_buf);
    MPI_Comm_get_attr(c1, k[0], &v, &flag);
    CHECK(flag && v == (void *)101, "replaced value %p", v);
    log_len = 0;
    MPI_Comm_delete_attr(c1, k[0]);
    CHECK(strcmp(log_buf, "A") == 0, "delete_attr: '%s'", log_buf);
    MPI_Comm_get_attr(c1, k[0], &v, &flag);
    CHECK(!flag, "deleted attribute still there");

    /* freeing a keyval in use: the attribute keeps its callbacks */
    {
        int kb = k[1];
        CHECK_OK(MPI_Comm_free_keyval(&k[1]));
        CHECK(k[1] == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
        CHECK_CLASS(MPI_Comm_set_attr(c1, kb, NULL), MPI_ERR_KEYVAL);
        log_len = 0;
        MPI_Comm_free(&c1);
        CHECK(strcmp(log_buf, "BC") == 0, "delete after keyval free: '%s'", log_buf);
    }

    /* DUP_FN copies the pointer, NULL_COPY_FN does not copy */
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, (void *)7);
    MPI_Comm_set_attr(MPI_COMM_WORLD, knull, (void *)8);
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_get_attr(c1, kdup, &v, &flag);
    CHECK(flag && v == (void *)7, "MPI_COMM_DUP_FN: flag %d value %p", flag, v);
    MPI_Comm_get_attr(c1, knull, &v, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied the attribute");
    MPI_Comm_free(&c1);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kdup);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, knull);

    /* a failing delete callback makes Comm_free fail (and keeps the comm) */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete_cb, &kfail, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_attr(c1, kfail, (void *)1);
    fail_delete = 1;
    CHECK_CLASS(MPI_Comm_free(&c1), MPI_ERR_OTHER);
    CHECK(c1 != MPI_COMM_NULL, "failed Comm_free reset the handle");
    fail_delete = 0;
    CHECK_OK(MPI_Comm_free(&c1));
    MPI_Comm_free_keyval(&kfail);

    /* predefined attributes */
    {
        int *p;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag);
        CHECK(flag && *p >= 32767, "MPI_TAG_UB %d", flag ? *p : -1);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag);
        CHECK(flag && *p == MPI_PROC_NULL, "MPI_HOST");
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag);
        CHECK(flag && (*p == 0 || *p == 1), "MPI_WTIME_IS_GLOBAL");
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag);
        CHECK(flag, "MPI_IO missing");
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag);
        CHECK(!flag || *p == 0, "MPI_APPNUM %d", *p);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag);
        {
            int size;
            MPI_Comm_size(MPI_COMM_WORLD, &size);
            CHECK(!flag || *p >= size, "MPI_UNIVERSE_SIZE %d", *p);
        }
        int cls;
        MPI_Add_error_class(&cls);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag);
        CHECK(flag && *p >= cls, "MPI_LASTUSEDCODE %d < new class %d", flag ? *p : -1, cls);
        CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Comm_free_keyval(&(int){MPI_TAG_UB}), MPI_ERR_KEYVAL);
    }

    /* datatype attributes; comm keyvals are rejected on types */
    {
        int          kt;
        MPI_Datatype t;
        CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete_cb, &kt, NULL));
        MPI_Type_contiguous(2, MPI_INT, &t);
        CHECK_OK(MPI_Type_set_attr(t, kt, (void *)5));
        MPI_Type_get_attr(t, kt, &v, &flag);
        CHECK(flag && v == (void *)5, "type attribute %p", v);
        CHECK_CLASS(MPI_Type_set_attr(t, k[0], NULL), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, kt, NULL), MPI_ERR_KEYVAL);
        CHECK_OK(MPI_Type_set_attr(MPI_INT, kt, (void *)6)); /* predefined types cache too */
        MPI_Type_delete_attr(MPI_INT, kt);
        type_deletes = 0;
        MPI_Type_free(&t);
        CHECK(type_deletes == 1, "Type_free ran %d delete callbacks", type_deletes);
        MPI_Type_free_keyval(&kt);
    }

    /* deprecated MPI-1 names */
    {
        int kv;
        CHECK_OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kv, NULL));
        CHECK_OK(MPI_Attr_put(MPI_COMM_SELF, kv, (void *)9));
        MPI_Attr_get(MPI_COMM_SELF, kv, &v, &flag);
        CHECK(flag && v == (void *)9, "Attr_get %p", v);
        CHECK_OK(MPI_Attr_delete(MPI_COMM_SELF, kv));
        CHECK_OK(MPI_Keyval_free(&kv));
    }
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, 123456, NULL), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&k[0]);
    MPI_Comm_free_keyval(&k[2]);

    /* an attribute on MPI_COMM_SELF is deleted at MPI_Finalize */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &k[0], &names[0]);
    MPI_Comm_set_attr(MPI_COMM_SELF, k[0], NULL);
    return mpitest_finish();
}
