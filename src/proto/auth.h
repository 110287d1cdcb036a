/* auth: shared-secret challenge-response for the daemon. The server sends a fresh random
 * nonce on each control connection; the client answers HMAC-SHA256(secret, "netrig-auth-v1",
 * user, nonce). No secret crosses the wire, a recorded answer is useless against the next
 * nonce, and the comparison takes constant time whether or not the user exists. */
#ifndef NETRIG_AUTH_H
#define NETRIG_AUTH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_NONCE_LEN  32
#define AUTH_MAC_HEX    65 /* 64 hex digits + NUL */
#define AUTH_MAX_USERS  256
#define AUTH_NAME_MAX   64
#define AUTH_SECRET_MAX 256

struct auth_user {
    char name[AUTH_NAME_MAX];
    char secret[AUTH_SECRET_MAX];
};

struct auth {
    uint32_t n;
    struct auth_user users[AUTH_MAX_USERS];
};

/* Loads "user secret" lines ('#' comments, blank lines). The file must not be readable by
 * group or others. */
int auth_load(const char *path, struct auth *a, char *err, size_t errlen);
/* hex HMAC over (user, nonce) with secret. */
int auth_mac(const char *secret, const char *user, const uint8_t nonce[AUTH_NONCE_LEN],
             char hex[AUTH_MAC_HEX]);
bool auth_verify(const struct auth *a, const char *user, const uint8_t nonce[AUTH_NONCE_LEN],
                 const char *mac_hex);
/* The client's secret: $NETRIG_SECRET, else the user's line in cred_file (mode 0600 or
 * stricter). */
int auth_client_secret(const char *cred_file, const char *user, char *secret, size_t len, char *err,
                       size_t errlen);
/* The client's answer to a "challenge" message on ctl: an "auth" message with user and the
 * MAC of the challenge's nonce under secret. 0, or -EACCES (no user or secret), -EPROTO (a bad
 * challenge) or -errno, with err filled. (The server's side is daemon/policy.) */
int auth_answer_challenge(int ctl, const cJSON *challenge, const char *user, const char *secret,
                          int timeout_ms, char *err, size_t errlen);
void auth_hex(const uint8_t *bytes, size_t n, char *hex);
int auth_unhex(const char *hex, uint8_t *bytes, size_t n);

#endif
