/* Shared by the unit tests of result_json.c and result_json_mptcp.c: a side's results through
 * the wire as the client receives them. */
#ifndef NETRIG_TEST_RESULT_JSON_UTIL_H
#define NETRIG_TEST_RESULT_JSON_UTIL_H

#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "result_json.h"

/* serialize, print, parse text, parse side: as the client receives the server's side */
static inline int side_via_text(const struct side_result *in, uint32_t expect,
                                struct side_result *out, char *err, size_t errlen)
{
    cJSON *j = result_json_side(in);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *back = cJSON_Parse(text);
    int rc;

    assert_non_null(back);
    memset(out, 0, sizeof(*out));
    rc = result_json_side_parse(back, expect, 1000, 1000, out, err, errlen);
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(j);
    return rc;
}

#endif
