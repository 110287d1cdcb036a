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

/* A new connection whose first 37 bytes (not yet read) are the cookie of a registered iperf3
 * test (admit_registered): takes fd, reads the cookie and hands it to that test as its next
 * stream, or refuses it (ACCESS_DENIED, logged) when the test has all its streams. */
void iperf3_server_stream(struct admit *a, int fd, const struct sockaddr_storage *peer);
/* A new iperf3 client (its cookie, not yet read, names no test): takes fd and runs its test on
 * a thread of its own. The caller entered a handshake for peer (admit_handshake_enter). */
void iperf3_server_spawn(const struct served_conf *c, struct admit *a, int fd,
                         const struct sockaddr_storage *peer);

#endif
