/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Win_free: hand-written because the handle is passed by reference (set
 * to MPI_WIN_NULL on success) while errors still go to the window's handler.
 */
#include "api/api.h"
#include "api_impl.h"

int weft_win_free_impl(weft_win_t *win);

WEFT_API int PMPI_Win_free(MPI_Win *win)
{
    int         rc;
    weft_win_t *w;
    MPI_Win     handle = MPI_WIN_NULL;

    WEFT_API_ENTER("MPI_Win_free", 1);
    if (win == NULL) {
        rc = weft_err_arg(MPI_ERR_ARG, "win", "NULL pointer for the window handle");
        goto fail;
    }
    w = weft_win_from_handle(*win);
    if (w == NULL) {
        rc = weft_err_arg(MPI_ERR_WIN, "win", "invalid window%s",
                          *win == MPI_WIN_NULL ? " (null handle)" : "");
        goto fail;
    }
    handle = *win;
    rc     = weft_win_free_impl(w);
    if (rc != MPI_SUCCESS) {
        goto fail;
    }
    *win = MPI_WIN_NULL;
    WEFT_API_EXIT();
    return MPI_SUCCESS;
fail:
    WEFT_API_EXIT();
    return handle != MPI_WIN_NULL ? weft_err_dispatch_win(handle, rc)
                                  : weft_err_dispatch_comm(MPI_COMM_SELF, rc);
}
WEFT_API_ALIAS(MPI_Win_free)
