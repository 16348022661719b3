/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Forward declarations of every MPI object type (no layout here).
 */
#ifndef WEFT_CORE_OBJECT_TYPES_H
#define WEFT_CORE_OBJECT_TYPES_H

typedef struct weft_comm       weft_comm_t;
typedef struct weft_group      weft_group_t;
typedef struct weft_datatype   weft_datatype_t;
typedef struct weft_op         weft_op_t;
typedef struct weft_info       weft_info_t;
typedef struct weft_errhandler weft_errhandler_t;
typedef struct weft_request    weft_request_t;
typedef struct weft_win        weft_win_t;
typedef struct weft_session    weft_session_t;
typedef struct weft_message    weft_message_t;
typedef struct weft_file       weft_file_t;

#endif
