/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Hand-written entry points of the error-handler family: the
 * MPI_*_call_errhandler functions (they invoke a handler on purpose, so they
 * cannot use the generated error path) and the MPI_File ones (MPI_File is
 * not a converted handle kind).
 */
#include "api/api.h"
#include "core/errhandler.h"

/* The standard: MPI_*_CALL_ERRHANDLER returns MPI_SUCCESS once the handler
 * was called and returned, whatever the handler (MPI_ERRORS_RETURN
 * included; a fatal handler does not return). */
static int call_result(weft_errhandler_t *eh, int errorcode)
{
    (void)eh;
    (void)errorcode;
    return MPI_SUCCESS;
}

WEFT_API int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    int          rc;
    weft_comm_t *c;

    WEFT_API_ENTER("MPI_Comm_call_errhandler", 1);
    c = weft_comm_from_handle(comm);
    if (c == NULL) {
        rc = weft_err_arg(MPI_ERR_COMM, "comm", "invalid communicator");
        goto fail;
    }
    weft_error(errorcode, "error raised by the application (code %d)", errorcode);
    WEFT_API_EXIT();
    weft_err_dispatch_comm(comm, errorcode);
    return call_result(c->errhandler, errorcode);
fail:
    WEFT_API_EXIT();
    return weft_err_dispatch_comm(comm, rc);
}
WEFT_API_ALIAS(MPI_Comm_call_errhandler)

WEFT_API int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    int rc;

    WEFT_API_ENTER("MPI_Win_call_errhandler", 1);
    if (weft_win_from_handle(win) == NULL) {
        rc = weft_err_arg(MPI_ERR_WIN, "win", "invalid window");
        goto fail;
    }
    weft_error(errorcode, "error raised by the application (code %d)", errorcode);
    WEFT_API_EXIT();
    weft_err_dispatch_win(win, errorcode);
    return call_result(weft_win_errhandler(win), errorcode);
fail:
    WEFT_API_EXIT();
    return weft_err_dispatch_comm(MPI_COMM_SELF, rc);
}
WEFT_API_ALIAS(MPI_Win_call_errhandler)

WEFT_API int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    int rc = MPI_SUCCESS;

    WEFT_API_ENTER("MPI_File_call_errhandler", 1);
    if (fh == MPI_FILE_NULL || weft_file_errhandler_slot(fh) == NULL) {
        rc = weft_err_arg(MPI_ERR_FILE, "fh", "invalid file");
        goto fail;
    }
    weft_error(errorcode, "error raised by the application (code %d)", errorcode);
    WEFT_API_EXIT();
    weft_err_dispatch_file(fh, errorcode);
    return call_result(weft_file_errhandler(fh), errorcode);
fail:
    WEFT_API_EXIT();
    return weft_err_dispatch_file(MPI_FILE_NULL, rc);
}
WEFT_API_ALIAS(MPI_File_call_errhandler)

WEFT_API int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    int rc;

    WEFT_API_ENTER("MPI_Session_call_errhandler", 0); /* allowed outside init */
    if (weft_session_from_handle(session) == NULL) {
        rc = weft_err_arg(MPI_ERR_SESSION, "session", "invalid session");
        goto fail;
    }
    weft_error(errorcode, "error raised by the application (code %d)", errorcode);
    WEFT_API_EXIT();
    weft_err_dispatch_session(session, errorcode);
    return call_result(weft_session_errhandler(session), errorcode);
fail:
    WEFT_API_EXIT();
    return weft_err_dispatch_comm(MPI_COMM_SELF, rc);
}
WEFT_API_ALIAS(MPI_Session_call_errhandler)

WEFT_API int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    int                rc;
    weft_errhandler_t *eh;

    WEFT_API_ENTER("MPI_File_set_errhandler", 1);
    eh = weft_errhandler_from_handle(errhandler);
    if (eh == NULL) {
        rc = weft_err_arg(MPI_ERR_ERRHANDLER, "errhandler", "invalid error handler");
        goto fail;
    }
    rc = weft_file_errhandler_set(file, eh);
    if (rc != MPI_SUCCESS) {
        goto fail;
    }
    WEFT_API_EXIT();
    return MPI_SUCCESS;
fail:
    WEFT_API_EXIT();
    return weft_err_dispatch_file(file, rc);
}
WEFT_API_ALIAS(MPI_File_set_errhandler)

WEFT_API int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    int rc;

    WEFT_API_ENTER("MPI_File_get_errhandler", 1);
    if (errhandler == NULL) {
        rc = weft_err_arg(MPI_ERR_ARG, "errhandler", "NULL pointer for an output argument");
        goto fail;
    }
    rc = weft_file_errhandler_get(file, errhandler);
    if (rc != MPI_SUCCESS) {
        goto fail;
    }
    WEFT_API_EXIT();
    return MPI_SUCCESS;
fail:
    WEFT_API_EXIT();
    return weft_err_dispatch_file(file, rc);
}
WEFT_API_ALIAS(MPI_File_get_errhandler)
