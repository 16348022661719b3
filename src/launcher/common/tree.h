/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The k-ary tree of remote proxies (WEFT_MT_DEGREE = k). Remote proxies are
 * numbered 0..count-1 in host order ("positions"); mpiexec is the virtual
 * root whose children are positions 0..k-1, and position j has children
 * j*k+k .. j*k+2k-1. Messages between mpiexec and a proxy travel along the
 * tree (TO / FROM envelopes); fences are merged on the way up, so a fence
 * costs O(log_k count) hops instead of count messages at mpiexec.
 * Local proxies (this machine) stay direct children of mpiexec.
 */
#ifndef WEFT_LAUNCHER_TREE_H
#define WEFT_LAUNCHER_TREE_H

/* Parent position, or -1 when the parent is mpiexec. */
static inline int weft_tree_parent(int pos, int k)
{
    return pos < k ? -1 : (pos - k) / k;
}

/* First child position of pos (pos -1: mpiexec); may be >= count. */
static inline int weft_tree_first_child(int pos, int k)
{
    return pos < 0 ? 0 : pos * k + k;
}

/* Number of children of pos among count positions. */
static inline int weft_tree_nchildren(int pos, int k, int count)
{
    int first = weft_tree_first_child(pos, k);
    int n     = count - first;
    return n <= 0 ? 0 : (n < k ? n : k);
}

/* The child of from (-1: mpiexec) whose subtree holds dst, or -2 if none. */
static inline int weft_tree_route(int from, int dst, int k)
{
    while (dst >= 0) {
        int up = weft_tree_parent(dst, k);
        if (up == from) {
            return dst;
        }
        dst = up;
    }
    return -2;
}

#endif
