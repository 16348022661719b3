/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Work-arounds for libfabric builds, applied once after it is dlopen'ed
 * (ofi_quirks.c says which and why).
 */
#ifndef WEFT_TRANSPORT_OFI_QUIRKS_H
#define WEFT_TRANSPORT_OFI_QUIRKS_H

#include <stddef.h>

/* Before libfabric is opened: eager_message_bytes is the largest message
 * (header and payload) the netmod sends eagerly; provider the one asked for
 * (WEFT_OFI_PROVIDER, else FI_PROVIDER; NULL: the default order). */
void ofi_quirks_before_dlopen(size_t eager_message_bytes, const char *provider);
/* lib: the handle of libfabric.so.1; before its first fi_getinfo. */
void ofi_quirks_after_dlopen(void *lib);
/* Just before libfabric is opened: load the inert stand-ins for the PSM
 * libraries it links (WEFT_OFI_PSM; provider as above). The number loaded. */
int  ofi_quirks_psm_standins(const char *provider);
/* libfabric did not open with them (a build importing more than they
 * offer): unload them, so that a second dlopen loads the real ones. */
void ofi_quirks_psm_standins_drop(void);

#endif
