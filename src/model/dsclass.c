/* dsclass: the DSCP class sets flows are marked with. */
#include "dsclass.h"

#include <errno.h>
#include <stddef.h>
#include <strings.h>

struct dsclass {
    const char *name;
    uint8_t dscp;
};

/* flent's RRUL order: BE, BK, CS5, EF */
static const struct dsclass rrul[DSCLASS_MAX] = {
    {"BE", 0},
    {"BK", 8},
    {"CS5", 40},
    {"EF", 46},
};

int dsclass_parse(const char *s, uint8_t *set)
{
    if (!s)
        return -EINVAL;
    if (!*s || !strcasecmp(s, "none")) {
        *set = DSCLASS_NONE;
        return 0;
    }
    if (!strcasecmp(s, "rrul")) {
        *set = DSCLASS_RRUL;
        return 0;
    }
    return -EINVAL;
}

const char *dsclass_set_name(uint8_t set) { return set == DSCLASS_RRUL ? "rrul" : ""; }

uint32_t dsclass_count(uint8_t set) { return set == DSCLASS_RRUL ? DSCLASS_MAX : 0; }

const char *dsclass_name(uint8_t set, uint32_t i)
{
    return i < dsclass_count(set) ? rrul[i].name : "";
}

uint8_t dsclass_dscp(uint8_t set, uint32_t i) { return i < dsclass_count(set) ? rrul[i].dscp : 0; }

uint32_t dsclass_of_flow(uint8_t set, uint32_t flow)
{
    uint32_t n = dsclass_count(set);

    return n ? flow % n : 0;
}

uint8_t dsclass_flow_tos(uint8_t set, uint8_t tos, uint32_t flow)
{
    if (!dsclass_count(set))
        return tos;
    return (uint8_t)(dsclass_dscp(set, dsclass_of_flow(set, flow)) << 2);
}
