/* result_json_host: a side's host settings (its snapshot) in a result, on the wire from a server;
 * the parser takes it from the network, so a snapshot over the size a result carries, or one
 * that does not read, is refused with a note that stays printable. */
#include "result_json.h"

#include <errno.h>
#include <stdio.h>

void result_json_add_host(cJSON *o, const char *key, const struct hostsnap *hs, bool declined)
{
    char flag[64], why[160];
    size_t size;

    if (declined) {
        snprintf(flag, sizeof(flag), "%s_declined", key);
        cJSON_AddBoolToObject(o, flag, true);
    } else if (hs && (size = hostsnap_json_size(hs)) > RESULT_JSON_HOST_WIRE_MAX) {
        snprintf(flag, sizeof(flag), "%s_omitted", key);
        snprintf(why, sizeof(why), "%u settings take %zu bytes, over the %u a result carries",
                 hs->n, size, RESULT_JSON_HOST_WIRE_MAX);
        cJSON_AddStringToObject(o, flag, why);
    } else if (hs) {
        cJSON *h = hostsnap_to_json(hs);
        if (h)
            cJSON_AddItemToObject(o, key, h);
    }
}

/* Bytes outside ' '..'~' (the peer chose them) become '?'. */
static void printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < ' ' || (unsigned char)*s > '~')
            *s = '?';
}

/* o[key]'s settings into *out (NULL first): 0, or a negative errno with err filled. */
static int host_read(const cJSON *h, struct hostsnap **out, char *err, size_t errlen)
{
    size_t size;
    int rc;

    *out = hostsnap_new();
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    rc = hostsnap_from_json(h, *out, err, errlen);
    if (!rc && (size = hostsnap_json_size(*out)) > RESULT_JSON_HOST_WIRE_MAX) {
        snprintf(err, errlen, "host snapshot: %zu bytes, over the %u a result carries", size,
                 RESULT_JSON_HOST_WIRE_MAX);
        rc = -EMSGSIZE;
    }
    if (rc) {
        hostsnap_free(*out);
        *out = NULL;
    }
    return rc;
}

int result_json_host_parse(const cJSON *o, const char *key, const char *who, struct hostsnap **out,
                           char *note, size_t notelen)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, key), *omitted;
    char flag[64], err[200];
    int rc;

    *out = NULL;
    note[0] = '\0';
    snprintf(flag, sizeof(flag), "%s_declined", key);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, flag))) {
        snprintf(note, notelen, "%s declined to send its settings (serve --no-host-snapshot)", who);
        return 0;
    }
    snprintf(flag, sizeof(flag), "%s_omitted", key);
    omitted = cJSON_GetObjectItemCaseSensitive(o, flag);
    if (!h && cJSON_IsString(omitted) && omitted->valuestring) {
        snprintf(note, notelen, "%s left its settings out: %.120s", who, omitted->valuestring);
        printable(note);
        return 0;
    }
    snprintf(flag, sizeof(flag), "%s_note", key);
    omitted = cJSON_GetObjectItemCaseSensitive(o, flag);
    if (!h && cJSON_IsString(omitted) && omitted->valuestring) { /* a relay's words on why */
        snprintf(note, notelen, "%.159s", omitted->valuestring);
        printable(note);
        return 0;
    }
    if (!h)
        return 0;
    if ((rc = host_read(h, out, err, sizeof(err))) == 0)
        return 1;
    /* the reason may quote what the peer sent: keep it printable */
    printable(err);
    snprintf(note, notelen, "%s sent settings that were refused: %s", who, err);
    return rc;
}
