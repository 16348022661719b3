/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Pack/Unpack (+_c), Pack_size, external32 golden bytes (big-endian,
 * standard sizes), Get_elements through Status_set_elements, and the
 * errors of packing: no room, a position outside the buffer, an unknown
 * data representation (the right class, position and buffers untouched).
 * Local only.
 */
#include <stdint.h>
#include "mpitest.h"

static int mpitest_is_weft(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int  n;
    MPI_Get_library_version(v, &n);
    return strstr(v, "Weft") != NULL || strstr(v, "weft") != NULL;
}

static void test_pack_unpack(void)
{
    MPI_Datatype v;
    double       src[12], dst[12];
    char         buf[256];
    int          pos = 0, size;
    for (int i = 0; i < 12; i++) {
        src[i] = i + 0.5;
        dst[i] = -1;
    }
    /* every third double, 4 of them, then one int after */
    CHECK_OK(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &v));
    CHECK_OK(MPI_Type_commit(&v));
    CHECK_OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &size));
    CHECK(size >= 32, "pack size %d", size);
    int one = 42, back = 0;
    CHECK_OK(MPI_Pack(src, 1, v, buf, sizeof(buf), &pos, MPI_COMM_WORLD));
    CHECK(pos == 32, "position after vector %d", pos);
    CHECK_OK(MPI_Pack(&one, 1, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD));
    CHECK(pos == 36, "position after int %d", pos);
    double packed[4];
    memcpy(packed, buf, 32);
    CHECK(packed[0] == 0.5 && packed[1] == 3.5 && packed[2] == 6.5 && packed[3] == 9.5,
          "packed values");
    int upos = 0;
    CHECK_OK(MPI_Unpack(buf, pos, &upos, dst, 1, v, MPI_COMM_WORLD));
    CHECK_OK(MPI_Unpack(buf, pos, &upos, &back, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK(upos == 36 && back == 42, "unpack int");
    for (int i = 0; i < 12; i++) {
        CHECK(dst[i] == (i % 3 == 0 ? src[i] : -1), "dst[%d] = %g", i, dst[i]);
    }
    MPI_Count cpos = 0;
    CHECK_OK(MPI_Pack_c(src, 2, MPI_DOUBLE, buf, 16, &cpos, MPI_COMM_WORLD));
    CHECK(cpos == 16, "Pack_c position");

    /* not enough room: an error, position unchanged (MPICH's ABI library
     * does not check this, so only on Weft) */
    if (mpitest_is_weft()) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        pos = 0;
        int rc = MPI_Pack(src, 1, v, buf, 16, &pos, MPI_COMM_WORLD);
        CHECK(rc != MPI_SUCCESS && pos == 0, "pack into a too small buffer fails");
        upos = 0;
        rc = MPI_Unpack(buf, 8, &upos, dst, 1, v, MPI_COMM_WORLD);
        CHECK(rc != MPI_SUCCESS && upos == 0, "unpack from a too small buffer fails");
    }
    CHECK_OK(MPI_Type_free(&v));
}

static void test_external32(void)
{
    struct {
        int32_t i;
        int16_t s;
        char    c;
        double  d;
        float   f;
        int64_t l;
    } v = { 0x01020304, -2, 'A', 1.0, -2.0f, 0x1122334455667788ll };
    MPI_Datatype t;
    int          bl[6] = { 1, 1, 1, 1, 1, 1 };
    MPI_Aint     base, d[6];
    MPI_Datatype tys[6] = { MPI_INT32_T, MPI_SHORT, MPI_CHAR, MPI_DOUBLE, MPI_FLOAT, MPI_INT64_T };
    MPI_Get_address(&v, &base);
    MPI_Get_address(&v.i, &d[0]);
    MPI_Get_address(&v.s, &d[1]);
    MPI_Get_address(&v.c, &d[2]);
    MPI_Get_address(&v.d, &d[3]);
    MPI_Get_address(&v.f, &d[4]);
    MPI_Get_address(&v.l, &d[5]);
    for (int k = 0; k < 6; k++) {
        d[k] = MPI_Aint_diff(d[k], base);
    }
    CHECK_OK(MPI_Type_create_struct(6, bl, d, tys, &t));
    CHECK_OK(MPI_Type_commit(&t));
    static const unsigned char golden[] = {
        0x01, 0x02, 0x03, 0x04,                         /* int32 */
        0xff, 0xfe,                                     /* short -2 */
        0x41,                                           /* 'A' */
        0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1.0 */
        0xc0, 0x00, 0x00, 0x00,                         /* -2.0f */
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* int64 */
    };
    MPI_Aint size;
    CHECK_OK(MPI_Pack_external_size("external32", 2, t, &size));
    CHECK(size == 2 * (MPI_Aint)sizeof(golden), "external32 size %ld", (long)size);
    unsigned char out[64];
    MPI_Aint      pos = 0;
    CHECK_OK(MPI_Pack_external("external32", &v, 1, t, out, sizeof(out), &pos));
    CHECK(pos == (MPI_Aint)sizeof(golden), "external32 position %ld", (long)pos);
    CHECK(memcmp(out, golden, sizeof(golden)) == 0, "external32 bytes");
    for (size_t i = 0; i < sizeof(golden) && memcmp(out, golden, sizeof(golden)); i++) {
        if (out[i] != golden[i]) {
            fprintf(stderr, "  byte %zu: %02x, expected %02x\n", i, out[i], golden[i]);
        }
    }
    __typeof__(v) w;
    memset(&w, 0, sizeof(w));
    pos = 0;
    CHECK_OK(MPI_Unpack_external("external32", golden, sizeof(golden), &pos, &w, 1, t));
    CHECK(w.i == v.i && w.s == v.s && w.c == v.c && w.d == v.d && w.f == v.f && w.l == v.l,
          "external32 unpack");
    MPI_Count cs;
    CHECK_OK(MPI_Pack_external_size_c("external32", 3, MPI_C_DOUBLE_COMPLEX, &cs));
    CHECK(cs == 48, "external32 size of 3 double complex: %lld", (long long)cs);
    CHECK_OK(MPI_Type_free(&t));
}

static void test_elements(void)
{
    MPI_Status   st;
    MPI_Datatype t;
    int          n;
    MPI_Count    nc;
    int          bl[2] = { 1, 1 };
    MPI_Aint     d[2]  = { 0, 8 };
    MPI_Datatype tys[2] = { MPI_DOUBLE, MPI_CHAR };
    CHECK_OK(MPI_Type_create_struct(2, bl, d, tys, &t));
    CHECK_OK(MPI_Type_commit(&t));
    memset(&st, 0, sizeof(st));
    CHECK_OK(MPI_Status_set_elements(&st, t, 5)); /* 2 whole + a double */
    CHECK_OK(MPI_Get_elements(&st, t, &n));
    CHECK(n == 5, "Get_elements %d", n);
    CHECK_OK(MPI_Get_count(&st, t, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count of a partial element: %d", n);
    CHECK_OK(MPI_Get_elements_x(&st, MPI_BYTE, &nc));
    CHECK(nc == 2 * 9 + 8, "bytes %lld", (long long)nc);
    CHECK_OK(MPI_Status_set_elements_x(&st, MPI_INT, 7));
    CHECK_OK(MPI_Get_elements_c(&st, MPI_INT, &nc));
    CHECK(nc == 7, "Get_elements_c %lld", (long long)nc);
    CHECK_OK(MPI_Get_elements(&st, MPI_DOUBLE, &n));
    CHECK(n == MPI_UNDEFINED, "28 bytes are not whole doubles: %d", n);
    CHECK_OK(MPI_Type_free(&t));
}

static void test_pack_errors(void)
{
    int           in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
    unsigned char buf[12];
    int           pos;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    memset(buf, 0xa5, sizeof(buf));
    pos = 0; /* 16 bytes into 12 */
    CHECK_CLASS(MPI_Pack(in, 4, MPI_INT, buf, (int)sizeof(buf), &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK(pos == 0, "position moved by a failed MPI_Pack: %d", pos);
    for (size_t i = 0; i < sizeof(buf); i++) {
        CHECK(buf[i] == 0xa5, "failed MPI_Pack wrote byte %zu", i);
    }
    pos = 13; /* past the end */
    CHECK_CLASS(MPI_Pack(in, 1, MPI_INT, buf, (int)sizeof(buf), &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    pos = -1;
    CHECK_CLASS(MPI_Pack(in, 1, MPI_INT, buf, (int)sizeof(buf), &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    pos = 8; /* 8 bytes left, 12 asked */
    CHECK_CLASS(MPI_Unpack(buf, (int)sizeof(buf), &pos, out, 3, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK(pos == 8 && out[0] == 0, "failed MPI_Unpack moved position (%d) or wrote", pos);

    MPI_Aint apos = 0;
    CHECK_CLASS(MPI_Pack_external("native", in, 1, MPI_INT, buf, sizeof(buf), &apos),
                MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_CLASS(MPI_Pack_external("external32", in, 4, MPI_INT, buf, sizeof(buf), &apos),
                MPI_ERR_TRUNCATE);
    CHECK(apos == 0, "position moved by a failed MPI_Pack_external: %ld", (long)apos);
    apos = 4; /* 8 bytes left, 12 asked */
    CHECK_CLASS(MPI_Unpack_external("external32", buf, sizeof(buf), &apos, out, 3, MPI_INT),
                MPI_ERR_TRUNCATE);
    apos = 13;
    CHECK_CLASS(MPI_Unpack_external("external32", buf, sizeof(buf), &apos, out, 1, MPI_INT),
                MPI_ERR_ARG);
    CHECK(out[0] == 0, "failed MPI_Unpack_external wrote: %d", out[0]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_pack_unpack();
    test_external32();
    test_elements();
    test_pack_errors();
    return mpitest_finish();
}
