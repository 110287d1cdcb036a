/* auth: secrets files, HMAC-SHA256 through OpenSSL's libcrypto, the client's answer. */
#include "auth.h"

#include "ctl.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char auth_label[] = "netrig-auth-v1";

void auth_hex(const uint8_t *bytes, size_t n, char *hex)
{
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
}

int auth_unhex(const char *hex, uint8_t *bytes, size_t n)
{
    if (strlen(hex) != 2 * n)
        return -EINVAL;
    for (size_t i = 0; i < 2 * n; i++)
        if (!isxdigit((unsigned char)hex[i]))
            return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        bytes[i] = (uint8_t)v;
    }
    return 0;
}

/* Secrets files must be private: one line naming the file, its mode and the fix. */
static int check_private(const char *path, FILE *f, char *err, size_t errlen)
{
    struct stat st;

    if (fstat(fileno(f), &st)) {
        snprintf(err, errlen, "cannot stat '%s': %s", path, strerror(errno));
        return -errno;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen,
                 "secrets file '%s' is readable by others (mode %04o): run "
                 "chmod 600 '%s'",
                 path, (unsigned)(st.st_mode & 07777), path);
        return -EPERM;
    }
    return 0;
}

/* Splits "user secret" (or "user:secret"); returns 0 for a usable line, 1 to skip. */
static int split_line(char *line, char **user, char **secret)
{
    char *p = line, *end;

    while (isspace((unsigned char)*p))
        p++;
    if (!*p || *p == '#')
        return 1;
    end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1]))
        *--end = '\0';
    *user = p;
    p += strcspn(p, " \t:");
    if (!*p)
        return -EINVAL;
    *p++ = '\0';
    while (*p == ' ' || *p == '\t' || *p == ':')
        p++;
    *secret = p;
    return **secret ? 0 : -EINVAL;
}

int auth_load(const char *path, struct auth *a, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int rc = 0, lineno = 0;

    memset(a, 0, sizeof(*a));
    if (!f) {
        snprintf(err, errlen, "cannot read auth file '%s': %s", path, strerror(errno));
        return -errno;
    }
    rc = check_private(path, f, err, errlen);
    while (!rc && fgets(line, sizeof(line), f)) {
        char *user, *secret;
        int s = split_line(line, &user, &secret);
        lineno++;
        if (s > 0)
            continue;
        if (s < 0 || strlen(user) >= AUTH_NAME_MAX || strlen(secret) >= AUTH_SECRET_MAX) {
            snprintf(err, errlen, "%s:%d: expected 'user secret' (name < %d, secret < %d bytes)",
                     path, lineno, AUTH_NAME_MAX, AUTH_SECRET_MAX);
            rc = -EINVAL;
        } else if (a->n >= AUTH_MAX_USERS) {
            snprintf(err, errlen, "%s: more than %d users", path, AUTH_MAX_USERS);
            rc = -ENOSPC;
        } else {
            snprintf(a->users[a->n].name, AUTH_NAME_MAX, "%s", user);
            snprintf(a->users[a->n].secret, AUTH_SECRET_MAX, "%s", secret);
            a->n++;
        }
    }
    fclose(f);
    if (!rc && a->n == 0) {
        snprintf(err, errlen, "auth file '%s' names no user: add lines 'user secret'", path);
        rc = -EINVAL;
    }
    return rc;
}

int auth_mac(const char *secret, const char *user, const uint8_t nonce[AUTH_NONCE_LEN],
             char hex[AUTH_MAC_HEX])
{
    uint8_t msg[sizeof(auth_label) + AUTH_NAME_MAX + AUTH_NONCE_LEN], mac[EVP_MAX_MD_SIZE];
    size_t ulen = strlen(user), mlen = 0;
    unsigned int maclen = 0;

    if (ulen >= AUTH_NAME_MAX)
        return -EINVAL;
    memcpy(msg, auth_label, sizeof(auth_label)); /* with its NUL as a separator */
    mlen = sizeof(auth_label);
    memcpy(msg + mlen, user, ulen + 1);
    mlen += ulen + 1;
    memcpy(msg + mlen, nonce, AUTH_NONCE_LEN);
    mlen += AUTH_NONCE_LEN;
    if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), msg, mlen, mac, &maclen) || maclen != 32)
        return -EIO;
    auth_hex(mac, 32, hex);
    return 0;
}

bool auth_verify(const struct auth *a, const char *user, const uint8_t nonce[AUTH_NONCE_LEN],
                 const char *mac_hex)
{
    /* an unknown user is checked against a dummy secret, so timing does not tell */
    const char *secret = "netrig: no such user, compared anyway";
    char expect[AUTH_MAC_HEX];
    bool known = false;

    for (uint32_t i = 0; i < a->n; i++) {
        if (!strcmp(a->users[i].name, user)) {
            secret = a->users[i].secret;
            known = true;
        }
    }
    if (strlen(mac_hex) != AUTH_MAC_HEX - 1 || auth_mac(secret, user, nonce, expect))
        return false;
    return CRYPTO_memcmp(expect, mac_hex, AUTH_MAC_HEX - 1) == 0 && known;
}

int auth_client_secret(const char *cred_file, const char *user, char *secret, size_t len, char *err,
                       size_t errlen)
{
    const char *env = getenv("NETRIG_SECRET");
    struct auth a;
    int rc;

    /* an explicit --credentials file wins over the environment */
    if (!cred_file && env && *env) {
        snprintf(secret, len, "%s", env);
        return 0;
    }
    if (!cred_file) {
        snprintf(err, errlen,
                 "--user '%s' needs a secret: set NETRIG_SECRET or give "
                 "--credentials FILE",
                 user);
        return -EINVAL;
    }
    rc = auth_load(cred_file, &a, err, errlen);
    for (uint32_t i = 0; !rc && i < a.n; i++) {
        if (!strcmp(a.users[i].name, user)) {
            snprintf(secret, len, "%s", a.users[i].secret);
            OPENSSL_cleanse(&a, sizeof(a));
            return 0;
        }
    }
    OPENSSL_cleanse(&a, sizeof(a));
    if (!rc) {
        snprintf(err, errlen, "credentials file '%s' has no line for user '%s'", cred_file, user);
        rc = -ENOENT;
    }
    return rc;
}

int auth_answer_challenge(int ctl, const cJSON *challenge, const char *user, const char *secret,
                          int timeout_ms, char *err, size_t errlen)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(challenge, "nonce");
    uint8_t nonce[AUTH_NONCE_LEN];
    char mac[AUTH_MAC_HEX];
    cJSON *m;
    int rc;

    if (!user || !*user || !secret) {
        snprintf(err, errlen,
                 "the server requires authentication: use --user NAME with "
                 "NETRIG_SECRET or --credentials FILE");
        return -EACCES;
    }
    if (!cJSON_IsString(n) || auth_unhex(n->valuestring, nonce, sizeof(nonce)) ||
        auth_mac(secret, user, nonce, mac)) {
        snprintf(err, errlen, "server sent an invalid authentication challenge");
        return -EPROTO;
    }
    m = ctl_msg_new("auth");
    cJSON_AddStringToObject(m, "user", user);
    cJSON_AddStringToObject(m, "mac", mac);
    rc = ctl_send(ctl, m, timeout_ms);
    cJSON_Delete(m);
    OPENSSL_cleanse(mac, sizeof(mac));
    if (rc)
        snprintf(err, errlen, "cannot send the authentication answer: %s", strerror(-rc));
    return rc;
}
