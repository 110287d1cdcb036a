/* session: the server side of one test, on its own thread: control exchange, admission,
 * the server's engine, and the results sent back. */
#ifndef NETRIG_SESSION_H
#define NETRIG_SESSION_H

#include <stdint.h>
#include <sys/socket.h>

struct server;

/* Takes ownership of fd. Returns 0, or -errno when no thread could be started (fd closed). */
int session_spawn(struct server *s, int fd, const struct sockaddr_storage *peer);

/* What travels through a session's pipe for each data connection. */
struct session_data_conn {
    uint32_t flow;
    int fd;
};

#endif
