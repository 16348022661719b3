/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Unit tests of the context-id allocator (src/core/comm_ctx.c) and the
 * group helpers: lowest-common-bit picking, reserve/release, exhaustion,
 * agreement of masks that differ per process (simulated AND), string tags.
 */
#include <stdio.h>
#include <string.h>

#include "core/comm_ctx.h"
#include "core/group.h"

static int failures;

#define EXPECT(_c, ...)                                                 \
    do {                                                                \
        if (!(_c)) {                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #_c); \
            fprintf(stderr, __VA_ARGS__);                               \
            fprintf(stderr, "\n");                                      \
            failures++;                                                 \
        }                                                               \
    } while (0)

static void test_pick_reserve(void)
{
    weft_ctx_mask_t m;
    uint32_t        ids[3];

    weft_ctx_module_init();
    EXPECT(weft_ctx_in_use() == 2, "WORLD and SELF reserved, in use %d", weft_ctx_in_use());
    weft_ctx_mask_local(&m);
    EXPECT(weft_ctx_pick(&m, 3, ids) == MPI_SUCCESS, "pick 3");
    EXPECT(ids[0] == 4 && ids[1] == 6 && ids[2] == 8, "ids %u %u %u", ids[0], ids[1], ids[2]);
    weft_ctx_reserve(4);
    weft_ctx_reserve(6);
    weft_ctx_mask_local(&m);
    weft_ctx_pick(&m, 1, ids);
    EXPECT(ids[0] == 8, "after reserving 4 and 6: %u", ids[0]);
    weft_ctx_release(4);
    weft_ctx_mask_local(&m);
    weft_ctx_pick(&m, 1, ids);
    EXPECT(ids[0] == 4, "released id is reused: %u", ids[0]);
    weft_ctx_release(6);
}

/* Two processes with different ids in use agree on the lowest id free on both. */
static void test_agreement(void)
{
    weft_ctx_mask_t a, b;
    uint32_t        id;

    weft_ctx_module_init();
    weft_ctx_reserve(4); /* process A uses 4 */
    weft_ctx_mask_local(&a);
    weft_ctx_release(4);
    weft_ctx_reserve(6); /* process B uses 6 */
    weft_ctx_mask_local(&b);
    weft_ctx_release(6);
    for (int i = 0; i < WEFT_CTX_WORDS; i++) {
        a.w[i] &= b.w[i];
    }
    weft_ctx_pick(&a, 1, &id);
    EXPECT(id == 8, "agreed id %u, want 8", id);
}

static void test_exhaustion(void)
{
    weft_ctx_mask_t m;
    uint32_t        id;

    weft_ctx_module_init();
    for (uint32_t s = 2; s < WEFT_CTX_SLOTS; s++) {
        weft_ctx_reserve(2 * s);
    }
    weft_ctx_mask_local(&m);
    EXPECT(weft_ctx_pick(&m, 1, &id) == MPI_ERR_OTHER, "exhausted mask still gives an id");
    weft_ctx_release(2 * (WEFT_CTX_SLOTS - 1));
    weft_ctx_mask_local(&m);
    EXPECT(weft_ctx_pick(&m, 1, &id) == MPI_SUCCESS && id == 2 * (WEFT_CTX_SLOTS - 1), "last id %u", id);
    EXPECT(weft_ctx_in_use() == WEFT_CTX_SLOTS - 1, "in use %d", weft_ctx_in_use());
    weft_ctx_module_init();
}

static void test_string_tags(void)
{
    int a = weft_xtag_of_string("a"), b = weft_xtag_of_string("b"), a2 = weft_xtag_of_string("a");

    EXPECT(a == a2, "hash not deterministic");
    EXPECT(a != b, "tags of 'a' and 'b' collide");
    EXPECT(a >= WEFT_XTAG_STRINGTAG && (a & 7) == 0 && a + 7 <= 0x7fffffff, "tag %#x out of range", a);
}

static void test_group_compare(void)
{
    int           r1[3] = {0, 1, 2}, r2[3] = {2, 1, 0}, r3[3] = {0, 1, 3};
    weft_group_t *a = weft_group_create(3, r1), *b = weft_group_create(3, r2), *c = weft_group_create(3, r3),
                 *d = weft_group_create(3, r1);

    EXPECT(weft_group_compare_raw(a, d) == MPI_IDENT, "same members and order");
    EXPECT(weft_group_compare_raw(a, b) == MPI_SIMILAR, "same members, other order");
    EXPECT(weft_group_compare_raw(a, c) == MPI_UNEQUAL, "different members");
    EXPECT(weft_group_rank_of_world(b, 0) == 2, "rank of world 0 in reversed group");
    weft_group_release(a);
    weft_group_release(b);
    weft_group_release(c);
    weft_group_release(d);
}

int main(void)
{
    test_pick_reserve();
    test_agreement();
    test_exhaustion();
    test_string_tags();
    test_group_compare();
    if (failures == 0) {
        printf("test_comm_ctx: all passed\n");
    }
    return failures ? 1 : 0;
}
