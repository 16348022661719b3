/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Global and static data are symmetric objects: a global array (bss), an
 * initialised global (data), a static scalar and a function-static counter
 * are targets of put/get/p/g/iput, atomics (8 PEs x 10^3 fetch_add on one
 * static word: exact), wait_until woken by a remote put, put_signal on a
 * global signal word, and shmem_ptr loads. Initialised values survive
 * shmem_init. */
#include "shmemtest.h"

#define LEN 1000
long garray[LEN];                      /* bss */
double ginit[8] = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5}; /* data */
static int sscalar;
static uint64_t gsig;
static volatile int gflag;

static long *counter_word(void)
{
    static long counter; /* function-static: symmetric too */
    return &counter;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;

    CHECK(ginit[0] == 1.5 && ginit[7] == 8.5, "initialised data survived shmem_init");
    CHECK(shmem_addr_accessible(garray, right) && shmem_addr_accessible(&sscalar, right),
          "globals accessible");

    long loc[LEN];
    for (int i = 0; i < LEN; i++) {
        loc[i] = (long)me * 100000 + i * 3 + 1;
    }
    shmem_long_put(garray, loc, LEN, right);
    shmem_int_p(&sscalar, 7 * me + 1, right);
    shmem_barrier_all();
    for (int i = 0; i < LEN; i++) {
        if (garray[i] != (long)left * 100000 + i * 3 + 1) {
            CHECK(0, "garray[%d] = %ld from PE %d", i, garray[i], left);
            break;
        }
    }
    CHECK(sscalar == 7 * left + 1, "static scalar %d, want %d", sscalar, 7 * left + 1);
    long got[LEN];
    shmem_long_get(got, garray, LEN, right); /* right's copy came from me */
    CHECK(!memcmp(got, loc, sizeof loc), "get of a global array");
    CHECK(shmem_int_g(&sscalar, right) == 7 * me + 1, "g of a static scalar");
    double d[8];
    shmem_double_get(d, ginit, 8, right);
    CHECK(d[3] == 4.5, "get of initialised data");
    shmem_barrier_all();

    /* local stores after init are what peers see */
    ginit[2] = 100.0 + me;
    shmem_barrier_all();
    CHECK(shmem_double_g(&ginit[2], right) == 100.0 + right, "peer sees local store");
    const double *peer = shmem_ptr(ginit, right);
    CHECK(shmemtest_same_node(right) ? peer && peer[2] == 100.0 + right : !peer, "shmem_ptr load of a global");
    shmem_barrier_all();

    /* strided put into a global */
    memset(garray, 0, sizeof garray);
    shmem_barrier_all();
    shmem_long_iput(garray, loc, 3, 1, 10, right);
    shmem_barrier_all();
    for (int i = 0; i < 10; i++) {
        CHECK(garray[3 * i] == (long)left * 100000 + i * 3 + 1 && garray[3 * i + 1] == 0, "iput element %d", i);
    }

    /* atomics on a function-static counter of PE 0 */
    long *counter = counter_word();
    shmem_barrier_all();
    for (int i = 0; i < 1000; i++) {
        shmem_long_atomic_fetch_add(counter, 1, 0);
    }
    shmem_barrier_all();
    if (me == 0) {
        CHECK(*counter == 1000L * n, "static counter %ld, want %ld", *counter, 1000L * n);
    }

    /* wait_until on a global flag, woken by the left neighbour's put */
    shmem_barrier_all();
    if (me == 0) {
        shmem_int_p((int *)&gflag, 1, right);
    } else {
        shmem_int_wait_until((int *)&gflag, SHMEM_CMP_EQ, 1);
        if (right != 0) {
            shmem_int_p((int *)&gflag, 1, right);
        }
    }
    if (me == 0 && n > 1) {
        gflag = 0;
    }
    shmem_barrier_all();

    /* put_signal with a global signal word */
    shmem_long_put_signal(garray, loc, 16, &gsig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(&gsig, SHMEM_CMP_GE, 1);
    CHECK(garray[15] == (long)left * 100000 + 46, "put_signal data into a global");

    int rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
