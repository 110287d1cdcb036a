/* loopsrv: the loopback server that the test commands (stream, rr, crr, diagnose, sweep) start
 * inside the process when no -c is given, so they work on their own. */
#ifndef NETRIG_LOOPSRV_H
#define NETRIG_LOOPSRV_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct server;

struct loopsrv {
    struct server *srv;
    pthread_t th;
    _Atomic int stop;
    char host[64]; /* 127.0.0.1, or ::1 for family 6 */
    uint16_t port; /* ephemeral */
};

/* Starts serving on loopback; one line in err on failure. */
int loopsrv_start(struct loopsrv *ls, int family, char *err, size_t errlen);
/* The same, running up to max_tests tests at once (netrig load runs four). */
int loopsrv_start_tests(struct loopsrv *ls, int family, uint32_t max_tests, char *err,
                        size_t errlen);
/* Stops (after its running test, if any) and frees. Safe on a server that never started. */
void loopsrv_stop(struct loopsrv *ls);

#endif
