/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Builtin handle tables of the kinds whose modules do not exist yet, or that
 * have no predefined objects besides their NULL handle. Weak, so the owning
 * module's definition replaces them.
 */
#include "core/object.h"

__attribute__((weak)) weft_win_t     *weft_builtin_win[1];
__attribute__((weak)) weft_file_t    *weft_builtin_file[1];
__attribute__((weak)) weft_session_t *weft_builtin_session[1];
__attribute__((weak)) weft_message_t *weft_builtin_message[2];
__attribute__((weak)) weft_request_t *weft_builtin_request[1];
__attribute__((weak)) weft_op_t      *weft_builtin_op[0x20];
