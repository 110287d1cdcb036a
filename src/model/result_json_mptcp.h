/* result_json_mptcp: a flow's MPTCP connection and its subflows as JSON, both ways
 * (docs/json.md "mptcp"). */
#ifndef NETRIG_RESULT_JSON_MPTCP_H
#define NETRIG_RESULT_JSON_MPTCP_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "mptcpinfo.h"
#include "result.h"

/* {"fallback", "subflow_count", "bytes_*", "retransmits", "subflows": [{"local", "remote",
 * "bytes_sent", "bytes_acked", "bytes_received", "retransmits", "rtt_us"}]}; null when m is
 * NULL or not valid. */
cJSON *result_json_mptcp(const struct mptcpinfo *m);
/* The run document's flow `id` of a --mptcp run: o.mptcp = {"client": ..., "server": ...},
 * each end's socket with its own subflows and counts (null for an end that sent none). */
void result_json_mptcp_add_run_flow(cJSON *o, const struct run_result *r, uint32_t id);
/* A side's flow i on the wire: fo.mptcp when the side holds MPTCP figures. */
void result_json_mptcp_add_side_flow(cJSON *fo, const struct side_result *s, uint32_t i);
/* Interval iv (one of s->intervals) of side s, flow i: f.mptcp_subflows = [{"local",
 * "remote", "bytes_acked", "bytes_received"}], what each subflow moved in the interval;
 * nothing when s kept none. */
void result_json_mptcp_add_interval_flow(cJSON *f, const struct side_result *s,
                                         const struct interval *iv, uint32_t i);
/* Reads one back (null or absent: out not valid, 0). Anything out of range refuses it: -EINVAL
 * with out zeroed. */
int result_json_mptcp_parse(const cJSON *o, struct mptcpinfo *out);
/* The "mptcp" members of a side's flows array (ids below nflows): out->mptcp an owned array
 * of nflows (out->nmptcp), or NULL when no flow has one. 0, -EINVAL (one refused) or
 * -ENOMEM. */
int result_json_mptcp_parse_flows(const cJSON *flows, uint32_t nflows, struct side_result *out);
/* The run document's flows (nflows of them, in order): their mptcp.client and mptcp.server
 * into client's and server's mptcp arrays; a value out of range leaves that view out. */
void result_json_mptcp_from_doc(const cJSON *flows, uint32_t nflows, struct side_result *client,
                                struct side_result *server);

#endif
