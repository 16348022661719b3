/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The node proxy (proxy.c, proxy_ranks.c) as a function: the weft-proxy
 * program is a one-line main around it, and mpiexec runs it in a forked
 * child for its own host, which saves that proxy's exec and dynamic linking
 * at every start.
 */
#ifndef WEFT_LAUNCHER_PROXY_H
#define WEFT_LAUNCHER_PROXY_H

/* weft-proxy's command line: --control-fd FD (started by mpiexec on this
 * host) or --connect HOST PORT --index I --tree DEGREE COUNT --host NAME
 * --heartbeat MS (remote, secret on stdin). Returns the exit status. */
int weft_proxy_main(int argc, char **argv);

#endif
