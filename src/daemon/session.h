/* session: the server side of one test, on its own thread: control exchange, admission,
 * the server's engine, and the results sent back. */
#ifndef NETRIG_SESSION_H
#define NETRIG_SESSION_H

#include <sys/socket.h>

#include "admit.h"
#include "served.h"

/* Takes ownership of fd. Returns 0, or -errno when no thread could be started (fd closed). */
int session_spawn(const struct served_conf *c, struct admit *a, int fd,
                  const struct sockaddr_storage *peer);

#endif
