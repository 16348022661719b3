/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The MPI_T entry points (listed as custom in kinds/mpit.txt): MPI_T calls
 * work before MPI_Init and after MPI_Finalize, return their error class and
 * call no error handler, so they bypass the generated wrapper. Each takes the
 * MPI_T lock and, except MPI_T_init_thread/MPI_T_finalize, needs MPI_T to be
 * initialised.
 */
#include "api/api.h"
#include "core/mpit/mpit.h"


#define WEFT_MPIT_FN(_ret, _name, _params, _args)                                  \
    WEFT_API _ret PMPI_T_##_name _params                                            \
    {                                                                              \
        int rc;                                                                    \
        mpit_lock();                                                               \
        rc = weft_mpit_active() || !mpit_needs_init(#_name) ? weft_mpit_##_name _args \
                                                            : MPI_T_ERR_NOT_INITIALIZED; \
        mpit_unlock();                                                             \
        return rc;                                                                 \
    }                                                                              \
    WEFT_API_ALIAS(MPI_T_##_name)

static int mpit_needs_init(const char *name)
{
    return __builtin_strcmp(name, "init_thread") != 0 && __builtin_strcmp(name, "finalize") != 0;
}

#include "core/mpit/mpit_functions.def"
