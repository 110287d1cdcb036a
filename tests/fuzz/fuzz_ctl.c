/* libFuzzer target: everything a peer can send on the control channel. A frame is decoded;
 * when it holds "params" they go through the parameter validation, when it holds "side" the
 * results parser reads it (with the server's settings in "side.host"), when it holds "host"
 * the host snapshot decoder; a third-party daemon's run_result is read as the controller reads
 * it: "client_host" and "server_host", and the run document "result" for the report. Nothing
 * may crash, leak or hang. */
#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "hostsnap.h"
#include "params.h"
#include "result_doc.h"
#include "result_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *msg = NULL;
    char err[256];
    struct params p;
    struct side_result side;
    struct hostsnap *hs, *peer;
    struct run_result r;

    if (ctl_decode(data, size, CTL_MAX_REQUEST, &msg, err, sizeof(err)) == 0) {
        params_from_json(cJSON_GetObjectItemCaseSensitive(msg, "params"), &p, err, sizeof(err));
        if (result_json_side_parse(cJSON_GetObjectItemCaseSensitive(msg, "side"), 8, 64, 64, &side,
                                   err, sizeof(err)) == 0)
            result_side_fini(&side);
        hs = hostsnap_new();
        if (hs)
            hostsnap_from_json(cJSON_GetObjectItemCaseSensitive(msg, "host"), hs, err, sizeof(err));
        hostsnap_free(hs);
        for (int i = 0; i < 2; i++) {
            result_json_host_parse(msg, i ? "server_host" : "client_host", "the daemon", &peer, err,
                                   sizeof(err));
            hostsnap_free(peer);
        }
        result_from_doc(cJSON_GetObjectItemCaseSensitive(msg, "result"), &r, err, sizeof(err));
        result_fini(&r);
        cJSON_Delete(msg);
    }
    return 0;
}
