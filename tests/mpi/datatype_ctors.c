/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Every datatype constructor: size, lb/extent, true lb/extent against values
 * computed by hand; envelope/contents round trips; dup, names, free rules,
 * match_size, f90 types, value_index, address helpers and error classes.
 * Local only: runs the same at any rank count.
 */
#include <stddef.h>
#include <stdint.h>
#include "mpitest.h"

static int mpitest_is_weft(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int  n;
    MPI_Get_library_version(v, &n);
    return strstr(v, "Weft") != NULL || strstr(v, "weft") != NULL;
}

static void expect(MPI_Datatype t, const char *what, MPI_Count size, MPI_Aint lb, MPI_Aint extent,
                   MPI_Aint tlb, MPI_Aint textent)
{
    MPI_Count s, l, e, tl, te;
    CHECK_OK(MPI_Type_size_c(t, &s));
    CHECK_OK(MPI_Type_get_extent_c(t, &l, &e));
    CHECK_OK(MPI_Type_get_true_extent_c(t, &tl, &te));
    CHECK(s == size, "%s: size %lld, expected %lld", what, (long long)s, (long long)size);
    CHECK(l == lb && e == extent, "%s: lb/extent %lld/%lld, expected %ld/%ld", what, (long long)l,
          (long long)e, (long)lb, (long)extent);
    CHECK(tl == tlb && te == textent, "%s: true lb/extent %lld/%lld, expected %ld/%ld", what,
          (long long)tl, (long long)te, (long)tlb, (long)textent);
    int      is;
    MPI_Aint al, ae;
    CHECK_OK(MPI_Type_size(t, &is));
    CHECK_OK(MPI_Type_get_extent(t, &al, &ae));
    CHECK(is == (int)size && al == lb && ae == extent, "%s: int/Aint queries differ", what);
}

static void envelope(MPI_Datatype t, const char *what, int ni, int na, int nd, int comb)
{
    int a, b, c, d;
    CHECK_OK(MPI_Type_get_envelope(t, &a, &b, &c, &d));
    CHECK(a == ni && b == na && c == nd && d == comb, "%s: envelope %d %d %d comb %d, expected "
          "%d %d %d comb %d", what, a, b, c, d, ni, na, nd, comb);
}

static void test_basic_ctors(void)
{
    MPI_Datatype t, t2;

    CHECK_OK(MPI_Type_contiguous(5, MPI_INT, &t));
    expect(t, "contiguous(5,int)", 20, 0, 20, 0, 20);
    envelope(t, "contiguous", 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
    {
        int          ints[1];
        MPI_Aint     addrs[1];
        MPI_Datatype types[1];
        CHECK_OK(MPI_Type_get_contents(t, 1, 0, 1, ints, addrs, types));
        CHECK(ints[0] == 5 && types[0] == MPI_INT, "contiguous contents");
    }
    CHECK_OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");

    /* vector(3, 2, 4, double): blocks at 0, 32, 64 of 16 bytes: ub 80 */
    CHECK_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t));
    expect(t, "vector(3,2,4,double)", 48, 0, 80, 0, 80);
    envelope(t, "vector", 3, 0, 1, MPI_COMBINER_VECTOR);
    CHECK_OK(MPI_Type_free(&t));

    /* negative stride: blocks at 0, -12 (ints) */
    CHECK_OK(MPI_Type_vector(2, 1, -3, MPI_INT, &t));
    expect(t, "vector(2,1,-3,int)", 8, -12, 16, -12, 16);
    CHECK_OK(MPI_Type_free(&t));

    CHECK_OK(MPI_Type_create_hvector(3, 1, 10, MPI_SHORT, &t));
    expect(t, "hvector(3,1,10,short)", 6, 0, 22, 0, 22);
    envelope(t, "hvector", 2, 1, 1, MPI_COMBINER_HVECTOR);
    CHECK_OK(MPI_Type_free(&t));

    int bl[3] = { 2, 0, 1 }, disp[3] = { 4, 0, 1 };
    CHECK_OK(MPI_Type_indexed(3, bl, disp, MPI_INT, &t));
    /* blocks: ints 4-5 (bytes [16,24)), none, int 1 (bytes [4,8)) */
    expect(t, "indexed", 12, 4, 20, 4, 20);
    envelope(t, "indexed", 7, 0, 1, MPI_COMBINER_INDEXED);
    CHECK_OK(MPI_Type_free(&t));

    MPI_Aint hd[2] = { 100, -4 };
    int      hbl[2] = { 1, 2 };
    CHECK_OK(MPI_Type_create_hindexed(2, hbl, hd, MPI_FLOAT, &t));
    expect(t, "hindexed", 12, -4, 108, -4, 108);
    envelope(t, "hindexed", 3, 2, 1, MPI_COMBINER_HINDEXED);
    CHECK_OK(MPI_Type_free(&t));

    int ibd[3] = { 6, 0, 3 };
    CHECK_OK(MPI_Type_create_indexed_block(3, 2, ibd, MPI_CHAR, &t));
    expect(t, "indexed_block", 6, 0, 8, 0, 8);
    envelope(t, "indexed_block", 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
    CHECK_OK(MPI_Type_free(&t));

    MPI_Aint hbd[2] = { 16, 0 };
    CHECK_OK(MPI_Type_create_hindexed_block(2, 3, hbd, MPI_SHORT, &t));
    expect(t, "hindexed_block", 12, 0, 22, 0, 22);
    envelope(t, "hindexed_block", 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK);
    CHECK_OK(MPI_Type_free(&t));

    /* struct {char c; double d; int i[2];}: padded to 8 */
    struct s { char c; double d; int i[2]; };
    int          sbl[3]  = { 1, 1, 2 };
    MPI_Aint     sd[3]   = { offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i) };
    MPI_Datatype sty[3]  = { MPI_CHAR, MPI_DOUBLE, MPI_INT };
    CHECK_OK(MPI_Type_create_struct(3, sbl, sd, sty, &t));
    expect(t, "struct{char,double,int[2]}", 17, 0, (MPI_Aint)sizeof(struct s), 0, 24);
    envelope(t, "struct", 4, 3, 3, MPI_COMBINER_STRUCT);
    {
        int          ints[4];
        MPI_Aint     addrs[3];
        MPI_Datatype types[3];
        CHECK_OK(MPI_Type_get_contents(t, 4, 3, 3, ints, addrs, types));
        CHECK(ints[0] == 3 && ints[3] == 2 && addrs[1] == 8 && types[2] == MPI_INT,
              "struct contents");
    }

    /* resized and dup */
    CHECK_OK(MPI_Type_create_resized(t, -8, 64, &t2));
    expect(t2, "resized(struct,-8,64)", 17, -8, 64, 0, 24);
    envelope(t2, "resized", 0, 2, 1, MPI_COMBINER_RESIZED);
    {
        MPI_Aint     addrs[2];
        MPI_Datatype types[1];
        CHECK_OK(MPI_Type_get_contents(t2, 0, 2, 1, NULL, addrs, types));
        CHECK(addrs[0] == -8 && addrs[1] == 64 && types[0] == t, "resized contents");
        CHECK_OK(MPI_Type_free(&types[0])); /* a derived type returned is the caller's */
    }
    MPI_Datatype d;
    CHECK_OK(MPI_Type_dup(t2, &d));
    expect(d, "dup", 17, -8, 64, 0, 24);
    envelope(d, "dup", 0, 0, 1, MPI_COMBINER_DUP);
    /* freeing the inner types first must be safe: d keeps them alive */
    CHECK_OK(MPI_Type_free(&t));
    CHECK_OK(MPI_Type_free(&t2));
    CHECK_OK(MPI_Type_commit(&d));
    expect(d, "dup after frees", 17, -8, 64, 0, 24);
    CHECK_OK(MPI_Type_free(&d));

    /* a struct is padded to its strictest alignment even with a resized
     * member (MPICH does the same) */
    MPI_Datatype r4;
    CHECK_OK(MPI_Type_create_resized(MPI_INT, 0, 5, &r4));
    MPI_Datatype sty2[2] = { r4, MPI_CHAR };
    int          sbl2[2] = { 1, 1 };
    MPI_Aint     sd2[2]  = { 0, 5 };
    CHECK_OK(MPI_Type_create_struct(2, sbl2, sd2, sty2, &t));
    expect(t, "struct{resized int,char}", 5, 0, 8, 0, 6);
    CHECK_OK(MPI_Type_free(&t));
    CHECK_OK(MPI_Type_free(&r4));

    /* zero-count types */
    CHECK_OK(MPI_Type_contiguous(0, MPI_INT, &t));
    expect(t, "contiguous(0)", 0, 0, 0, 0, 0);
    CHECK_OK(MPI_Type_free(&t));
}

static void test_large_ctors(void)
{
    MPI_Datatype t;
    MPI_Count    ni, na, nl, nd;
    int          comb;
    CHECK_OK(MPI_Type_vector_c(4, 1, 3, MPI_INT, &t));
    expect(t, "vector_c", 16, 0, 40, 0, 40);
    CHECK_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
    CHECK(ni == 0 && na == 0 && nl == 3 && nd == 1 && comb == MPI_COMBINER_VECTOR,
          "vector_c envelope %lld %lld %lld %lld", (long long)ni, (long long)na, (long long)nl,
          (long long)nd);
    MPI_Count    lc[3];
    MPI_Datatype ty[1];
    CHECK_OK(MPI_Type_get_contents_c(t, 0, 0, 3, 1, NULL, NULL, lc, ty));
    CHECK(lc[0] == 4 && lc[1] == 1 && lc[2] == 3 && ty[0] == MPI_INT, "vector_c contents");
    CHECK_OK(MPI_Type_free(&t));

    MPI_Count    bl[2] = { 1, 2 }, dp[2] = { 0, 24 };
    MPI_Datatype tys[2] = { MPI_DOUBLE, MPI_INT };
    CHECK_OK(MPI_Type_create_struct_c(2, bl, dp, tys, &t));
    expect(t, "struct_c", 16, 0, 32, 0, 32);
    CHECK_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
    CHECK(ni == 0 && na == 0 && nl == 5 && nd == 2 && comb == MPI_COMBINER_STRUCT,
          "struct_c envelope");
    CHECK_OK(MPI_Type_free(&t));
}

static void test_subarray_darray(void)
{
    MPI_Datatype t;
    /* 4x6 ints, 2x3 block at (1,2), C order: rows 1..2, cols 2..4 */
    int sizes[2] = { 4, 6 }, sub[2] = { 2, 3 }, st[2] = { 1, 2 };
    CHECK_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t));
    expect(t, "subarray C", 24, 0, 96, (1 * 6 + 2) * 4, ((2 * 6 + 4) - (1 * 6 + 2) + 1) * 4);
    envelope(t, "subarray", 8, 0, 1, MPI_COMBINER_SUBARRAY);
    CHECK_OK(MPI_Type_commit(&t));
    int a[24], packed[6], pos = 0;
    for (int i = 0; i < 24; i++) {
        a[i] = i;
    }
    CHECK_OK(MPI_Pack(a, 1, t, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    static const int want[6] = { 8, 9, 10, 14, 15, 16 };
    CHECK(pos == 24 && memcmp(packed, want, sizeof(want)) == 0, "subarray C data");
    CHECK_OK(MPI_Type_free(&t));

    /* Fortran order: dimension 0 varies fastest */
    CHECK_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
    CHECK_OK(MPI_Type_commit(&t));
    pos = 0;
    CHECK_OK(MPI_Pack(a, 1, t, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    static const int wantf[6] = { 9, 10, 13, 14, 17, 18 }; /* (i + 4*j), i=1..2, j=2..4 */
    CHECK(memcmp(packed, wantf, sizeof(wantf)) == 0, "subarray Fortran data");
    CHECK_OK(MPI_Type_free(&t));

    /* darray: 8 elements, block over 2 processes; rank 1 owns 4..7 */
    int g[1] = { 8 }, dist[1] = { MPI_DISTRIBUTE_BLOCK }, darg[1] = { MPI_DISTRIBUTE_DFLT_DARG },
        ps[1] = { 2 };
    CHECK_OK(MPI_Type_create_darray(2, 1, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
    expect(t, "darray block", 16, 0, 32, 16, 16);
    envelope(t, "darray", 8, 0, 1, MPI_COMBINER_DARRAY);
    CHECK_OK(MPI_Type_free(&t));
    /* cyclic(2) over 3 processes of 10: rank 0 owns 0,1,6,7 */
    int g2[1] = { 10 }, dist2[1] = { MPI_DISTRIBUTE_CYCLIC }, darg2[1] = { 2 }, ps2[1] = { 3 };
    CHECK_OK(MPI_Type_create_darray(3, 0, 1, g2, dist2, darg2, ps2, MPI_ORDER_C, MPI_INT, &t));
    expect(t, "darray cyclic", 16, 0, 40, 0, 32);
    CHECK_OK(MPI_Type_commit(&t));
    pos = 0;
    CHECK_OK(MPI_Pack(a, 1, t, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    static const int wantc[4] = { 0, 1, 6, 7 };
    CHECK(pos == 16 && memcmp(packed, wantc, sizeof(wantc)) == 0, "darray cyclic data");
    CHECK_OK(MPI_Type_free(&t));
}

static void test_misc(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int  len;
    CHECK_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "name of MPI_DOUBLE: %s", name);
    MPI_Datatype t;
    CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_OK(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0, "new type has an empty name");
    CHECK_OK(MPI_Type_set_name(t, "pair of ints"));
    CHECK_OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "pair of ints") == 0, "set_name");
    CHECK_OK(MPI_Type_free(&t));

    envelope(MPI_INT, "MPI_INT", 0, 0, 0, MPI_COMBINER_NAMED);
    expect(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 0, 16, 0, 12);
    expect(MPI_SHORT_INT, "MPI_SHORT_INT", 6, 0, 8, 0, 8);
    expect(MPI_2INT, "MPI_2INT", 8, 0, 8, 0, 8);

    MPI_Datatype m;
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    int sz;
    MPI_Type_size(m, &sz);
    CHECK(sz == 8, "match_size real 8");
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    MPI_Type_size(m, &sz);
    CHECK(sz == 4, "match_size integer 4");

    MPI_Datatype f;
    CHECK_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &f));
    MPI_Type_size(f, &sz);
    CHECK(sz == 8, "f90 real(p=10) is 8 bytes");
    envelope(f, "f90 real", 2, 0, 0, MPI_COMBINER_F90_REAL);
    CHECK_OK(MPI_Type_create_f90_integer(5, &f));
    MPI_Type_size(f, &sz);
    CHECK(sz == 4, "f90 integer(r=5) is 4 bytes");
    CHECK_OK(MPI_Type_create_f90_complex(5, 30, &f));
    MPI_Type_size(f, &sz);
    CHECK(sz == 8, "f90 complex(p=5) is 8 bytes");

    MPI_Datatype p;
    CHECK_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p));
    CHECK(p == MPI_DOUBLE_INT, "value_index(double, int) is MPI_DOUBLE_INT");
    CHECK_OK(MPI_Type_get_value_index(MPI_SHORT, MPI_INT, &p));
    CHECK(p == MPI_SHORT_INT, "value_index(short, int) is MPI_SHORT_INT");
    CHECK_OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &p));
    CHECK(p == MPI_2INT, "value_index(int, int) is MPI_2INT");
    /* no predefined pair: MPI_DATATYPE_NULL, not a derived type */
    CHECK_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_FLOAT, &p));
    CHECK(p == MPI_DATATYPE_NULL, "value_index(double, float) is MPI_DATATYPE_NULL");
    CHECK_OK(MPI_Type_get_value_index(MPI_SHORT, MPI_SHORT, &p));
    CHECK(p == MPI_DATATYPE_NULL, "value_index(short, short) is MPI_DATATYPE_NULL");

    int      x[4];
    MPI_Aint a0, a2;
    CHECK_OK(MPI_Get_address(&x[0], &a0));
    CHECK_OK(MPI_Get_address(&x[2], &a2));
    CHECK(MPI_Aint_diff(a2, a0) == 2 * (MPI_Aint)sizeof(int), "Aint_diff");
    CHECK(MPI_Aint_add(a0, 8) == a2, "Aint_add");

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype b = MPI_INT;
    CHECK_CLASS(MPI_Type_free(&b), MPI_ERR_TYPE);
    int          i1[1];
    MPI_Aint     a1[1];
    MPI_Datatype d1[1];
    CHECK_CLASS(MPI_Type_get_contents(MPI_INT, 1, 1, 1, i1, a1, d1), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    if (mpitest_is_weft()) { /* MPICH's ABI library does not check these */
        int sizes[1] = { 4 }, subs[1] = { 5 }, sts[1] = { 0 };
        CHECK_CLASS(MPI_Type_create_subarray(1, sizes, subs, sts, MPI_ORDER_C, MPI_INT, &t),
                    MPI_ERR_ARG);
    }
    /* an uncommitted type cannot be used for communication */
    CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    int buf[2], pos = 0;
    char out[8];
    CHECK_CLASS(MPI_Pack(buf, 1, t, out, 8, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_basic_ctors();
    test_large_ctors();
    test_subarray_darray();
    test_misc();
    return mpitest_finish();
}
