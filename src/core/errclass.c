/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * User-defined error classes, codes and strings (MPI_Add_error_*,
 * MPI_Remove_error_*), MPI_Error_class and MPI_Error_string. User values
 * start above MPI_ERR_LASTCODE and are never reused, so a removed code can
 * not be mistaken for a new one; MPI_LASTUSEDCODE is the largest handed out.
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/errors.h"

typedef struct {
    int   live;
    int   cls;    /* its class (itself for a class) */
    int   ncodes; /* classes: live codes in this class */
    char *string; /* NULL: none set */
} user_code_t;

#define USER_BASE (MPI_ERR_LASTCODE + 1)

static user_code_t *codes;
static int          ncodes_total, cap_codes;

static user_code_t *user_code(int code)
{
    int i = code - USER_BASE;
    return (i >= 0 && i < ncodes_total && codes[i].live) ? &codes[i] : NULL;
}

int weft_user_error_class_of(int code)
{
    user_code_t *c = user_code(code);
    return c ? c->cls : -1;
}

const char *weft_user_error_string_of(int code)
{
    user_code_t *c = user_code(code);
    return c ? (c->string ? c->string : "") : NULL;
}

int weft_errclass_last_used(void)
{
    return ncodes_total > 0 ? USER_BASE + ncodes_total - 1 : MPI_ERR_LASTCODE;
}

static int is_class(int v)
{
    user_code_t *c = user_code(v);
    if (c != NULL) {
        return c->cls == v;
    }
    return v >= 0 && v <= MPI_ERR_LASTCODE && weft_error_string_of(v) != NULL;
}

static int new_code(int cls, int *out)
{
    if (ncodes_total == cap_codes) {
        int          cap = cap_codes ? 2 * cap_codes : 32;
        user_code_t *n   = realloc(codes, sizeof(*n) * (size_t)cap);
        if (n == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "no memory for an error code");
        }
        codes     = n;
        cap_codes = cap;
    }
    int v = USER_BASE + ncodes_total;
    codes[ncodes_total++] = (user_code_t){.live = 1, .cls = cls < 0 ? v : cls, .ncodes = 0, .string = NULL};
    *out = v;
    return MPI_SUCCESS;
}

int weft_add_error_class_impl(int *errorclass)
{
    return new_code(-1, errorclass);
}

int weft_add_error_code_impl(int errorclass, int *errorcode)
{
    int rc;

    if (!is_class(errorclass)) {
        return weft_error(MPI_ERR_ARG, "argument errorclass: %d is not an error class", errorclass);
    }
    rc = new_code(errorclass, errorcode);
    if (rc == MPI_SUCCESS && user_code(errorclass) != NULL) {
        user_code(errorclass)->ncodes++;
    }
    return rc;
}

int weft_add_error_string_impl(int errorcode, const char *string)
{
    user_code_t *c = user_code(errorcode);
    char        *s;

    if (c == NULL) {
        return weft_error(MPI_ERR_ARG, "argument errorcode: %d is not a user-defined error code or class",
                          errorcode);
    }
    if (string == NULL) {
        return weft_error(MPI_ERR_ARG, "argument string: NULL pointer");
    }
    if (strlen(string) >= MPI_MAX_ERROR_STRING) {
        return weft_error(MPI_ERR_ARG, "argument string: longer than MPI_MAX_ERROR_STRING-1 (%d)",
                          MPI_MAX_ERROR_STRING - 1);
    }
    s = strdup(string);
    if (s == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an error string");
    }
    free(c->string);
    c->string = s;
    return MPI_SUCCESS;
}

int weft_remove_error_class_impl(int errorclass)
{
    user_code_t *c = user_code(errorclass);

    if (c == NULL || c->cls != errorclass) {
        return weft_error(MPI_ERR_ARG, "argument errorclass: %d is not a user-defined error class",
                          errorclass);
    }
    /* MPI-4.1: removing a class that still has error codes or an error
     * string associated with it is erroneous; report it. */
    if (c->ncodes > 0) {
        return weft_error(MPI_ERR_ARG, "argument errorclass: class %d still has %d error codes",
                          errorclass, c->ncodes);
    }
    if (c->string != NULL) {
        return weft_error(MPI_ERR_ARG,
                          "argument errorclass: class %d still has an error string (remove it first)",
                          errorclass);
    }
    c->live = 0;
    return MPI_SUCCESS;
}

int weft_remove_error_code_impl(int errorcode)
{
    user_code_t *c = user_code(errorcode);

    if (c == NULL || c->cls == errorcode) {
        return weft_error(MPI_ERR_ARG, "argument errorcode: %d is not a user-defined error code",
                          errorcode);
    }
    /* As for classes, a code that still has an error string is kept. */
    if (c->string != NULL) {
        return weft_error(MPI_ERR_ARG,
                          "argument errorcode: code %d still has an error string (remove it first)",
                          errorcode);
    }
    if (user_code(c->cls) != NULL) {
        user_code(c->cls)->ncodes--;
    }
    c->live = 0;
    return MPI_SUCCESS;
}

int weft_remove_error_string_impl(int errorcode)
{
    user_code_t *c = user_code(errorcode);

    if (c == NULL) {
        return weft_error(MPI_ERR_ARG, "argument errorcode: %d is not a user-defined error code or class",
                          errorcode);
    }
    free(c->string);
    c->string = NULL;
    return MPI_SUCCESS;
}

int weft_error_class_impl(int errorcode, int *errorclass)
{
    int cls = weft_error_class_of(errorcode);

    if (cls < 0 || weft_error_string_of(errorcode) == NULL) {
        return weft_error(MPI_ERR_ARG, "argument errorcode: %d is not a valid error code", errorcode);
    }
    *errorclass = cls;
    return MPI_SUCCESS;
}

int weft_error_string_impl(int errorcode, char *string, int *resultlen)
{
    const char *s = weft_error_string_of(errorcode);
    size_t      n;

    if (s == NULL) {
        return weft_error(MPI_ERR_ARG, "argument errorcode: %d is not a valid error code", errorcode);
    }
    if (string == NULL) {
        return weft_error(MPI_ERR_ARG, "argument string: NULL pointer");
    }
    n = strlen(s);
    if (n >= MPI_MAX_ERROR_STRING) {
        n = MPI_MAX_ERROR_STRING - 1;
    }
    memcpy(string, s, n);
    string[n]  = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
