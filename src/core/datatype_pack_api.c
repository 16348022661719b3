/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft_*_impl functions of the datatype MPI calls that read or write data
 * through a type: pack/unpack (native and external32), MPI_Get_address and
 * the element counts of a status. Kept apart from datatype_api.c, which
 * builds and describes types, so that each file holds one concern.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "api_impl.h"
#include "core/datatype_internal.h"
#include "core/errors.h"
#include "core/status.h"

/* ------------------------------------------------------------------ */
/* Pack / unpack                                                       */

/* What every pack and unpack checks: the position inside the size-byte
 * buffer, and need bytes of room from there. */
static int pack_room(MPI_Count need, MPI_Count size, MPI_Count pos, int packing)
{
    if (pos < 0 || pos > size) {
        return weft_error(MPI_ERR_ARG, "position %lld is outside the buffer of %lld bytes",
                          (long long)pos, (long long)size);
    }
    if (size - pos < need) {
        return weft_error(MPI_ERR_TRUNCATE, "%lld bytes to %s but only %lld left in %s",
                          (long long)need, packing ? "pack" : "unpack", (long long)(size - pos),
                          packing ? "outbuf" : "inbuf");
    }
    return MPI_SUCCESS;
}

static int pack(const void *inbuf, MPI_Count incount, weft_datatype_t *dt, void *outbuf,
                MPI_Count outsize, MPI_Count *position)
{
    MPI_Count need = incount * dt->size, pos = *position;
    int       rc   = pack_room(need, outsize, pos, 1);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_dt_pack(dt, incount, inbuf, 0, (char *)outbuf + pos, need);
    *position = pos + need;
    return MPI_SUCCESS;
}

static int unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, weft_datatype_t *dt)
{
    MPI_Count need = outcount * dt->size, pos = *position;
    int       rc   = pack_room(need, insize, pos, 0);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_dt_unpack(dt, outcount, outbuf, 0, (const char *)inbuf + pos, need);
    *position = pos + need;
    return MPI_SUCCESS;
}

int weft_pack_impl(const void *inbuf, int incount, weft_datatype_t *datatype, void *outbuf,
                   int outsize, int *position, weft_comm_t *comm)
{
    (void)comm;
    MPI_Count pos = *position;
    int       rc  = pack(inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS) {
        *position = (int)pos;
    }
    return rc;
}

int weft_pack_c_impl(const void *inbuf, MPI_Count incount, weft_datatype_t *datatype,
                     void *outbuf, MPI_Count outsize, MPI_Count *position, weft_comm_t *comm)
{
    (void)comm;
    return pack(inbuf, incount, datatype, outbuf, outsize, position);
}

int weft_unpack_impl(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                     weft_datatype_t *datatype, weft_comm_t *comm)
{
    (void)comm;
    MPI_Count pos = *position;
    int       rc  = unpack(inbuf, insize, &pos, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS) {
        *position = (int)pos;
    }
    return rc;
}

int weft_unpack_c_impl(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                       MPI_Count outcount, weft_datatype_t *datatype, weft_comm_t *comm)
{
    (void)comm;
    return unpack(inbuf, insize, position, outbuf, outcount, datatype);
}

int weft_pack_size_impl(int incount, weft_datatype_t *datatype, weft_comm_t *comm, int *size)
{
    (void)comm;
    MPI_Count n = (MPI_Count)incount * datatype->size;
    if (n > INT_MAX) {
        return weft_error(MPI_ERR_VALUE_TOO_LARGE, "packed size %lld does not fit in an int",
                          (long long)n);
    }
    *size = (int)n;
    return MPI_SUCCESS;
}

int weft_pack_size_c_impl(MPI_Count incount, weft_datatype_t *datatype, weft_comm_t *comm,
                          MPI_Count *size)
{
    (void)comm;
    *size = incount * datatype->size;
    return MPI_SUCCESS;
}

static int check_datarep(const char *datarep)
{
    if (datarep == NULL || strcmp(datarep, "external32") != 0) {
        return weft_error(MPI_ERR_UNSUPPORTED_DATAREP, "data representation \"%s\" is not "
                          "supported (only \"external32\")", datarep ? datarep : "(null)");
    }
    return MPI_SUCCESS;
}

static int pack_external(const char *datarep, const void *inbuf, MPI_Count incount,
                         weft_datatype_t *dt, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    MPI_Count need = incount * weft_dt_ext32_size(dt), pos = *position;
    int       rc   = check_datarep(datarep);
    if (rc == MPI_SUCCESS) {
        rc = pack_room(need, outsize, pos, 1);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_dt_ext32_pack(dt, incount, inbuf, (char *)outbuf + pos);
    *position = pos + need;
    return MPI_SUCCESS;
}

static int unpack_external(const char *datarep, const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           weft_datatype_t *dt)
{
    MPI_Count need = outcount * weft_dt_ext32_size(dt), pos = *position;
    int       rc   = check_datarep(datarep);
    if (rc == MPI_SUCCESS) {
        rc = pack_room(need, insize, pos, 0);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_dt_ext32_unpack(dt, outcount, (const char *)inbuf + pos, outbuf);
    *position = pos + need;
    return MPI_SUCCESS;
}

int weft_pack_external_impl(const char *datarep, const void *inbuf, int incount,
                            weft_datatype_t *datatype, void *outbuf, MPI_Aint outsize,
                            MPI_Aint *position)
{
    MPI_Count pos = *position;
    int rc = pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS) {
        *position = (MPI_Aint)pos;
    }
    return rc;
}

int weft_pack_external_c_impl(const char *datarep, const void *inbuf, MPI_Count incount,
                              weft_datatype_t *datatype, void *outbuf, MPI_Count outsize,
                              MPI_Count *position)
{
    return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int weft_unpack_external_impl(const char datarep[], const void *inbuf, MPI_Aint insize,
                              MPI_Aint *position, void *outbuf, int outcount,
                              weft_datatype_t *datatype)
{
    MPI_Count pos = *position;
    int rc = unpack_external(datarep, inbuf, insize, &pos, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS) {
        *position = (MPI_Aint)pos;
    }
    return rc;
}

int weft_unpack_external_c_impl(const char datarep[], const void *inbuf, MPI_Count insize,
                                MPI_Count *position, void *outbuf, MPI_Count outcount,
                                weft_datatype_t *datatype)
{
    return unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}

int weft_pack_external_size_impl(const char *datarep, int incount, weft_datatype_t *datatype,
                                 MPI_Aint *size)
{
    int rc = check_datarep(datarep);
    if (rc == MPI_SUCCESS) {
        *size = (MPI_Aint)(incount * weft_dt_ext32_size(datatype));
    }
    return rc;
}

int weft_pack_external_size_c_impl(const char *datarep, MPI_Count incount,
                                   weft_datatype_t *datatype, MPI_Count *size)
{
    int rc = check_datarep(datarep);
    if (rc == MPI_SUCCESS) {
        *size = incount * weft_dt_ext32_size(datatype);
    }
    return rc;
}

int weft_get_address_impl(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Elements                                                            */

static int status_in(const MPI_Status *status)
{
    if (status == NULL) {
        return weft_error(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    }
    return MPI_SUCCESS;
}

int weft_get_elements_impl(const MPI_Status *status, weft_datatype_t *datatype, int *count)
{
    int rc = status_in(status);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    MPI_Count n = weft_dt_elements(datatype, weft_status_get_bytes(status));
    *count      = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int weft_get_elements_c_impl(const MPI_Status *status, weft_datatype_t *datatype,
                             MPI_Count *count)
{
    int rc = status_in(status);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    *count = weft_dt_elements(datatype, weft_status_get_bytes(status));
    return MPI_SUCCESS;
}

int weft_get_elements_x_impl(const MPI_Status *status, weft_datatype_t *datatype,
                             MPI_Count *count)
{
    return weft_get_elements_c_impl(status, datatype, count);
}

int weft_status_set_elements_c_impl(MPI_Status *status, weft_datatype_t *datatype,
                                    MPI_Count count)
{
    int rc = status_in(status);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (count < 0) {
        return weft_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    }
    weft_status_set_bytes(status, weft_dt_elements_to_bytes(datatype, count));
    return MPI_SUCCESS;
}

int weft_status_set_elements_impl(MPI_Status *status, weft_datatype_t *datatype, MPI_Count count)
{
    return weft_status_set_elements_c_impl(status, datatype, count);
}

int weft_status_set_elements_x_impl(MPI_Status *status, weft_datatype_t *datatype,
                                    MPI_Count count)
{
    return weft_status_set_elements_c_impl(status, datatype, count);
}
