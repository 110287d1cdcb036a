/* compare_host: the host settings that differ between two sets of runs, for the client's and
 * the server's host apart. A set's value of a setting is the distinct values over its runs
 * ("x | y" when they vary). A run whose side was not recorded is listed with the reason; a
 * setting a run's older snapshot did not record is not a difference. */
#include "compare.h"

#include "hostsnap.h"
#include "store_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const sides[2] = {"client", "server"};

#define ABSENT "(none)"

/* The recorded snapshots of one side over both sets: a's first. */
struct snaps {
    struct hostsnap **hs; /* NULL for a run whose side was not recorded */
    int maxver;
};

static int load(struct store *st, struct compare_result *c, struct compare_side *sd,
                const char *side, struct snaps *sn)
{
    size_t n = c->na + c->nb;

    sn->hs = calloc(n + 1, sizeof(*sn->hs));
    sd->missing = calloc(n + 1, sizeof(*sd->missing));
    if (!sn->hs || !sd->missing)
        return -ENOMEM;
    sn->maxver = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t id = i < c->na ? c->a[i] : c->b[i - c->na];
        struct compare_missing *m = &sd->missing[sd->nmissing];
        struct hostsnap *hs = hostsnap_new();
        if (!hs)
            return -ENOMEM;
        if (store_run_host_side(st, id, side, hs, m->note, sizeof(m->note)) == 1) {
            sn->hs[i] = hs;
            if (hostsnap_version(hs) > sn->maxver)
                sn->maxver = hostsnap_version(hs);
            continue;
        }
        hostsnap_free(hs);
        m->run = id;
        m->set = i < c->na ? 'a' : 'b';
        sd->nmissing++;
    }
    return 0;
}

/* Is v one of the " | "-separated values in list? */
static bool has_value(const char *list, const char *v)
{
    size_t n = strlen(v);

    for (const char *p = list; p;) {
        if (!strncmp(p, v, n) && (p[n] == '\0' || !strncmp(p + n, " | ", 3)))
            return true;
        p = strstr(p, " | ");
        if (p)
            p += 3;
    }
    return false;
}

/* The same distinct values, in any order? */
static bool same_values(const char *a, const char *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *list = pass ? a : b, *other = pass ? b : a;
        for (const char *p = list; p;) {
            const char *end = strstr(p, " | ");
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char v[HOSTSNAP_VAL_MAX];
            snprintf(v, sizeof(v), "%.*s", (int)(n < sizeof(v) ? n : sizeof(v) - 1), p);
            if (!has_value(other, v))
                return false;
            p = end ? end + 3 : NULL;
        }
    }
    return true;
}

/* A set's values of key over runs [from, to): NULL when no run recorded it (an older snapshot
 * lacks it); *list malloc'd. */
static int set_values(const struct snaps *sn, size_t from, size_t to, const char *key, char **list)
{
    *list = NULL;
    for (size_t i = from; i < to; i++) {
        const char *v;
        if (!sn->hs[i])
            continue;
        v = hostsnap_get(sn->hs[i], key);
        if (!v && hostsnap_version(sn->hs[i]) < sn->maxver)
            continue; /* that netrig did not record it */
        if (compare_join(list, v ? v : ABSENT) < 0)
            return -ENOMEM;
    }
    return 0;
}

static char *shown(char *list)
{
    if (list && !strcmp(list, ABSENT))
        list[0] = '\0'; /* absent: "" as before */
    return list;
}

/* Every key of the recorded snapshots, once, in key order. */
static int union_keys(const struct snaps *sn, size_t n, struct hostsnap *keys)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; sn->hs[i] && k < sn->hs[i]->n; k++)
            if (!hostsnap_get(keys, sn->hs[i]->e[k].key) &&
                hostsnap_set(keys, sn->hs[i]->e[k].key, "") == -ENOMEM)
                return -ENOMEM;
    return 0;
}

static int diff_side(struct compare_result *c, struct compare_side *sd, const struct snaps *sn)
{
    struct hostsnap *keys = hostsnap_new();
    int rc = keys ? union_keys(sn, c->na + c->nb, keys) : -ENOMEM;

    if (!rc && keys->n)
        sd->diff = calloc(keys->n, sizeof(*sd->diff));
    if (!rc && keys->n && !sd->diff)
        rc = -ENOMEM;
    for (uint32_t k = 0; !rc && k < keys->n; k++) {
        const char *key = keys->e[k].key;
        char *va = NULL, *vb = NULL;
        if (hostsnap_is_observation(key))
            continue;
        rc = set_values(sn, 0, c->na, key, &va);
        if (!rc)
            rc = set_values(sn, c->na, c->na + c->nb, key, &vb);
        if (!rc && (!va || !vb)) {
            sd->unrecorded += va || vb;
        } else if (!rc && !same_values(va, vb)) {
            struct compare_host *h = &sd->diff[sd->ndiff];
            h->key = strdup(key);
            h->a = shown(va), h->b = shown(vb);
            va = vb = NULL;
            sd->ndiff++;
            if (!h->key)
                rc = -ENOMEM;
        }
        free(va), free(vb);
    }
    hostsnap_free(keys);
    return rc;
}

int compare_host(struct store *st, struct compare_result *c)
{
    int rc = 0;

    for (int s = 0; !rc && s < 2; s++) {
        struct compare_side *sd = &c->side[s];
        struct snaps sn = {0};
        bool in_a = false, in_b = false;
        size_t n = c->na + c->nb;

        sd->name = sides[s];
        rc = load(st, c, sd, sides[s], &sn);
        for (size_t i = 0; !rc && i < n; i++) {
            if (i < c->na)
                in_a |= sn.hs[i] != NULL;
            else
                in_b |= sn.hs[i] != NULL;
        }
        sd->compared = in_a && in_b;
        if (!rc && sd->compared)
            rc = diff_side(c, sd, &sn);
        for (size_t i = 0; sn.hs && i < n; i++)
            hostsnap_free(sn.hs[i]);
        free(sn.hs);
    }
    return rc;
}

void compare_host_free(struct compare_result *c)
{
    for (int s = 0; s < 2; s++) {
        struct compare_side *sd = &c->side[s];
        for (size_t i = 0; i < sd->ndiff; i++) {
            free(sd->diff[i].key);
            free(sd->diff[i].a);
            free(sd->diff[i].b);
        }
        free(sd->diff);
        free(sd->missing);
        sd->diff = NULL;
        sd->missing = NULL;
        sd->ndiff = sd->nmissing = 0;
    }
}
