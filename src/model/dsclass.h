/* dsclass: sets of DSCP classes a test's flows are marked with, one class per flow in turn
 * (flow i gets class i mod the set's size). The one set is flent's RRUL: best effort (BE,
 * DSCP 0), background (BK, CS1), CS5 and expedited forwarding (EF, DSCP 46) — how people see
 * whether a queue honours DSCP (cake's diffserv modes, WMM on Wi-Fi). */
#ifndef NETRIG_DSCLASS_H
#define NETRIG_DSCLASS_H

#include <stdint.h>

enum dsclass_set { DSCLASS_NONE, DSCLASS_RRUL };

#define DSCLASS_MAX 4 /* classes in a set at most */

/* "rrul" → DSCLASS_RRUL (any case); "none" or "" → DSCLASS_NONE. 0, or -EINVAL. */
int dsclass_parse(const char *s, uint8_t *set);
/* "rrul", or "" for DSCLASS_NONE and unknown sets. */
const char *dsclass_set_name(uint8_t set);
/* Classes in the set: 4 for RRUL, 0 for none or an unknown set. */
uint32_t dsclass_count(uint8_t set);
/* Class i of the set: its name ("BE", "BK", "CS5", "EF") and its DSCP (0-63); "" and 0 out of
 * range. */
const char *dsclass_name(uint8_t set, uint32_t i);
uint8_t dsclass_dscp(uint8_t set, uint32_t i);
/* The class of flow number flow: flow mod the set's size (0 without a set). */
uint32_t dsclass_of_flow(uint8_t set, uint32_t flow);
/* The TOS byte of flow number flow: its class's DSCP shifted into it, or tos without a set. */
uint8_t dsclass_flow_tos(uint8_t set, uint8_t tos, uint32_t flow);

#endif
