/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Job secret and the challenge/response every TCP connection between
 * mpiexec and a weft-proxy goes through before any control message:
 *   listener -> connector  "WEFTS1\0\0" + nonce_s                 (40 bytes)
 *   connector -> listener  "WEFTP1\0\0" + index + nonce_c + mac_c (76 bytes)
 *   listener -> connector  mac_s                                  (32 bytes)
 * mac_c = HMAC-SHA256(secret, "proxy"  | nonce_s | nonce_c | index)
 * mac_s = HMAC-SHA256(secret, "server" | nonce_c | nonce_s | index)
 * Both sides prove they hold the secret without sending it; fresh nonces on
 * both sides defeat replay. index (big endian) says which proxy connects.
 * The secret travels to a remote proxy on its launcher command's stdin only.
 */
#ifndef WEFT_LAUNCHER_AUTH_H
#define WEFT_LAUNCHER_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_AUTH_SECRET_LEN 32
#define WEFT_AUTH_NONCE_LEN  32
#define WEFT_AUTH_MAC_LEN    32
#define WEFT_AUTH_HELLO_LEN  (8 + WEFT_AUTH_NONCE_LEN)
#define WEFT_AUTH_REPLY_LEN  (8 + 4 + WEFT_AUTH_NONCE_LEN + WEFT_AUTH_MAC_LEN)

typedef struct {
    uint8_t key[WEFT_AUTH_SECRET_LEN];
} weft_secret_t;

/* Open libcrypto (once; weft_listener_open and weft_auth_connect call it).
 * 0, or -1 with err naming the library. */
int weft_auth_load(char *err, size_t errlen);

/* Fresh random secret. 0, or -1 when the kernel has no randomness for us. */
int weft_secret_new(weft_secret_t *s);
/* Hex text (2*LEN+1 bytes) and back. from_hex: 0, or -1 on malformed text. */
void weft_secret_to_hex(const weft_secret_t *s, char *out);
int  weft_secret_from_hex(const char *text, weft_secret_t *s);

/* Listener side. hello: WEFT_AUTH_HELLO_LEN bytes to send; nonce_s kept. */
int weft_auth_hello(uint8_t nonce_s[WEFT_AUTH_NONCE_LEN], uint8_t hello[WEFT_AUTH_HELLO_LEN]);
/* Check the connector's reply; on success set *index_p and fill mac_s (to
 * send back). 0, or -1 when the reply does not prove the secret. */
int weft_auth_check(const weft_secret_t *s, const uint8_t nonce_s[WEFT_AUTH_NONCE_LEN],
                    const uint8_t reply[WEFT_AUTH_REPLY_LEN], uint32_t *index_p,
                    uint8_t mac_s[WEFT_AUTH_MAC_LEN]);

/* Connector side, blocking with a deadline: connect to host:port, answer the
 * challenge as proxy number index, verify the listener. Returns the
 * connected fd, or -1 with err set. */
int weft_auth_connect(const char *host, int port, const weft_secret_t *s, uint32_t index,
                      int timeout_ms, char *err, size_t errlen);

#endif
