/* dataconn: the data paths of a test: TCP connections with the flow's socket options, UDP
 * sockets (one per flow, each learning its peer from a hello datagram) and the SO_REUSEPORT
 * listeners of a crr test (one per server worker). */
#ifndef NETRIG_DATACONN_H
#define NETRIG_DATACONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ctl.h"
#include "params.h"
#include "sock.h"

struct engine;

/* Client: a TCP data connection to `to` from `local` (may be NULL) with test p's pre-connect
 * options (window, MSS, TOS; TCP_NODELAY only with -N). Returns fd or -errno with err filled,
 * as sock_connect. flow: its number (its TOS under params.classes). */
int dataconn_tcp_connect(const struct sock_addr *to, const struct sock_local *local,
                         const struct params *p, uint32_t flow, int timeout_ms, char *err,
                         size_t errlen);

/* Server: n UDP sockets on the control connection's local address, ephemeral ports. */
int dataconn_udp_open(const struct sockaddr_storage *local, uint32_t n, int *fds, uint16_t *ports,
                      char *err, size_t errlen);
/* Server: waits for each socket's hello (test id and flow number must match, sent from the
 * address of peer, the control connection's client: a datagram's source address can be
 * forged, the control connection's cannot), connects the socket to the sender and attaches it
 * to the engine. Every socket is read as soon as a datagram arrives; the whole wait is
 * timeout_ms. Watches ctl for the client leaving. */
int dataconn_udp_gather(int ctl, const struct sockaddr *peer, int *fds, uint32_t n,
                        const uint8_t id[CTL_TEST_ID_LEN], struct engine *e, int timeout_ms,
                        char *err, size_t errlen);
/* Is from the same address as peer (IPv4-mapped IPv6 counted as IPv4, ports ignored)? */
bool dataconn_same_host(const struct sockaddr *from, const struct sockaddr *peer);
/* Client: a UDP socket from `local` (may be NULL) connected to the server's port for one
 * flow (number flow), with its TOS: p's, or its class's under params.classes. */
int dataconn_udp_connect(const struct sock_addr *server, uint16_t port,
                         const struct sock_local *local, const struct params *p, uint32_t flow,
                         char *err, size_t errlen);
/* Client: (re)sends the hello of flow on fd. */
void dataconn_udp_hello(int fd, const uint8_t id[CTL_TEST_ID_LEN], uint32_t flow);

/* Server: n listeners sharing one port (SO_REUSEPORT) on the control connection's address,
 * each with a socket filter that drops every packet not from peer (the client's address): no
 * other host completes a handshake with them. */
int dataconn_crr_listen(const struct sockaddr_storage *local, const struct sockaddr *peer,
                        uint32_t n, int *fds, uint16_t *port, char *err, size_t errlen);
/* Is fd's peer on the same host (address) as peer? A data connection routed by its test id is
 * taken only from the test's client. */
bool dataconn_fd_from(int fd, const struct sockaddr *peer);

/* The local address of a connected socket, with port 0. */
int dataconn_local_addr(int fd, struct sockaddr_storage *out);

#endif
