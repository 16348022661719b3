/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19, small conformance bugs:
 *  - bug 4: MPI_Neighbor_alltoall(v/w) on periodic cartesian communicators
 *    where both neighbours of a dimension are the same process (a ring of 1
 *    or 2 ranks, a dimension of size 1): the block from the -1 neighbour
 *    lands in the first slot of the dimension. Checked on a 1-D ring of all
 *    ranks and a 2-D 1 x np torus, data compared element by element.
 *  - bug 6: MPI_Pack_external_size("external32") follows the standard's
 *    table (MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes, MPI_WCHAR 2), and
 *    values that fit survive a pack/unpack round trip (big-endian bytes
 *    checked).
 *  - bug 7: MPI_Comm_create_from_group(MPI_GROUP_EMPTY) gives MPI_COMM_NULL.
 *  - MPI_Info_create_env before MPI_Init has the keys it has after it
 *    (command, argv, host, maxprocs, wdir; thread_level only once a level
 *    was chosen) with the same values.
 */
#include <stdint.h>
#include <wchar.h>
#include "mpitest.h"

#define NKEYS 16
static char env_keys[NKEYS][MPI_MAX_INFO_KEY + 1], env_vals[NKEYS][256];
static int  env_n;

static void env_snapshot(MPI_Info info)
{
    int n;
    MPI_Info_get_nkeys(info, &n);
    env_n = 0;
    for (int i = 0; i < n && env_n < NKEYS; i++, env_n++) {
        int len = sizeof(env_vals[0]), flag;
        MPI_Info_get_nthkey(info, i, env_keys[env_n]);
        MPI_Info_get_string(info, env_keys[env_n], &len, env_vals[env_n], &flag);
    }
}

static void check_neighbor_alltoall(MPI_Comm cart, int ndims)
{
    int rank, nn = 2 * ndims, sb[8], rb[8], want[8], src, dst, cnt[8], dsp[8];
    MPI_Aint     wdsp[8];
    MPI_Datatype types[8];

    MPI_Comm_rank(cart, &rank);
    for (int i = 0; i < nn; i++) {
        sb[i]    = rank * 100 + i; /* block i goes to neighbour i */
        cnt[i]   = 1;
        dsp[i]   = i;
        wdsp[i]  = (MPI_Aint)(i * sizeof(int));
        types[i] = MPI_INT;
    }
    /* slot 2d gets what the -1 neighbour sent in its +1 direction (its block
     * 2d+1); slot 2d+1 what the +1 neighbour sent in its -1 direction */
    for (int d = 0; d < ndims; d++) {
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        want[2 * d]     = src * 100 + 2 * d + 1;
        want[2 * d + 1] = dst * 100 + 2 * d;
    }
    for (int variant = 0; variant < 4; variant++) {
        MPI_Request req;
        memset(rb, 0xff, sizeof(rb));
        switch (variant) {
        case 0:
            CHECK_OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart));
            break;
        case 1:
            CHECK_OK(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart, &req));
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            break;
        case 2:
            CHECK_OK(MPI_Neighbor_alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, cart));
            break;
        case 3:
            CHECK_OK(MPI_Neighbor_alltoallw(sb, cnt, wdsp, types, rb, cnt, wdsp, types, cart));
            break;
        }
        for (int i = 0; i < nn; i++) {
            CHECK(rb[i] == want[i], "ndims %d variant %d slot %d got %d want %d", ndims, variant, i,
                  rb[i], want[i]);
        }
    }
}

static void check_ext32(void)
{
    static const struct {
        MPI_Datatype t;
        const char  *name;
        MPI_Aint     size;
    } table[] = {
        {MPI_PACKED, "MPI_PACKED", 1},
        {MPI_BYTE, "MPI_BYTE", 1},
        {MPI_CHAR, "MPI_CHAR", 1},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1},
        {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1},
        {MPI_WCHAR, "MPI_WCHAR", 2},
        {MPI_SHORT, "MPI_SHORT", 2},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2},
        {MPI_INT, "MPI_INT", 4},
        {MPI_LONG, "MPI_LONG", 4},
        {MPI_UNSIGNED, "MPI_UNSIGNED", 4},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 4},
        {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8},
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8},
        {MPI_FLOAT, "MPI_FLOAT", 4},
        {MPI_DOUBLE, "MPI_DOUBLE", 8},
        {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16},
        {MPI_C_BOOL, "MPI_C_BOOL", 1},
        {MPI_INT8_T, "MPI_INT8_T", 1},
        {MPI_INT16_T, "MPI_INT16_T", 2},
        {MPI_INT32_T, "MPI_INT32_T", 4},
        {MPI_INT64_T, "MPI_INT64_T", 8},
        {MPI_UINT8_T, "MPI_UINT8_T", 1},
        {MPI_UINT16_T, "MPI_UINT16_T", 2},
        {MPI_UINT32_T, "MPI_UINT32_T", 4},
        {MPI_UINT64_T, "MPI_UINT64_T", 8},
        {MPI_AINT, "MPI_AINT", 8},
        {MPI_COUNT, "MPI_COUNT", 8},
        {MPI_OFFSET, "MPI_OFFSET", 8},
        {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8},
        {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16},
        {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32},
        {MPI_CHARACTER, "MPI_CHARACTER", 1},
        {MPI_LOGICAL, "MPI_LOGICAL", 4},
        {MPI_INTEGER, "MPI_INTEGER", 4},
        {MPI_REAL, "MPI_REAL", 4},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8},
        {MPI_COMPLEX, "MPI_COMPLEX", 8},
        {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16},
        {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1},
        {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8},
        {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32},
        {MPI_INTEGER1, "MPI_INTEGER1", 1},
        {MPI_INTEGER2, "MPI_INTEGER2", 2},
        {MPI_INTEGER4, "MPI_INTEGER4", 4},
        {MPI_INTEGER8, "MPI_INTEGER8", 8},
        {MPI_REAL4, "MPI_REAL4", 4},
        {MPI_REAL8, "MPI_REAL8", 8},
        {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
        {MPI_COMPLEX16, "MPI_COMPLEX16", 16},
        {MPI_LONG_INT, "MPI_LONG_INT", 8},
        {MPI_2INT, "MPI_2INT", 8},
        {MPI_SHORT_INT, "MPI_SHORT_INT", 6},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        MPI_Aint sz = -1;
        CHECK_OK(MPI_Pack_external_size("external32", 2, table[i].t, &sz));
        CHECK(sz == 2 * table[i].size, "external32 size of 2 x %s is %ld, want %ld",
              table[i].name, (long)sz, (long)(2 * table[i].size));
    }
    {
        long          l[3] = {-2, 2147483647L, -2147483647L - 1}, l2[3];
        unsigned long u[2] = {4294967295UL, 0x80000001UL}, u2[2];
        wchar_t       w[2] = {L'A', 0xfffe}, w2[2];
        unsigned char buf[64];
        MPI_Aint      pos = 0, upos = 0;
        CHECK_OK(MPI_Pack_external("external32", l, 3, MPI_LONG, buf, sizeof(buf), &pos));
        CHECK_OK(MPI_Pack_external("external32", u, 2, MPI_UNSIGNED_LONG, buf, sizeof(buf), &pos));
        CHECK_OK(MPI_Pack_external("external32", w, 2, MPI_WCHAR, buf, sizeof(buf), &pos));
        CHECK(pos == 12 + 8 + 4, "packed %ld bytes, want 24", (long)pos);
        CHECK(buf[0] == 0xff && buf[3] == 0xfe && buf[4] == 0x7f && buf[8] == 0x80 &&
                  buf[12] == 0xff && buf[16] == 0x80 && buf[19] == 0x01 && buf[20] == 0 &&
                  buf[21] == 'A' && buf[22] == 0xff && buf[23] == 0xfe,
              "external32 bytes wrong");
        CHECK_OK(MPI_Unpack_external("external32", buf, pos, &upos, l2, 3, MPI_LONG));
        CHECK_OK(MPI_Unpack_external("external32", buf, pos, &upos, u2, 2, MPI_UNSIGNED_LONG));
        CHECK_OK(MPI_Unpack_external("external32", buf, pos, &upos, w2, 2, MPI_WCHAR));
        CHECK(memcmp(l, l2, sizeof(l)) == 0, "MPI_LONG round trip: %ld %ld %ld", l2[0], l2[1],
              l2[2]);
        CHECK(memcmp(u, u2, sizeof(u)) == 0, "MPI_UNSIGNED_LONG round trip: %lu %lu", u2[0], u2[1]);
        CHECK(memcmp(w, w2, sizeof(w)) == 0, "MPI_WCHAR round trip");
    }
}

int main(int argc, char **argv)
{
    int      rank, size, n_before, dims[2], periods[2] = {1, 1};
    MPI_Info env;
    MPI_Comm cart, nc;

    /* MPI_Info_create_env before MPI_Init */
    CHECK_OK(MPI_Info_create_env(argc, argv, &env));
    env_snapshot(env);
    n_before = env_n;
    char before_keys[NKEYS][MPI_MAX_INFO_KEY + 1], before_vals[NKEYS][256];
    memcpy(before_keys, env_keys, sizeof(env_keys));
    memcpy(before_vals, env_vals, sizeof(env_vals));
    MPI_Info_free(&env);

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    CHECK_OK(MPI_Info_create_env(argc, argv, &env));
    env_snapshot(env);
    MPI_Info_free(&env);
    {
        static const char *need[] = {"command", "host", "maxprocs", "wdir"};
        for (int k = 0; k < 4; k++) {
            int found = 0;
            for (int i = 0; i < n_before; i++) {
                found |= strcmp(before_keys[i], need[k]) == 0;
            }
            CHECK(found, "MPI_Info_create_env before MPI_Init has no '%s'", need[k]);
        }
        for (int i = 0; i < n_before; i++) {
            int found = 0;
            for (int j = 0; j < env_n; j++) {
                if (strcmp(before_keys[i], env_keys[j]) == 0) {
                    found = 1;
                    CHECK(strcmp(before_vals[i], env_vals[j]) == 0,
                          "env key %s: '%s' before MPI_Init, '%s' after", env_keys[j],
                          before_vals[i], env_vals[j]);
                }
            }
            CHECK(found, "env key %s before MPI_Init but not after", before_keys[i]);
        }
        for (int j = 0; j < env_n; j++) {
            int found = strcmp(env_keys[j], "thread_level") == 0;
            for (int i = 0; i < n_before; i++) {
                found |= strcmp(before_keys[i], env_keys[j]) == 0;
            }
            CHECK(found, "env key %s after MPI_Init but not before", env_keys[j]);
        }
    }

    /* bug 4: 1-D ring of all ranks, then a 1 x np torus */
    dims[0] = size;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    check_neighbor_alltoall(cart, 1);
    MPI_Comm_free(&cart);
    dims[0] = 1;
    dims[1] = size;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    check_neighbor_alltoall(cart, 2);
    MPI_Comm_free(&cart);

    check_ext32();

    /* bug 7 */
    nc = MPI_COMM_WORLD;
    CHECK_OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "weft.conf_misc", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &nc));
    CHECK(nc == MPI_COMM_NULL, "MPI_Comm_create_from_group(MPI_GROUP_EMPTY) is not MPI_COMM_NULL");
    return mpitest_finish();
}
