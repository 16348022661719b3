/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * libcrypto (HMAC-SHA256) is opened at the first listener or connection that
 * needs it, not linked: a job on one host never authenticates anything, and
 * loading libcrypto at every mpirun start cost about 0.5-1 ms (its dynamic
 * linking; measured against a bare program on the 2-core VM).
 */
#include "auth.h"

#include "buf.h"

#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <openssl/opensslv.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* The soname of the libcrypto we were compiled against. */
#define AUTH_STR_(x) #x
#define AUTH_STR(x)  AUTH_STR_(x)
#if defined(OPENSSL_SHLIB_VERSION)
#define AUTH_LIBCRYPTO "libcrypto.so." AUTH_STR(OPENSSL_SHLIB_VERSION)
#elif defined(SHLIB_VERSION_NUMBER)
#define AUTH_LIBCRYPTO "libcrypto.so." SHLIB_VERSION_NUMBER
#else
#define AUTH_LIBCRYPTO "libcrypto.so"
#endif

static struct {
    __typeof__(&HMAC)       hmac;
    __typeof__(&EVP_sha256) sha256;
} auth_crypto;

int weft_auth_load(char *err, size_t errlen)
{
    void *lib;

    if (auth_crypto.hmac != NULL) {
        return 0;
    }
    lib = dlopen(AUTH_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(err, errlen, "cannot load %s for the job secret's HMAC: %s", AUTH_LIBCRYPTO,
                 dlerror());
        return -1;
    }
    auth_crypto.sha256 = (__typeof__(&EVP_sha256))dlsym(lib, "EVP_sha256");
    auth_crypto.hmac   = (__typeof__(&HMAC))dlsym(lib, "HMAC");
    if (auth_crypto.hmac == NULL || auth_crypto.sha256 == NULL) {
        snprintf(err, errlen, "%s has no HMAC or EVP_sha256", AUTH_LIBCRYPTO);
        auth_crypto.hmac = NULL;
        dlclose(lib);
        return -1;
    }
    return 0; /* kept open for the life of the process */
}

/* Equal, in time that does not depend on where they differ. */
static int auth_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    volatile uint8_t diff = 0;

    for (size_t i = 0; i < n; i++) {
        diff |= a[i] ^ b[i];
    }
    return diff == 0;
}

static const char auth_magic_s[8] = "WEFTS1";
static const char auth_magic_p[8] = "WEFTP1";

static int auth_random(void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = getrandom((char *)buf + got, len - got, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

int weft_secret_new(weft_secret_t *s)
{
    return auth_random(s->key, sizeof(s->key));
}

void weft_secret_to_hex(const weft_secret_t *s, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < sizeof(s->key); i++) {
        out[2 * i]     = digits[s->key[i] >> 4];
        out[2 * i + 1] = digits[s->key[i] & 15];
    }
    out[2 * sizeof(s->key)] = '\0';
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int weft_secret_from_hex(const char *text, weft_secret_t *s)
{
    for (size_t i = 0; i < sizeof(s->key); i++) {
        int hi = hex_digit(text[2 * i]), lo = hi < 0 ? -1 : hex_digit(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return -1;
        }
        s->key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* HMAC-SHA256(secret, label | a | b | index). */
static void auth_mac(const weft_secret_t *s, const char *label, const uint8_t *a, const uint8_t *b,
                     uint32_t index, uint8_t mac[WEFT_AUTH_MAC_LEN])
{
    uint8_t      msg[16 + 2 * WEFT_AUTH_NONCE_LEN + 4];
    size_t       n = strlen(label);
    unsigned int maclen = WEFT_AUTH_MAC_LEN;

    memcpy(msg, label, n);
    memcpy(msg + n, a, WEFT_AUTH_NONCE_LEN);
    memcpy(msg + n + WEFT_AUTH_NONCE_LEN, b, WEFT_AUTH_NONCE_LEN);
    n += 2 * WEFT_AUTH_NONCE_LEN;
    msg[n++] = (uint8_t)(index >> 24);
    msg[n++] = (uint8_t)(index >> 16);
    msg[n++] = (uint8_t)(index >> 8);
    msg[n++] = (uint8_t)index;
    if (auth_crypto.hmac == NULL ||
        auth_crypto.hmac(auth_crypto.sha256(), s->key, sizeof(s->key), msg, n, mac, &maclen) ==
            NULL) {
        memset(mac, 0, WEFT_AUTH_MAC_LEN); /* never matches a real MAC's check below */
    }
}

int weft_auth_hello(uint8_t nonce_s[WEFT_AUTH_NONCE_LEN], uint8_t hello[WEFT_AUTH_HELLO_LEN])
{
    if (auth_random(nonce_s, WEFT_AUTH_NONCE_LEN) != 0) {
        return -1;
    }
    memcpy(hello, auth_magic_s, 8);
    memcpy(hello + 8, nonce_s, WEFT_AUTH_NONCE_LEN);
    return 0;
}

int weft_auth_check(const weft_secret_t *s, const uint8_t nonce_s[WEFT_AUTH_NONCE_LEN],
                    const uint8_t reply[WEFT_AUTH_REPLY_LEN], uint32_t *index_p,
                    uint8_t mac_s[WEFT_AUTH_MAC_LEN])
{
    const uint8_t *nonce_c = reply + 12;
    uint8_t        expect[WEFT_AUTH_MAC_LEN];
    uint32_t       index;

    if (memcmp(reply, auth_magic_p, 8) != 0) {
        return -1;
    }
    index = (uint32_t)reply[8] << 24 | (uint32_t)reply[9] << 16 | (uint32_t)reply[10] << 8 |
            reply[11];
    auth_mac(s, "proxy", nonce_s, nonce_c, index, expect);
    if (auth_crypto.hmac == NULL ||
        !auth_equal(expect, reply + 12 + WEFT_AUTH_NONCE_LEN, WEFT_AUTH_MAC_LEN)) {
        return -1;
    }
    auth_mac(s, "server", nonce_c, nonce_s, index, mac_s);
    *index_p = index;
    return 0;
}

/* Read or write exactly len bytes before the deadline. 0, or -1. */
static int auth_io(int fd, void *buf, size_t len, int writing, long long deadline)
{
    size_t done = 0;

    while (done < len) {
        struct pollfd pfd  = {.fd = fd, .events = writing ? POLLOUT : POLLIN};
        long long     left = deadline - weft_now_ms();
        ssize_t       n;

        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR) {
            return -1;
        }
        n = writing ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                    : recv(fd, (char *)buf + done, len - done, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
            continue;
        }
        if (n <= 0) {
            if (n == 0) {
                errno = ECONNRESET;
            }
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static int auth_tcp_connect(const char *host, int port, long long deadline, char *err,
                            size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    char            service[16];
    int             rc, fd = -1, last = 0;

    snprintf(service, sizeof(service), "%d", port);
    rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            last = errno;
            close(fd);
            fd = -1;
            continue;
        }
        struct pollfd pfd  = {.fd = fd, .events = POLLOUT};
        long long     left = deadline - weft_now_ms();
        int           soerr = 0;
        socklen_t     sl    = sizeof(soerr);
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
            last = ETIMEDOUT;
        } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
            last = soerr ? soerr : errno;
        } else {
            (void)weft_fd_set_nodelay(fd);
            break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port, strerror(last));
    }
    return fd;
}

int weft_auth_connect(const char *host, int port, const weft_secret_t *s, uint32_t index,
                      int timeout_ms, char *err, size_t errlen)
{
    long long deadline = weft_now_ms() + timeout_ms;
    uint8_t   hello[WEFT_AUTH_HELLO_LEN], reply[WEFT_AUTH_REPLY_LEN];
    uint8_t   mac_s[WEFT_AUTH_MAC_LEN], expect[WEFT_AUTH_MAC_LEN];
    uint8_t  *nonce_c = reply + 12;
    int       fd;

    if (weft_auth_load(err, errlen) != 0) {
        return -1;
    }
    fd = auth_tcp_connect(host, port, deadline, err, errlen);
    if (fd < 0) {
        return -1;
    }
    if (auth_io(fd, hello, sizeof(hello), 0, deadline) != 0 ||
        memcmp(hello, auth_magic_s, 8) != 0) {
        snprintf(err, errlen, "%s:%d did not greet as mpiexec", host, port);
        goto fail;
    }
    memcpy(reply, auth_magic_p, 8);
    reply[8]  = (uint8_t)(index >> 24);
    reply[9]  = (uint8_t)(index >> 16);
    reply[10] = (uint8_t)(index >> 8);
    reply[11] = (uint8_t)index;
    if (auth_random(nonce_c, WEFT_AUTH_NONCE_LEN) != 0) {
        snprintf(err, errlen, "no randomness for the challenge");
        goto fail;
    }
    auth_mac(s, "proxy", hello + 8, nonce_c, index, reply + 12 + WEFT_AUTH_NONCE_LEN);
    if (auth_io(fd, reply, sizeof(reply), 1, deadline) != 0 ||
        auth_io(fd, mac_s, sizeof(mac_s), 0, deadline) != 0) {
        snprintf(err, errlen, "%s:%d refused our job secret", host, port);
        goto fail;
    }
    auth_mac(s, "server", nonce_c, hello + 8, index, expect);
    if (!auth_equal(expect, mac_s, sizeof(expect))) {
        snprintf(err, errlen, "%s:%d does not know the job secret", host, port);
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return -1;
}
