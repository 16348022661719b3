/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * PMI wire codec shared by the client (src/pmi) and the launcher's PMI server
 * (src/launcher). Messages are described once in pmi_msgs.def; this module
 * frames, parses and formats them for both wire formats:
 *   wire 1: "cmd=NAME key=value key=value\n"           (values without spaces)
 *   wire 2: "%6d" length + "cmd=NAME;key=value;...;"   (';' inside values is ";;")
 *   wire 1 multi-line (spawn only): "mcmd=NAME\nkey=value\n...endcmd\n"
 * No I/O happens here: callers own their sockets and buffers.
 */
#ifndef WEFT_PMI_WIRE_H
#define WEFT_PMI_WIRE_H

#include <stddef.h>

/* Largest encoded message (either wire), prefix and terminator included. */
#define WEFT_PMI_WIRE_MAX   8192
/* Most attributes one message may carry (cmd= not counted). */
#define WEFT_PMI_MAX_ATTRS  160

typedef enum {
    WEFT_PMI_MSG_NONE = 0,
    WEFT_PMI_MSG_UNKNOWN, /* well-formed, but a cmd this codec does not know */
#define WEFT_PMI_MSG(_id, _wire, _dir, _name, _reply, _keys) WEFT_PMI_MSG_##_id,
#include "pmi_msgs.def"
#undef WEFT_PMI_MSG
    WEFT_PMI_MSG_COUNT
} weft_pmi_msg_id_t;

typedef enum {
    WEFT_PMI_DIR_Q, /* query, client -> server */
    WEFT_PMI_DIR_R  /* reply, server -> client */
} weft_pmi_dir_t;

typedef struct {
    const char *key;
    const char *val;
} weft_pmi_attr_t;

/* A decoded or to-be-encoded message. Strings point into buf. */
typedef struct {
    weft_pmi_msg_id_t id;
    int               wire;  /* 1 or 2 */
    const char       *cmd;   /* the cmd= value */
    int               nattrs;
    weft_pmi_attr_t   attrs[WEFT_PMI_MAX_ATTRS];
    size_t            used;
    char              buf[WEFT_PMI_WIRE_MAX];
} weft_pmi_msg_t;

/* Start an outgoing message of kind id (its wire comes from the table). */
void weft_pmi_msg_init(weft_pmi_msg_t *msg, weft_pmi_msg_id_t id);

/* Start an outgoing message with a cmd the table does not list (error
 * replies to unknown queries). */
void weft_pmi_msg_init_raw(weft_pmi_msg_t *msg, int wire, const char *cmd);

/* Append key=value. Returns 0, or -1 if the message is full. */
int weft_pmi_msg_add(weft_pmi_msg_t *msg, const char *key, const char *val);
int weft_pmi_msg_addf(weft_pmi_msg_t *msg, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Value of key, or NULL. */
const char *weft_pmi_msg_get(const weft_pmi_msg_t *msg, const char *key);
/* Integer value of key into *value_p. Returns 0, or -1 if missing/not an int. */
int weft_pmi_msg_get_int(const weft_pmi_msg_t *msg, const char *key, int *value_p);
/* rc= of a reply: 0 when absent, else its value (non-integer -> -1). */
int weft_pmi_msg_rc(const weft_pmi_msg_t *msg);

/* Encode into out (framing included). Returns the length, or -1 when the
 * message does not fit or a wire-1 value contains a space or newline. */
int weft_pmi_msg_encode(const weft_pmi_msg_t *msg, char *out, size_t len);

/* Look for one complete frame at the start of buf. Returns 1 and sets
 * *frame_len_p when complete, 0 when more bytes are needed, -1 when the
 * bytes cannot be a frame of that wire (or exceed WEFT_PMI_WIRE_MAX). */
int weft_pmi_frame(const char *buf, size_t avail, int wire, size_t *frame_len_p);

/* Which wire the first bytes of a connection speak: 1, 2, 0 (need more), -1. */
int weft_pmi_wire_detect(const char *buf, size_t avail);

/* Decode one complete frame. dir selects the query or reply table. Sets
 * msg->id (WEFT_PMI_MSG_UNKNOWN for an unknown cmd). Returns 0, or -1 when
 * malformed or a required attribute is missing (text in err). */
int weft_pmi_msg_decode(const char *frame, size_t len, int wire, weft_pmi_dir_t dir,
                        weft_pmi_msg_t *msg, char *err, size_t errlen);

/* Table lookups. */
const char       *weft_pmi_msg_name(weft_pmi_msg_id_t id);
weft_pmi_msg_id_t weft_pmi_msg_reply(weft_pmi_msg_id_t id);
int               weft_pmi_msg_wire(weft_pmi_msg_id_t id);

#endif
