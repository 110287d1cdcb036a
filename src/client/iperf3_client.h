/* iperf3_client: `netrig stream --iperf3`: a stream test against an unmodified iperf3 server
 * (TCP with -P, -R, --bidir, -t, -O, -l, -w, -C; UDP with -b and -l). Our side runs on the
 * engine as usual; the server's side comes from iperf3's results exchange. */
#ifndef NETRIG_IPERF3_CLIENT_H
#define NETRIG_IPERF3_CLIENT_H

#include <signal.h>
#include <stddef.h>

#include "client.h"
#include "iperf3_proto.h"
#include "result.h"

/* Checks that o asks for something an iperf3 server can run; err names the option. */
int iperf3_client_check(const struct client_opts *o, char *err, size_t errlen);
/* The server's (peer_is_server) or client's results as a side_result: flows indexed like
 * ours, senders from p and which end the peer is; streams it did not report stay zero. */
int iperf3_client_remote_side(const struct iperf3_results *res, const struct params *p,
                              bool peer_is_server, struct side_result *out, char *err,
                              size_t errlen);
/* Same contract as client_run: 0 complete, 1 partial (r->error says why), negative errno when
 * there are no results (err says why). */
int iperf3_client_run(const struct client_opts *o, _Atomic int *stop, struct run_result *r,
                      char *err, size_t errlen);

#endif
