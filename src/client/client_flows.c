/* client_flows: the client's data connections for a netrig server, as its accept message
 * names them. */
#include "client_flows.h"

#include "dataconn.h"
#include "test_kind.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int open_tcp_flows(const struct client_opts *o, const struct sock_addr *to,
                          const uint8_t id[CTL_TEST_ID_LEN], const cJSON *accept, int ctl,
                          struct engine *e, char *err, size_t errlen);

/* A port number the server named in its accept message. */
static int port_from(const cJSON *v, uint16_t *port)
{
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65535)
        return -EPROTO;
    *port = (uint16_t)v->valuedouble;
    return 0;
}

/* UDP: one socket per flow to the port the server opened for it; hellos until "ready". */
static int open_udp_flows(const struct client_opts *o, const struct sock_addr *to,
                          const uint8_t id[CTL_TEST_ID_LEN], const cJSON *accept, int ctl,
                          struct engine *e, char *err, size_t errlen)
{
    const cJSON *ports = cJSON_GetObjectItemCaseSensitive(accept, "udp_ports");
    uint32_t n = params_total_flows(&o->p);
    int waited = 0, rc;
    int *fds = calloc(n, sizeof(*fds));

    if (!fds)
        return -ENOMEM;
    if (!cJSON_IsArray(ports) || (uint32_t)cJSON_GetArraySize(ports) != n) {
        snprintf(err, errlen, "server's accept message lacks one UDP port per flow");
        free(fds);
        return -EPROTO;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint16_t port;
        if (port_from(cJSON_GetArrayItem(ports, (int)i), &port)) {
            snprintf(err, errlen, "server named an invalid UDP port for flow %u", i);
            rc = -EPROTO;
            goto out;
        }
        struct sock_local local = client_local(o, (int)i);

        fds[i] = dataconn_udp_connect(to, port, &local, &o->p, i, err, errlen);
        if (fds[i] < 0 || (rc = engine_attach(e, i, fds[i], err, errlen))) {
            rc = fds[i] < 0 ? fds[i] : rc;
            if (fds[i] >= 0)
                close(fds[i]);
            goto out;
        }
    }
    /* datagrams may be lost: say hello every 100 ms until the server is ready */
    for (;;) {
        struct pollfd pf = {.fd = ctl, .events = POLLIN};
        for (uint32_t i = 0; i < n; i++)
            dataconn_udp_hello(fds[i], id, i);
        if (poll(&pf, 1, 100) > 0) {
            rc = 0;
            break;
        }
        waited += 100;
        if (waited >= o->timeout_ms) {
            snprintf(err, errlen,
                     "server did not confirm the UDP flows within %d ms "
                     "(is UDP blocked on the path?)",
                     o->timeout_ms);
            rc = -ETIMEDOUT;
            break;
        }
    }
out:
    free(fds);
    return rc;
}

/* crr: every flow connects itself, once per transaction, to the server's crr port. */
static int target_crr(const struct client_opts *o, const struct sock_addr *to,
                      const uint8_t id[CTL_TEST_ID_LEN], const cJSON *accept, int ctl,
                      struct engine *e, char *err, size_t errlen)
{
    struct sock_addr t = *to;
    struct sock_local local = client_local(o, -1);
    uint16_t port;

    (void)id;
    (void)ctl;
    if (port_from(cJSON_GetObjectItemCaseSensitive(accept, "crr_port"), &port)) {
        snprintf(err, errlen, "server's accept message lacks a valid crr port");
        return -EPROTO;
    }
    if (t.ss.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&t.ss)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)&t.ss)->sin_port = htons(port);
    if (engine_set_target(e, (struct sockaddr *)&t.ss, t.len, &local)) {
        snprintf(err, errlen, "cannot use source address '%s' for crr", o->bind);
        return -EINVAL;
    }
    return 0;
}

int client_flows_open(const struct client_opts *o, const struct sock_addr *to,
                      const uint8_t id[CTL_TEST_ID_LEN], const cJSON *accept, int ctl,
                      struct engine *e, char *err, size_t errlen)
{
    /* the client's end of each way a kind's data paths open (test_kind.h) */
    static int (*const open[TEST_KIND_NPATHS])(const struct client_opts *, const struct sock_addr *,
                                               const uint8_t[CTL_TEST_ID_LEN], const cJSON *, int,
                                               struct engine *, char *, size_t) = {
        [TEST_KIND_PATH_CONN] = open_tcp_flows,
        [TEST_KIND_PATH_DGRAM] = open_udp_flows,
        [TEST_KIND_PATH_LISTENER] = target_crr,
    };

    return open[test_kind_of(&o->p)->path](o, to, id, accept, ctl, e, err, errlen);
}

/* TCP: one connection per flow through the daemon's port, each naming its test and flow. */
static int open_tcp_flows(const struct client_opts *o, const struct sock_addr *to,
                          const uint8_t id[CTL_TEST_ID_LEN], const cJSON *accept, int ctl,
                          struct engine *e, char *err, size_t errlen)
{
    (void)accept;
    (void)ctl;
    uint32_t n = params_total_flows(&o->p);

    for (uint32_t i = 0; i < n; i++) {
        uint8_t hello_buf[CTL_DATA_HELLO_LEN];
        struct sock_local local = client_local(o, (int)i);
        int fd = dataconn_tcp_connect(to, &local, &o->p, i, o->timeout_ms, err, errlen);
        int rc;

        if (fd < 0)
            return fd;
        ctl_data_hello_encode(hello_buf, id, i);
        rc = sock_write_full(fd, hello_buf, sizeof(hello_buf), o->timeout_ms);
        if (rc) {
            snprintf(err, errlen, "cannot open data connection %u: %s", i, strerror(-rc));
            close(fd);
            return rc;
        }
        rc = engine_attach(e, i, fd, err, errlen);
        if (rc) {
            close(fd);
            return rc;
        }
    }
    return 0;
}
