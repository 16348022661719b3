/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Info objects: set/get/get_string/get_valuelen, nkeys/nthkey order,
 * overwrite, delete (MPI_ERR_INFO_NOKEY), dup independence, free,
 * MPI_INFO_ENV, MPI_Info_create_env, and the error classes of bad keys,
 * values and handles.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Info info, dup;
    char     value[MPI_MAX_INFO_VAL], key[MPI_MAX_INFO_KEY];
    int      flag, n, len;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    CHECK_OK(MPI_Info_create(&info));
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 0, "new info has %d keys", n);
    MPI_Info_set(info, "alpha", "1");
    MPI_Info_set(info, "beta", "two");
    MPI_Info_set(info, "gamma", "three!");
    MPI_Info_set(info, "alpha", "one"); /* overwrite keeps position */
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 3, "nkeys %d", n);
    const char *order[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++) {
        MPI_Info_get_nthkey(info, i, key);
        CHECK(strcmp(key, order[i]) == 0, "nthkey(%d) = %s", i, key);
    }
    CHECK_CLASS(MPI_Info_get_nthkey(info, 3, key), MPI_ERR_ARG);
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "one") == 0, "get alpha '%s'", value);
    MPI_Info_get(info, "gamma", 3, value, &flag); /* truncated to valuelen chars */
    CHECK(flag && strcmp(value, "thr") == 0, "truncated get '%s'", value);
    MPI_Info_get(info, "nokey", 10, value, &flag);
    CHECK(!flag, "absent key found");
    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    CHECK(flag && len == 3, "valuelen %d", len);
    /* get_string: buflen in/out */
    len = 0;
    MPI_Info_get_string(info, "gamma", &len, value, &flag);
    CHECK(flag && len == 7, "get_string size query %d", len);
    len = 4;
    MPI_Info_get_string(info, "gamma", &len, value, &flag);
    CHECK(flag && len == 7 && strcmp(value, "thr") == 0, "get_string short buffer '%s' %d", value, len);
    len = sizeof(value);
    MPI_Info_get_string(info, "gamma", &len, value, &flag);
    CHECK(flag && strcmp(value, "three!") == 0, "get_string '%s'", value);

    /* dup is independent */
    MPI_Info_dup(info, &dup);
    MPI_Info_set(dup, "alpha", "changed");
    MPI_Info_get(info, "alpha", 100, value, &flag);
    CHECK(strcmp(value, "one") == 0, "dup shares values");
    CHECK_OK(MPI_Info_delete(dup, "beta"));
    CHECK_CLASS(MPI_Info_delete(dup, "beta"), MPI_ERR_INFO_NOKEY);
    MPI_Info_get_nkeys(dup, &n);
    CHECK(n == 2, "dup nkeys after delete %d", n);
    MPI_Info_free(&dup);
    CHECK(dup == MPI_INFO_NULL, "free did not reset handle");

    /* bad keys / values / handles */
    {
        char longkey[MPI_MAX_INFO_KEY + 8], *longval = malloc(MPI_MAX_INFO_VAL + 8);
        memset(longkey, 'k', sizeof(longkey) - 1);
        longkey[sizeof(longkey) - 1] = '\0';
        memset(longval, 'v', MPI_MAX_INFO_VAL + 7);
        longval[MPI_MAX_INFO_VAL + 7] = '\0';
        CHECK_CLASS(MPI_Info_set(info, longkey, "x"), MPI_ERR_INFO_KEY);
        CHECK_CLASS(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
        CHECK_CLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
        CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
        CHECK_CLASS(MPI_Info_get_nkeys((MPI_Info)MPI_COMM_WORLD, &n), MPI_ERR_INFO);
        free(longval);
    }
    MPI_Info saved = info;
    MPI_Info_free(&info);
    CHECK_CLASS(MPI_Info_get_nkeys(saved, &n), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_free(&info), MPI_ERR_INFO);

    /* MPI_INFO_ENV and create_env */
    MPI_Info_get_nkeys(MPI_INFO_ENV, &n);
    CHECK(n >= 1, "MPI_INFO_ENV has %d keys", n);
    len = sizeof(value);
    MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &len, value, &flag);
    {
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        CHECK(flag && atoi(value) == size, "MPI_INFO_ENV maxprocs '%s'", flag ? value : "");
    }
    CHECK_OK(MPI_Info_create_env(argc, argv, &info));
    MPI_Info_get(info, "command", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag, "create_env has no command key");
    MPI_Info_free(&info);
    CHECK_CLASS(MPI_Info_free(&(MPI_Info){MPI_INFO_ENV}), MPI_ERR_INFO);
    return mpitest_finish();
}
