/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Error handling: the error class of bad arguments under MPI_ERRORS_RETURN
 * (wrong handle kinds, freed handles, null handles, bad ranks, tags,
 * counts, groups, keyvals, topologies, info); user error handlers on
 * communicators (invoked with the code, inherited by dup); the
 * MPI_*_call_errhandler functions; user error classes, codes and strings;
 * MPI_Error_string / MPI_Error_class.
 */
#include "mpitest.h"

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void my_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

static int session_calls;
static void session_handler(MPI_Session *s, int *code, ...)
{
    (void)s;
    (void)code;
    session_calls++;
}

int main(int argc, char **argv)
{
    int            rank, size, v = 0, cls, code, code2, len, flag;
    char           str[MPI_MAX_ERROR_STRING];
    MPI_Comm       c, freed;
    MPI_Group      g;
    MPI_Errhandler eh;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* handles: null, wrong kind, freed */
    CHECK_CLASS(MPI_Comm_size(MPI_COMM_NULL, &v), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_size((MPI_Comm)MPI_INT, &v), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_size((MPI_Comm)MPI_GROUP_EMPTY, &v), MPI_ERR_COMM);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    freed = c;
    MPI_Comm_free(&c);
    CHECK_CLASS(MPI_Comm_size(freed, &v), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_free(&freed), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_free(&(MPI_Comm){MPI_COMM_WORLD}), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Group_size((MPI_Group)MPI_COMM_WORLD, &v), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ERRHANDLER);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)MPI_COMM_WORLD), MPI_ERR_ERRHANDLER);
    CHECK_CLASS(MPI_Info_set((MPI_Info)MPI_COMM_WORLD, "a", "b"), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Type_get_attr(MPI_DATATYPE_NULL, 1024, &v, &flag), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &v), MPI_ERR_SESSION);
    CHECK_CLASS(MPI_Win_set_attr(MPI_WIN_NULL, 1024, NULL), MPI_ERR_WIN);

    /* ranks, tags, counts, roots */
    CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, 0, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Cart_coords(MPI_COMM_WORLD, 0, 1, &v), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Graph_neighbors_count(MPI_COMM_WORLD, size, &v), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dims_create(6, 1, (int[]){4}), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 99999, &v, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    CHECK_CLASS(MPI_Group_incl(g, 1, &size, &(MPI_Group){0}), MPI_ERR_RANK);
    MPI_Group_free(&g);
    CHECK_CLASS(MPI_Info_delete(MPI_INFO_ENV, "no-such-key"), MPI_ERR_INFO_NOKEY);
    CHECK_CLASS(MPI_Error_string(-12345, str, &len), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Error_class(99999999, &cls), MPI_ERR_ARG);

    /* Error_string / Error_class of predefined classes */
    MPI_Error_string(MPI_ERR_RANK, str, &len);
    CHECK(len > 0 && (int)strlen(str) == len && strstr(str, "MPI_ERR_RANK") != NULL, "Error_string '%s'", str);
    MPI_Error_class(MPI_ERR_TRUNCATE, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "Error_class(TRUNCATE) = %d", cls);

    /* user error classes, codes, strings */
    CHECK_OK(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE, "user class %d <= MPI_ERR_LASTCODE", cls);
    CHECK_OK(MPI_Add_error_code(cls, &code));
    CHECK_OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    CHECK(code != code2 && code != cls, "codes not distinct");
    MPI_Error_class(code, &v);
    CHECK(v == cls, "class of user code %d, want %d", v, cls);
    MPI_Error_class(code2, &v);
    CHECK(v == MPI_ERR_ARG, "class of code in MPI_ERR_ARG = %d", v);
    MPI_Error_string(code, str, &len);
    CHECK(len == 0, "user code without a string has '%s'", str);
    CHECK_OK(MPI_Add_error_string(code, "my special failure"));
    MPI_Error_string(code, str, &len);
    CHECK(strcmp(str, "my special failure") == 0 && len == 18, "user string '%s'", str);
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_RANK, "nope"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_code(code, &v), MPI_ERR_ARG); /* a code is not a class */
    CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG);  /* still has a code */
    CHECK_CLASS(MPI_Remove_error_code(code), MPI_ERR_ARG);  /* still has a string */
    CHECK_OK(MPI_Remove_error_string(code));
    CHECK_OK(MPI_Remove_error_code(code));
    CHECK_CLASS(MPI_Remove_error_code(code), MPI_ERR_ARG);  /* already removed */
    CHECK_OK(MPI_Add_error_string(cls, "my class"));
    CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG);  /* still has a string */
    CHECK_OK(MPI_Remove_error_string(cls));
    CHECK_OK(MPI_Remove_error_class(cls));
    CHECK_CLASS(MPI_Error_class(code, &v), MPI_ERR_ARG);
    MPI_Remove_error_code(code2);

    /* user handler: called with the code, inherited by dup, get returns it */
    CHECK_OK(MPI_Comm_create_errhandler(my_handler, &eh));
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK_OK(MPI_Comm_set_errhandler(c, eh));
    CHECK_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not reset the handle");
    handler_calls = 0;
    MPI_Send(&v, 1, MPI_INT, size + 3, 0, c);
    CHECK(handler_calls == 1, "user handler called %d times", handler_calls);
    MPI_Error_class(handler_code, &v);
    CHECK(v == MPI_ERR_RANK && handler_comm == c, "handler code class %d", v);
    {
        MPI_Comm c2;
        MPI_Comm_dup(c, &c2);
        handler_calls = 0;
        MPI_Comm_call_errhandler(c2, MPI_ERR_OTHER);
        CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER && handler_comm == c2,
              "call_errhandler on a dup: calls %d code %d", handler_calls, handler_code);
        MPI_Comm_free(&c2);
    }
    MPI_Comm_get_errhandler(c, &eh);
    CHECK(eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRHANDLER_NULL, "get_errhandler");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&c); /* the handler object goes with the last user */
    /* a session error handler cannot be set on a communicator */
    MPI_Session_create_errhandler(session_handler, &eh);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh), MPI_ERR_ARG);
    MPI_Errhandler_free(&eh);
    /* call_errhandler returns MPI_SUCCESS once the handler (here
     * MPI_ERRORS_RETURN) has been invoked and returned, not the code */
    CHECK_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    /* files: default handler is MPI_ERRORS_RETURN, settable through MPI_FILE_NULL */
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "default file handler");
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL));
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "file handler after set");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    return mpitest_finish();
}
