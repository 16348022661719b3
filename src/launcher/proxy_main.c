/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft-proxy: the node proxy as a program, for hosts other than mpiexec's
 * (started by ssh, srun or WEFT_LAUNCHER_CMD) and for mpiexec's own host
 * when WEFT_LOCAL_PROXY_EXEC=1.
 */
#include "proxy.h"

int main(int argc, char **argv)
{
    return weft_proxy_main(argc, argv);
}
