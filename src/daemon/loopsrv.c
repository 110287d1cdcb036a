/* loopsrv: an in-process `netrig serve` on loopback, on its own thread. */
#include "loopsrv.h"

#include "server.h"

#include <stdio.h>
#include <string.h>

static void *loopsrv_main(void *arg)
{
    struct loopsrv *ls = arg;

    server_run(ls->srv, &ls->stop);
    return NULL;
}

int loopsrv_start(struct loopsrv *ls, int family, char *err, size_t errlen)
{
    return loopsrv_start_tests(ls, family, 1, err, errlen);
}

int loopsrv_start_tests(struct loopsrv *ls, int family, uint32_t max_tests, char *err,
                        size_t errlen)
{
    /* its host is the client's: the client records it, the server sends no copy */
    struct server_opts so = {.port = 0,
                             .family = family,
                             .max_tests = max_tests,
                             .timeout_ms = 10000,
                             .host_snapshot = SERVED_HOSTSNAP_NONE};
    char why[256];

    memset(ls, 0, sizeof(*ls));
    snprintf(so.bind, sizeof(so.bind), "%s", family == 6 ? "::1" : "127.0.0.1");
    ls->srv = server_create(&so, why, sizeof(why));
    if (!ls->srv) {
        snprintf(err, errlen, "cannot start the built-in loopback server: %s", why);
        return -1;
    }
    snprintf(ls->host, sizeof(ls->host), "%s", so.bind);
    ls->port = server_port(ls->srv);
    if (pthread_create(&ls->th, NULL, loopsrv_main, ls)) {
        snprintf(err, errlen, "cannot start the built-in loopback server thread");
        server_destroy(ls->srv);
        ls->srv = NULL;
        return -1;
    }
    return 0;
}

void loopsrv_stop(struct loopsrv *ls)
{
    if (!ls->srv)
        return;
    ls->stop = 1;
    pthread_join(ls->th, NULL);
    server_destroy(ls->srv);
    ls->srv = NULL;
}
