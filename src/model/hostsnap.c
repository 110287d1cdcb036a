/* hostsnap: the snapshot model — sorted entries, the diff, and the JSON form. Reading a host is
 * hostsnap_take.c. */
#include "hostsnap.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hostsnap *hostsnap_new(void) { return calloc(1, sizeof(struct hostsnap)); }

void hostsnap_clear(struct hostsnap *hs)
{
    for (uint32_t i = 0; i < hs->n; i++) {
        free(hs->e[i].key);
        free(hs->e[i].value);
    }
    hs->n = 0;
}

void hostsnap_free(struct hostsnap *hs)
{
    if (!hs)
        return;
    hostsnap_clear(hs);
    free(hs->e);
    free(hs);
}

static bool key_ok(const char *key)
{
    size_t n = strlen(key);

    if (n == 0 || n >= HOSTSNAP_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (key[i] < '!' || key[i] > '~')
            return false;
    return true;
}

/* Collapses whitespace runs, trims, turns other non-printable bytes into '?', and cuts at
 * HOSTSNAP_VAL_MAX - 1 bytes (malloc'd). */
static char *normalize(const char *in)
{
    size_t cap = strnlen(in, HOSTSNAP_VAL_MAX - 1) + 1, o = 0;
    char *out = malloc(cap);
    bool space = false;

    if (!out)
        return NULL;
    while (*in && isspace((unsigned char)*in))
        in++;
    for (; *in && o + 1 < cap; in++) {
        if (isspace((unsigned char)*in)) {
            space = true;
            continue;
        }
        if (space && o + 2 < cap)
            out[o++] = ' ';
        space = false;
        out[o++] = isprint((unsigned char)*in) ? *in : '?';
    }
    out[o] = '\0';
    return out;
}

/* Natural order of a and b; 0 also for "a01" against "a1". */
static int natural(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            const char *ea = a, *eb = b;
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            for (ea = a; isdigit((unsigned char)*ea); ea++)
                ;
            for (eb = b; isdigit((unsigned char)*eb); eb++)
                ;
            if (ea - a != eb - b)
                return ea - a < eb - b ? -1 : 1;
            for (; a < ea; a++, b++)
                if (*a != *b)
                    return *a < *b ? -1 : 1;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++, b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

int hostsnap_keycmp(const char *a, const char *b)
{
    int c = natural(a, b);

    return c ? c : strcmp(a, b); /* a total order: equal only when the keys are */
}

/* The index of key, or where it would go (*found false). */
static uint32_t find(const struct hostsnap *hs, const char *key, bool *found)
{
    uint32_t lo = 0, hi = hs->n;

    *found = false;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = hostsnap_keycmp(hs->e[mid].key, key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int grow(struct hostsnap *hs)
{
    uint32_t cap = hs->cap ? hs->cap * 2 : 128;
    struct hostsnap_entry *e;

    if (hs->n < hs->cap)
        return 0;
    e = realloc(hs->e, cap * sizeof(*e));
    if (!e)
        return -ENOMEM;
    hs->e = e;
    hs->cap = cap;
    return 0;
}

/* Inserts a new entry at index at (hs->n for the end). */
static int insert(struct hostsnap *hs, uint32_t at, const char *key, const char *value)
{
    char *k, *v;

    if (hs->n >= HOSTSNAP_MAX)
        return -ENOSPC;
    if (grow(hs))
        return -ENOMEM;
    k = strdup(key);
    v = normalize(value ? value : "");
    if (!k || !v) {
        free(k);
        free(v);
        return -ENOMEM;
    }
    memmove(&hs->e[at + 1], &hs->e[at], (hs->n - at) * sizeof(hs->e[0]));
    hs->e[at] = (struct hostsnap_entry){k, v};
    hs->n++;
    return 0;
}

int hostsnap_set(struct hostsnap *hs, const char *key, const char *value)
{
    bool found;
    uint32_t at;
    char *v;

    if (!key_ok(key))
        return -EINVAL;
    at = find(hs, key, &found);
    if (!found)
        return insert(hs, at, key, value);
    v = normalize(value ? value : "");
    if (!v)
        return -ENOMEM;
    free(hs->e[at].value);
    hs->e[at].value = v;
    return 0;
}

const char *hostsnap_get(const struct hostsnap *hs, const char *key)
{
    bool found;
    uint32_t at = find(hs, key, &found);

    return found ? hs->e[at].value : NULL;
}

int hostsnap_version(const struct hostsnap *hs)
{
    const char *v = hostsnap_get(hs, "host.snapshot");
    long n = v ? strtol(v, NULL, 10) : 1;

    return n < 1 ? 1 : n > 1000 ? 1000 : (int)n;
}

bool hostsnap_is_observation(const char *key) { return !strcmp(key, "cpu.freq_mhz"); }

size_t hostsnap_diff(const struct hostsnap *a, const struct hostsnap *b,
                     void (*fn)(const char *key, const char *va, const char *vb, void *arg),
                     void *arg)
{
    uint32_t i = 0, j = 0;
    size_t n = 0;

    while (i < a->n || j < b->n) {
        int c = i >= a->n ? 1 : j >= b->n ? -1 : hostsnap_keycmp(a->e[i].key, b->e[j].key);
        const char *key = c <= 0 ? a->e[i].key : b->e[j].key;
        const char *va = c <= 0 ? a->e[i].value : NULL, *vb = c >= 0 ? b->e[j].value : NULL;

        i += c <= 0;
        j += c >= 0;
        if (hostsnap_is_observation(key) || (va && vb && !strcmp(va, vb)))
            continue;
        if (fn)
            fn(key, va, vb, arg);
        n++;
    }
    return n;
}

cJSON *hostsnap_to_json(const struct hostsnap *hs)
{
    cJSON *o = cJSON_CreateObject();

    for (uint32_t i = 0; o && i < hs->n; i++)
        if (!cJSON_AddStringToObject(o, hs->e[i].key, hs->e[i].value)) {
            cJSON_Delete(o);
            return NULL;
        }
    return o;
}

/* A JSON string's bytes with its quotes, as cJSON escapes it. */
static size_t json_string_size(const char *s)
{
    size_t n = 2;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        n += c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t'
                 ? 2
             : c < ' ' ? 6
                       : 1;
    }
    return n;
}

size_t hostsnap_json_size(const struct hostsnap *hs)
{
    size_t n = 2; /* {} */

    for (uint32_t i = 0; i < hs->n; i++)
        n += (i ? 1 : 0) + json_string_size(hs->e[i].key) + 1 + json_string_size(hs->e[i].value);
    return n;
}

static int entry_cmp(const void *a, const void *b)
{
    return hostsnap_keycmp(((const struct hostsnap_entry *)a)->key,
                           ((const struct hostsnap_entry *)b)->key);
}

/* One member of a snapshot another host sent; appended unsorted. */
static int from_member(const cJSON *m, struct hostsnap *hs, char *err, size_t errlen)
{
    int rc;

    if (hs->n >= HOSTSNAP_MAX) {
        snprintf(err, errlen, "host snapshot: more than %d settings", HOSTSNAP_MAX);
        return -EINVAL;
    }
    if (!m->string || !key_ok(m->string)) {
        snprintf(err, errlen, "host snapshot: invalid setting name '%.40s'",
                 m->string ? m->string : "");
        return -EINVAL;
    }
    if (!cJSON_IsString(m) || !m->valuestring) {
        snprintf(err, errlen, "host snapshot: the value of '%s' is not a string", m->string);
        return -EINVAL;
    }
    if (strnlen(m->valuestring, HOSTSNAP_VAL_MAX) >= HOSTSNAP_VAL_MAX) {
        snprintf(err, errlen, "host snapshot: the value of '%s' is longer than %d bytes", m->string,
                 HOSTSNAP_VAL_MAX - 1);
        return -EINVAL;
    }
    rc = insert(hs, hs->n, m->string, m->valuestring);
    if (rc)
        snprintf(err, errlen, "host snapshot: cannot keep '%s': %s", m->string, strerror(-rc));
    return rc;
}

int hostsnap_from_json(const cJSON *obj, struct hostsnap *hs, char *err, size_t errlen)
{
    const cJSON *m;
    int rc = 0;

    hostsnap_clear(hs);
    if (!cJSON_IsObject(obj)) {
        snprintf(err, errlen, "host snapshot: not a JSON object");
        return -EINVAL;
    }
    cJSON_ArrayForEach(m, obj)
    {
        if ((rc = from_member(m, hs, err, errlen)) != 0)
            break;
    }
    /* appended, then sorted once: no quadratic insertion whatever the order sent */
    if (!rc && hs->n)
        qsort(hs->e, hs->n, sizeof(hs->e[0]), entry_cmp);
    for (uint32_t i = 1; !rc && i < hs->n; i++)
        if (!hostsnap_keycmp(hs->e[i - 1].key, hs->e[i].key)) {
            snprintf(err, errlen, "host snapshot: setting '%s' given twice", hs->e[i].key);
            rc = -EINVAL;
        }
    if (rc)
        hostsnap_clear(hs);
    return rc;
}
