/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * PMI client side of dynamic processes: spawn and the name service
 * (contracts in pmi.h). Placeholder until the launcher serves them: every
 * call reports WEFT_PMI_ERR_UNSUPPORTED, so the MPI calls above fail with a
 * clear message instead of pretending.
 */
#include "pmi.h"

#include <stdio.h>

int weft_pmi_spawn(int count, const weft_pmi_spawn_cmd_t *cmds, int npreput,
                   const char *const *preput_keys, const char *const *preput_values,
                   int *errcodes, char *errmsg, size_t errmsg_len)
{
    (void)count; (void)cmds; (void)npreput; (void)preput_keys; (void)preput_values;
    (void)errcodes;
    snprintf(errmsg, errmsg_len, "spawning processes is not implemented yet by Weft's PMI client");
    return WEFT_PMI_ERR_UNSUPPORTED;
}

int weft_pmi_is_spawned(void)
{
    return 0;
}

int weft_pmi_get_preput(const char *key, char *value, size_t len)
{
    (void)key; (void)value; (void)len;
    return WEFT_PMI_ERR_NOT_FOUND;
}

int weft_pmi_publish_name(const char *service, const char *port)
{
    (void)service; (void)port;
    return WEFT_PMI_ERR_UNSUPPORTED;
}

int weft_pmi_lookup_name(const char *service, char *port, size_t len)
{
    (void)service; (void)port; (void)len;
    return WEFT_PMI_ERR_UNSUPPORTED;
}

int weft_pmi_unpublish_name(const char *service)
{
    (void)service;
    return WEFT_PMI_ERR_UNSUPPORTED;
}
