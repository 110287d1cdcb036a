/* iperf3_server: `netrig serve` answering unmodified iperf3 clients on its own port. The
 * acceptor hands over every connection that opens with an iperf3 cookie: a cookie of a test
 * still gathering its streams makes it that test's next TCP stream; any other cookie starts a
 * new test on its own thread (parameters, streams, the engine, results back to the client).
 * UDP streams use the daemon's port number on UDP; admit.h's UDP turn lets one test at a time
 * set up its UDP streams, so several UDP tests can run at once (docs/protocol.md). */
#ifndef NETRIG_IPERF3_SERVER_H
#define NETRIG_IPERF3_SERVER_H

#include <sys/socket.h>

#include "admit.h"
#include "served.h"

/* A new connection whose first 37 bytes (not yet read) are an iperf3 cookie. Takes fd: a
 * stream of a test that is gathering them, a stream that came too late (refused with
 * ACCESS_DENIED and logged), or a new iperf3 client (its own thread). */
void iperf3_server_take(const struct served_conf *c, struct admit *a, int fd,
                        const struct sockaddr_storage *peer);

#endif
