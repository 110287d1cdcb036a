/* Unit tests for the daemon's access control: acl.c (CIDR lists), auth.c (secrets files,
 * HMAC, the client's answer) and policy.c's challenge, both ends over a socketpair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "auth.h"
#include "ctl.h"
#include "policy.h"

static struct sockaddr_storage v4(const char *a)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *s = (struct sockaddr_in *)&ss;

    s->sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
    return ss;
}

static struct sockaddr_storage v6(const char *a)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

    s->sin6_family = AF_INET6;
    assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
    return ss;
}

static int permits(const struct acl *a, struct sockaddr_storage ss)
{
    return acl_permits(a, (struct sockaddr *)&ss);
}

static void test_acl_parse(void **state)
{
    struct acl_entry e;

    (void)state;
    assert_int_equal(acl_parse("10.0.0.0/8", &e), 0);
    assert_int_equal(e.family, AF_INET);
    assert_int_equal(e.prefix, 8);
    assert_int_equal(acl_parse("192.0.2.7", &e), 0);
    assert_int_equal(e.prefix, 32);
    assert_int_equal(acl_parse("2001:db8::/32", &e), 0);
    assert_int_equal(e.family, AF_INET6);
    assert_int_equal(e.prefix, 32);
    assert_int_equal(acl_parse("::1", &e), 0);
    assert_int_equal(e.prefix, 128);
    assert_int_equal(acl_parse("10.0.0.0/33", &e), -EINVAL);
    assert_int_equal(acl_parse("10.0.0.0/", &e), -EINVAL);
    assert_int_equal(acl_parse("10.0.0.0/-1", &e), -EINVAL);
    assert_int_equal(acl_parse("10.0.0.0/8x", &e), -EINVAL);
    assert_int_equal(acl_parse("10.0.0", &e), -EINVAL);
    assert_int_equal(acl_parse("host.example", &e), -EINVAL);
    assert_int_equal(acl_parse("", &e), -EINVAL);
    assert_int_equal(acl_parse("2001:db8::/129", &e), -EINVAL);
}

static void test_acl_empty_permits_all(void **state)
{
    struct acl a = {0};

    (void)state;
    assert_true(permits(&a, v4("203.0.113.9")));
    assert_true(permits(&a, v6("2001:db8::1")));
}

static void test_acl_allow_and_deny(void **state)
{
    struct acl a = {0};

    (void)state;
    assert_int_equal(acl_add(&a, "10.0.0.0/8", false), 0);
    assert_int_equal(acl_add(&a, "2001:db8::/32", false), 0);
    assert_int_equal(acl_add(&a, "10.9.0.0/16", true), 0);
    assert_true(permits(&a, v4("10.1.2.3")));
    assert_false(permits(&a, v4("10.9.1.1"))); /* deny wins over allow */
    assert_false(permits(&a, v4("11.0.0.1"))); /* not in any allow */
    assert_true(permits(&a, v6("2001:db8:ffff::1")));
    assert_false(permits(&a, v6("2001:db9::1")));
    /* an IPv4 peer seen through a dual-stack socket */
    assert_true(permits(&a, v6("::ffff:10.1.2.3")));
    assert_false(permits(&a, v6("::ffff:10.9.0.1")));
}

static void test_acl_odd_prefixes(void **state)
{
    struct acl a = {0};

    (void)state;
    assert_int_equal(acl_add(&a, "192.168.4.0/22", false), 0);
    assert_true(permits(&a, v4("192.168.7.255")));
    assert_false(permits(&a, v4("192.168.8.0")));
    assert_false(permits(&a, v4("192.168.3.255")));
    assert_int_equal(acl_add(&a, "0.0.0.0/0", true), 0);
    assert_false(permits(&a, v4("192.168.5.5")));
}

static void test_acl_full(void **state)
{
    struct acl a = {0};

    (void)state;
    for (int i = 0; i < ACL_MAX; i++)
        assert_int_equal(acl_add(&a, "10.0.0.1", true), 0);
    assert_int_equal(acl_add(&a, "10.0.0.1", true), -ENOSPC);
    assert_int_equal(acl_add(&a, "nonsense", false), -EINVAL);
}

static char *write_file(const char *text, mode_t mode)
{
    char *path = strdup("/tmp/netrig-auth-XXXXXX");
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    fchmod(fd, mode);
    close(fd);
    return path;
}

static void test_auth_load(void **state)
{
    struct auth a;
    char err[512];
    char *p = write_file("# users\nalice s3cret\n\n  bob:other secret  \n", 0600);

    (void)state;
    assert_int_equal(auth_load(p, &a, err, sizeof(err)), 0);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.users[0].name, "alice");
    assert_string_equal(a.users[0].secret, "s3cret");
    assert_string_equal(a.users[1].name, "bob");
    assert_string_equal(a.users[1].secret, "other secret");
    unlink(p);
    free(p);
}

static void test_auth_refuses_open_file(void **state)
{
    struct auth a;
    char err[512];
    char *p = write_file("alice s3cret\n", 0644);

    (void)state;
    assert_int_equal(auth_load(p, &a, err, sizeof(err)), -EPERM);
    assert_non_null(strstr(err, "chmod 600"));
    assert_non_null(strstr(err, "0644"));
    unlink(p);
    free(p);
}

static void test_auth_bad_lines(void **state)
{
    struct auth a;
    char err[512];
    char *p = write_file("alice\n", 0600);
    char *q = write_file("# nobody\n\n", 0600);

    (void)state;
    assert_int_equal(auth_load(p, &a, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, ":1:"));
    assert_int_equal(auth_load(q, &a, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "names no user"));
    assert_int_not_equal(auth_load("/nonexistent/auth", &a, err, sizeof(err)), 0);
    unlink(p);
    unlink(q);
    free(p);
    free(q);
}

/* The MAC is HMAC-SHA256(secret, "netrig-auth-v1" NUL user NUL nonce) as docs/security.md
 * says; the expected value was computed independently (Python's hmac module). */
static void test_auth_mac_and_verify(void **state)
{
    struct auth a = {.n = 1};
    uint8_t nonce[AUTH_NONCE_LEN], other[AUTH_NONCE_LEN];
    char mac[AUTH_MAC_HEX], mac2[AUTH_MAC_HEX];

    (void)state;
    snprintf(a.users[0].name, sizeof(a.users[0].name), "alice");
    snprintf(a.users[0].secret, sizeof(a.users[0].secret), "s3cret");
    for (int i = 0; i < AUTH_NONCE_LEN; i++) {
        nonce[i] = (uint8_t)i;
        other[i] = (uint8_t)(i + 1);
    }
    assert_int_equal(auth_mac("s3cret", "alice", nonce, mac), 0);
    assert_string_equal(mac, "f37b13a9d39a874a750fcbbf9fab89a5ca2d725cef7cc5d3e4a16cb29125d5e9");
    assert_int_equal(auth_mac("s3cret", "alice", nonce, mac2), 0);
    assert_string_equal(mac, mac2);
    assert_true(auth_verify(&a, "alice", nonce, mac));
    /* wrong secret, other nonce (a replay), other user, unknown user, garbage */
    assert_int_equal(auth_mac("wrong", "alice", nonce, mac2), 0);
    assert_false(auth_verify(&a, "alice", nonce, mac2));
    assert_false(auth_verify(&a, "alice", other, mac));
    assert_int_equal(auth_mac("s3cret", "mallory", nonce, mac2), 0);
    assert_false(auth_verify(&a, "mallory", nonce, mac2));
    assert_false(auth_verify(&a, "alice", nonce, "zz"));
    assert_false(auth_verify(&a, "alice", nonce, ""));
    mac[0] = mac[0] == 'a' ? 'b' : 'a';
    assert_false(auth_verify(&a, "alice", nonce, mac));
}

static void test_auth_client_secret(void **state)
{
    char secret[AUTH_SECRET_MAX], err[512];
    char *p = write_file("alice s3cret\n", 0600);
    char *open_file = write_file("alice s3cret\n", 0640);

    (void)state;
    unsetenv("NETRIG_SECRET");
    assert_int_equal(auth_client_secret(p, "alice", secret, sizeof(secret), err, sizeof(err)), 0);
    assert_string_equal(secret, "s3cret");
    assert_int_equal(auth_client_secret(p, "bob", secret, sizeof(secret), err, sizeof(err)),
                     -ENOENT);
    assert_non_null(strstr(err, "bob"));
    assert_int_equal(
        auth_client_secret(open_file, "alice", secret, sizeof(secret), err, sizeof(err)), -EPERM);
    assert_int_equal(auth_client_secret(NULL, "alice", secret, sizeof(secret), err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "NETRIG_SECRET"));
    setenv("NETRIG_SECRET", "from-env", 1);
    assert_int_equal(auth_client_secret(NULL, "alice", secret, sizeof(secret), err, sizeof(err)),
                     0);
    assert_string_equal(secret, "from-env");
    unsetenv("NETRIG_SECRET");
    unlink(p);
    unlink(open_file);
    free(p);
    free(open_file);
}

static void test_hex(void **state)
{
    uint8_t b[4] = {0x00, 0xab, 0x10, 0xff}, back[4];
    char hex[9];

    (void)state;
    auth_hex(b, 4, hex);
    assert_string_equal(hex, "00ab10ff");
    assert_int_equal(auth_unhex(hex, back, 4), 0);
    assert_memory_equal(b, back, 4);
    assert_int_equal(auth_unhex("00ab10f", back, 4), -EINVAL);
    assert_int_equal(auth_unhex("00ab10fg", back, 4), -EINVAL);
    assert_int_equal(auth_unhex(" 0ab10ff", back, 4), -EINVAL);
}

struct answerer {
    int fd;
    const char *user, *secret;
    int rc;
    char err[256];
};

/* The client's end: reads the challenge and answers it. */
static void *answer_main(void *arg)
{
    struct answerer *c = arg;
    cJSON *m = NULL;

    c->rc = ctl_recv(c->fd, CTL_MAX_RESPONSE, 2000, &m, c->err, sizeof(c->err));
    if (!c->rc)
        c->rc = auth_answer_challenge(c->fd, m, c->user, c->secret, 2000, c->err, sizeof(c->err));
    cJSON_Delete(m);
    return NULL;
}

/* policy_authenticate (server) against auth_answer_challenge (client). */
static int challenge(const struct auth *a, const char *user, const char *secret, struct answerer *c)
{
    char err[256];
    pthread_t th;
    int sv[2], rc;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    *c = (struct answerer){.fd = sv[1], .user = user, .secret = secret};
    assert_int_equal(pthread_create(&th, NULL, answer_main, c), 0);
    rc = policy_authenticate(sv[0], a, "alice", 2000, err, sizeof(err));
    close(sv[0]); /* a client that did not answer sees the end */
    pthread_join(th, NULL);
    close(sv[1]);
    return rc;
}

static void test_challenge_round_trip(void **state)
{
    struct auth a = {.n = 1};
    struct answerer c;
    cJSON *bad = cJSON_Parse("{\"type\":\"challenge\",\"nonce\":\"xyz\"}");
    char err[256];

    (void)state;
    snprintf(a.users[0].name, sizeof(a.users[0].name), "alice");
    snprintf(a.users[0].secret, sizeof(a.users[0].secret), "s3cret");
    assert_int_equal(challenge(&a, "alice", "s3cret", &c), 0);
    assert_int_equal(c.rc, 0);
    assert_int_equal(challenge(&a, "alice", "wrong", &c), -EACCES);
    assert_int_equal(c.rc, 0);
    assert_int_equal(challenge(&a, "bob", "s3cret", &c), -EACCES);
    /* the client refuses to answer without a user or a secret, and a malformed nonce */
    assert_int_equal(auth_answer_challenge(-1, bad, "", "s3cret", 100, err, sizeof(err)), -EACCES);
    assert_int_equal(auth_answer_challenge(-1, bad, "alice", NULL, 100, err, sizeof(err)), -EACCES);
    assert_int_equal(auth_answer_challenge(-1, bad, "alice", "s3cret", 100, err, sizeof(err)),
                     -EPROTO);
    cJSON_Delete(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acl_parse),
        cmocka_unit_test(test_acl_empty_permits_all),
        cmocka_unit_test(test_acl_allow_and_deny),
        cmocka_unit_test(test_acl_odd_prefixes),
        cmocka_unit_test(test_acl_full),
        cmocka_unit_test(test_auth_load),
        cmocka_unit_test(test_auth_refuses_open_file),
        cmocka_unit_test(test_auth_bad_lines),
        cmocka_unit_test(test_auth_mac_and_verify),
        cmocka_unit_test(test_auth_client_secret),
        cmocka_unit_test(test_hex),
        cmocka_unit_test(test_challenge_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
