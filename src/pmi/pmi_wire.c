/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "pmi_wire.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char       *name;
    int               wire;
    weft_pmi_dir_t    dir;
    weft_pmi_msg_id_t reply;
    const char       *keys;
} pmi_msg_desc_t;

static const pmi_msg_desc_t pmi_msg_descs[WEFT_PMI_MSG_COUNT] = {
    [WEFT_PMI_MSG_NONE]    = {"", 0, WEFT_PMI_DIR_Q, WEFT_PMI_MSG_NONE, ""},
    [WEFT_PMI_MSG_UNKNOWN] = {"?", 0, WEFT_PMI_DIR_Q, WEFT_PMI_MSG_NONE, ""},
#define WEFT_PMI_MSG(_id, _wire, _dir, _name, _reply, _keys) \
    [WEFT_PMI_MSG_##_id] = {_name, _wire, WEFT_PMI_DIR_##_dir, WEFT_PMI_MSG_##_reply, _keys},
#include "pmi_msgs.def"
#undef WEFT_PMI_MSG
};

const char *weft_pmi_msg_name(weft_pmi_msg_id_t id)
{
    return (id >= 0 && id < WEFT_PMI_MSG_COUNT) ? pmi_msg_descs[id].name : "?";
}

weft_pmi_msg_id_t weft_pmi_msg_reply(weft_pmi_msg_id_t id)
{
    return (id >= 0 && id < WEFT_PMI_MSG_COUNT) ? pmi_msg_descs[id].reply : WEFT_PMI_MSG_NONE;
}

int weft_pmi_msg_wire(weft_pmi_msg_id_t id)
{
    return (id >= 0 && id < WEFT_PMI_MSG_COUNT) ? pmi_msg_descs[id].wire : 0;
}

/* Copy s (n bytes) into the message's string storage. */
static const char *msg_store(weft_pmi_msg_t *msg, const char *s, size_t n)
{
    char *dst;

    if (msg->used + n + 1 > sizeof(msg->buf)) {
        return NULL;
    }
    dst = msg->buf + msg->used;
    memcpy(dst, s, n);
    dst[n] = '\0';
    msg->used += n + 1;
    return dst;
}

void weft_pmi_msg_init(weft_pmi_msg_t *msg, weft_pmi_msg_id_t id)
{
    msg->id     = id;
    msg->wire   = pmi_msg_descs[id].wire;
    msg->nattrs = 0;
    msg->used   = 0;
    msg->cmd    = msg_store(msg, pmi_msg_descs[id].name, strlen(pmi_msg_descs[id].name));
}

void weft_pmi_msg_init_raw(weft_pmi_msg_t *msg, int wire, const char *cmd)
{
    msg->id     = WEFT_PMI_MSG_UNKNOWN;
    msg->wire   = wire;
    msg->nattrs = 0;
    msg->used   = 0;
    msg->cmd    = msg_store(msg, cmd, strnlen(cmd, 128));
}

int weft_pmi_msg_add(weft_pmi_msg_t *msg, const char *key, const char *val)
{
    const char *k, *v;

    if (msg->nattrs == WEFT_PMI_MAX_ATTRS) {
        return -1;
    }
    k = msg_store(msg, key, strlen(key));
    v = k ? msg_store(msg, val, strlen(val)) : NULL;
    if (v == NULL) {
        return -1;
    }
    msg->attrs[msg->nattrs].key = k;
    msg->attrs[msg->nattrs].val = v;
    msg->nattrs++;
    return 0;
}

int weft_pmi_msg_addf(weft_pmi_msg_t *msg, const char *key, const char *fmt, ...)
{
    char    val[WEFT_PMI_WIRE_MAX];
    va_list ap;
    int     n;

    va_start(ap, fmt);
    n = vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(val)) {
        return -1;
    }
    return weft_pmi_msg_add(msg, key, val);
}

const char *weft_pmi_msg_get(const weft_pmi_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->nattrs; i++) {
        if (strcmp(msg->attrs[i].key, key) == 0) {
            return msg->attrs[i].val;
        }
    }
    return NULL;
}

int weft_pmi_msg_get_int(const weft_pmi_msg_t *msg, const char *key, int *value_p)
{
    const char *text = weft_pmi_msg_get(msg, key);
    char       *end;
    long        v;

    if (text == NULL || *text == '\0') {
        return -1;
    }
    errno = 0;
    v     = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < -2147483647L - 1 || v > 2147483647L) {
        return -1;
    }
    *value_p = (int)v;
    return 0;
}

int weft_pmi_msg_rc(const weft_pmi_msg_t *msg)
{
    int rc;

    if (weft_pmi_msg_get(msg, "rc") == NULL) {
        return 0;
    }
    return weft_pmi_msg_get_int(msg, "rc", &rc) == 0 ? rc : -1;
}

/* Append n bytes to out at *pos; -1 when it would not fit. */
static int out_put(char *out, size_t len, size_t *pos, const char *s, size_t n)
{
    if (*pos + n >= len) {
        return -1;
    }
    memcpy(out + *pos, s, n);
    *pos += n;
    return 0;
}

static int encode_v1(const weft_pmi_msg_t *msg, char *out, size_t len)
{
    size_t pos = 0;

    if (out_put(out, len, &pos, "cmd=", 4) || out_put(out, len, &pos, msg->cmd, strlen(msg->cmd))) {
        return -1;
    }
    for (int i = 0; i < msg->nattrs; i++) {
        const char *v = msg->attrs[i].val;

        /* A wire-1 "message" attribute, always last, runs to the end of the line. */
        int tail = i == msg->nattrs - 1 && strcmp(msg->attrs[i].key, "message") == 0;
        if (strpbrk(v, tail ? "\n" : " \n") != NULL || strpbrk(msg->attrs[i].key, " =\n") != NULL) {
            return -1;
        }
        if (out_put(out, len, &pos, " ", 1) ||
            out_put(out, len, &pos, msg->attrs[i].key, strlen(msg->attrs[i].key)) ||
            out_put(out, len, &pos, "=", 1) || out_put(out, len, &pos, v, strlen(v))) {
            return -1;
        }
    }
    if (out_put(out, len, &pos, "\n", 1)) {
        return -1;
    }
    out[pos] = '\0';
    return (int)pos;
}

/* Append s with every ';' doubled. */
static int out_put_escaped(char *out, size_t len, size_t *pos, const char *s)
{
    for (; *s != '\0'; s++) {
        if (out_put(out, len, pos, s, 1) || (*s == ';' && out_put(out, len, pos, ";", 1))) {
            return -1;
        }
    }
    return 0;
}

static int encode_v2(const weft_pmi_msg_t *msg, char *out, size_t len)
{
    size_t pos = 6;
    char   hdr[8];

    if (len < 8) {
        return -1;
    }
    if (out_put(out, len, &pos, "cmd=", 4) || out_put_escaped(out, len, &pos, msg->cmd) ||
        out_put(out, len, &pos, ";", 1)) {
        return -1;
    }
    for (int i = 0; i < msg->nattrs; i++) {
        if (strpbrk(msg->attrs[i].key, ";=") != NULL) {
            return -1;
        }
        if (out_put(out, len, &pos, msg->attrs[i].key, strlen(msg->attrs[i].key)) ||
            out_put(out, len, &pos, "=", 1) ||
            out_put_escaped(out, len, &pos, msg->attrs[i].val) || out_put(out, len, &pos, ";", 1)) {
            return -1;
        }
    }
    if (pos - 6 > 999999) {
        return -1;
    }
    /* Right-aligned, space-padded decimal: what strtol/atoi based peers parse. */
    snprintf(hdr, sizeof(hdr), "%6d", (int)(pos - 6));
    memcpy(out, hdr, 6);
    out[pos] = '\0';
    return (int)pos;
}

/* The multi-line wire-1 form (PMI-1 spawn): one "key=value" line each. */
static int encode_mcmd(const weft_pmi_msg_t *msg, char *out, size_t len)
{
    size_t pos = 0;

    if (out_put(out, len, &pos, "mcmd=", 5) ||
        out_put(out, len, &pos, msg->cmd, strlen(msg->cmd)) || out_put(out, len, &pos, "\n", 1)) {
        return -1;
    }
    for (int i = 0; i < msg->nattrs; i++) {
        const char *v = msg->attrs[i].val;
        if (strchr(v, '\n') != NULL || strpbrk(msg->attrs[i].key, " =\n") != NULL ||
            out_put(out, len, &pos, msg->attrs[i].key, strlen(msg->attrs[i].key)) ||
            out_put(out, len, &pos, "=", 1) || out_put(out, len, &pos, v, strlen(v)) ||
            out_put(out, len, &pos, "\n", 1)) {
            return -1;
        }
    }
    if (out_put(out, len, &pos, "endcmd\n", 7)) {
        return -1;
    }
    out[pos] = '\0';
    return (int)pos;
}

int weft_pmi_msg_encode(const weft_pmi_msg_t *msg, char *out, size_t len)
{
    if (msg->wire == 1 && msg->id == WEFT_PMI_MSG_SPAWN) {
        return encode_mcmd(msg, out, len);
    }
    return msg->wire == 2 ? encode_v2(msg, out, len) : encode_v1(msg, out, len);
}

static int parse_len6(const char *buf, size_t *len_p)
{
    size_t v      = 0;
    int    digits = 0;

    for (int i = 0; i < 6; i++) {
        if (isdigit((unsigned char)buf[i])) {
            if (digits < 0) {
                return -1; /* digit after trailing space */
            }
            v = v * 10 + (size_t)(buf[i] - '0');
            digits++;
        } else if (buf[i] == ' ') {
            if (digits > 0) {
                digits = -1; /* left-aligned form: only spaces may follow */
            }
        } else {
            return -1;
        }
    }
    if (digits == 0) {
        return -1;
    }
    *len_p = v;
    return 0;
}

int weft_pmi_frame(const char *buf, size_t avail, int wire, size_t *frame_len_p)
{
    if (wire == 1 && avail >= 5 && memcmp(buf, "mcmd=", 5) == 0) {
        const char *end = memmem(buf, avail, "\nendcmd\n", 8);
        if (end == NULL) {
            return avail >= WEFT_PMI_WIRE_MAX ? -1 : 0;
        }
        *frame_len_p = (size_t)(end - buf) + 8;
        return 1;
    }
    if (wire == 1) {
        const char *nl = memchr(buf, '\n', avail);
        if (nl == NULL) {
            return avail >= WEFT_PMI_WIRE_MAX ? -1 : 0;
        }
        *frame_len_p = (size_t)(nl - buf) + 1;
        return 1;
    } else {
        size_t body;
        if (avail < 6) {
            return 0;
        }
        if (parse_len6(buf, &body) != 0 || body + 6 > WEFT_PMI_WIRE_MAX) {
            return -1;
        }
        if (avail < body + 6) {
            return 0;
        }
        *frame_len_p = body + 6;
        return 1;
    }
}

int weft_pmi_wire_detect(const char *buf, size_t avail)
{
    static const char v1[] = "cmd=";
    size_t            n    = avail < 4 ? avail : 4;

    if (avail == 0) {
        return 0;
    }
    if (buf[0] == 'm') { /* "mcmd=": PMI-1 spawn */
        return avail < 5 ? 0 : memcmp(buf, "mcmd=", 5) == 0 ? 1 : -1;
    }
    if (memcmp(buf, v1, n) == 0) {
        return n == 4 ? 1 : 0;
    }
    if (buf[0] == ' ' || isdigit((unsigned char)buf[0])) {
        size_t len;
        if (avail < 6) {
            return 0;
        }
        return parse_len6(buf, &len) == 0 ? 2 : -1;
    }
    return -1;
}

static weft_pmi_msg_id_t msg_lookup(const char *cmd, int wire, weft_pmi_dir_t dir)
{
    for (int id = WEFT_PMI_MSG_UNKNOWN + 1; id < WEFT_PMI_MSG_COUNT; id++) {
        if (pmi_msg_descs[id].wire == wire && pmi_msg_descs[id].dir == dir &&
            strcmp(pmi_msg_descs[id].name, cmd) == 0) {
            return (weft_pmi_msg_id_t)id;
        }
    }
    /* The version handshake is wire 1 even on a PMI-2 connection. */
    if (wire == 2) {
        return msg_lookup(cmd, 1, dir) == WEFT_PMI_MSG_INIT ? WEFT_PMI_MSG_INIT
                                                             : WEFT_PMI_MSG_UNKNOWN;
    }
    return WEFT_PMI_MSG_UNKNOWN;
}

/* Check the required keys listed in the table. */
static int msg_check_keys(const weft_pmi_msg_t *msg, char *err, size_t errlen)
{
    const char *p = pmi_msg_descs[msg->id].keys;

    while (*p != '\0') {
        size_t n = strcspn(p, " ");
        char   key[64];

        if (n > 0 && n < sizeof(key)) {
            memcpy(key, p, n);
            key[n] = '\0';
            if (weft_pmi_msg_get(msg, key) == NULL) {
                snprintf(err, errlen, "PMI message '%s' lacks required attribute '%s'", msg->cmd,
                         key);
                return -1;
            }
        }
        p += n;
        while (*p == ' ') {
            p++;
        }
    }
    return 0;
}

static int decode_attr(weft_pmi_msg_t *msg, const char *tok, size_t n, char *err, size_t errlen)
{
    const char *eq = memchr(tok, '=', n);
    const char *k, *v;

    if (eq == NULL || eq == tok) {
        snprintf(err, errlen, "malformed PMI attribute '%.*s'", (int)(n > 64 ? 64 : n), tok);
        return -1;
    }
    k = msg_store(msg, tok, (size_t)(eq - tok));
    v = k ? msg_store(msg, eq + 1, n - (size_t)(eq - tok) - 1) : NULL;
    if (v == NULL) {
        snprintf(err, errlen, "PMI message too large");
        return -1;
    }
    if ((strcmp(k, "cmd") == 0 || strcmp(k, "mcmd") == 0) && msg->cmd == NULL) {
        msg->cmd = v;
        return 0;
    }
    if (msg->nattrs == WEFT_PMI_MAX_ATTRS) {
        snprintf(err, errlen, "PMI message has too many attributes");
        return -1;
    }
    msg->attrs[msg->nattrs].key = k;
    msg->attrs[msg->nattrs].val = v;
    msg->nattrs++;
    return 0;
}

static int decode_v1(const char *p, size_t len, weft_pmi_msg_t *msg, char *err, size_t errlen)
{
    const char *end = p + len;

    while (end > p && (end[-1] == '\n' || end[-1] == '\r')) {
        end--;
    }
    while (p < end) {
        const char *tok;
        while (p < end && *p == ' ') {
            p++;
        }
        tok = p;
        if ((size_t)(end - p) > 8 && memcmp(p, "message=", 8) == 0) {
            p = end; /* the tail attribute keeps its spaces */
        }
        while (p < end && *p != ' ') {
            p++;
        }
        if (p > tok && decode_attr(msg, tok, (size_t)(p - tok), err, errlen) != 0) {
            return -1;
        }
    }
    return 0;
}

/* "mcmd=NAME\nkey=value\n...endcmd\n": values keep their spaces. */
static int decode_mcmd(const char *p, size_t len, weft_pmi_msg_t *msg, char *err, size_t errlen)
{
    const char *end = p + len;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t      n  = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n > 0 && !(n == 6 && memcmp(p, "endcmd", 6) == 0) &&
            decode_attr(msg, p, n, err, errlen) != 0) {
            return -1;
        }
        p += n + 1;
    }
    return 0;
}

static int decode_v2(const char *p, size_t len, weft_pmi_msg_t *msg, char *err, size_t errlen)
{
    const char *end = p + len;
    char        tok[WEFT_PMI_WIRE_MAX];

    while (p < end) {
        size_t n = 0;
        /* A pair ends at a ';' that is not doubled. */
        while (p < end) {
            if (*p == ';') {
                if (p + 1 < end && p[1] == ';') {
                    tok[n++] = ';';
                    p += 2;
                    continue;
                }
                p++;
                break;
            }
            tok[n++] = *p++;
        }
        if (n > 0 && decode_attr(msg, tok, n, err, errlen) != 0) {
            return -1;
        }
    }
    return 0;
}

int weft_pmi_msg_decode(const char *frame, size_t len, int wire, weft_pmi_dir_t dir,
                        weft_pmi_msg_t *msg, char *err, size_t errlen)
{
    int rc;

    msg->id     = WEFT_PMI_MSG_NONE;
    msg->wire   = wire;
    msg->cmd    = NULL;
    msg->nattrs = 0;
    msg->used   = 0;
    if (wire == 2 && len >= 6 && frame[0] != 'c') {
        rc = decode_v2(frame + 6, len - 6, msg, err, errlen);
    } else if (wire == 1 && len >= 5 && memcmp(frame, "mcmd=", 5) == 0) {
        rc = decode_mcmd(frame, len, msg, err, errlen);
    } else if (wire == 2) {
        /* The PMI-1 style handshake line on a PMI-2 connection. */
        rc = decode_v1(frame, len, msg, err, errlen);
    } else {
        rc = decode_v1(frame, len, msg, err, errlen);
    }
    if (rc != 0) {
        return -1;
    }
    if (msg->cmd == NULL) {
        snprintf(err, errlen, "PMI message without cmd=");
        return -1;
    }
    msg->id = msg_lookup(msg->cmd, wire, dir);
    if (msg->id == WEFT_PMI_MSG_UNKNOWN) {
        return 0;
    }
    return msg_check_keys(msg, err, errlen);
}
