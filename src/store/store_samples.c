/* store_samples: sample_series, samples and probes rows, both ways. */
#include "store_samples.h"

#include "store_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int64_t us(double s) { return (int64_t)llround(s * 1e6); }

static void bind_row(sqlite3_stmt *q, const struct sample *r)
{
    if (!r->tcp)
        return; /* the TCP_INFO columns stay NULL */
    sqlite3_bind_int64(q, 8, r->cwnd);
    sqlite3_bind_int64(q, 9, r->rtt_us);
    sqlite3_bind_int64(q, 10, r->retrans);
    sqlite3_bind_int64(q, 11, r->mss);
    sqlite3_bind_int64(q, 12, (int64_t)r->delivery_rate_bps);
    sqlite3_bind_int64(q, 13, (int64_t)r->pacing_rate_bps);
    sqlite3_bind_int64(q, 14, (int64_t)r->busy_us);
    sqlite3_bind_int64(q, 15, (int64_t)r->rwnd_limited_us);
    sqlite3_bind_int64(q, 16, (int64_t)r->sndbuf_limited_us);
}

int store_add_samples(struct store *st, int64_t id, const char *part, const char *side,
                      const struct samples *s, double t_off_s, char *err, size_t errlen)
{
    sqlite3_stmt *q;
    int rc = 0;

    if (!s)
        return 0;
    if (store_exec(st, err, errlen, "INSERT OR REPLACE INTO sample_series VALUES (?,?,?,?,?,?,?)",
                   "ittiiii", id, part, side, (int64_t)(s->period_ns / 1000),
                   (int64_t)(s->asked_ns / 1000), (int64_t)s->thinned, us(s->origin_s + t_off_s)))
        return -EIO;
    q = store_prepare(st, "INSERT INTO samples VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err,
                      errlen);
    if (!q)
        return -EIO;
    for (uint32_t f = 0; !rc && f < s->nflows; f++) {
        if (s->kind[f] == SAMPLES_NONE)
            continue;
        for (uint32_t k = 0; !rc && k < s->n; k++) {
            const struct sample *r = samples_row(s, k, f);
            sqlite3_reset(q);
            sqlite3_clear_bindings(q);
            sqlite3_bind_int64(q, 1, id);
            sqlite3_bind_text(q, 2, part, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, 3, side, -1, SQLITE_STATIC);
            sqlite3_bind_int64(q, 4, f);
            sqlite3_bind_int64(q, 5, k);
            sqlite3_bind_int64(q, 6, us(s->t_s[k] + t_off_s));
            sqlite3_bind_int64(q, 7, (int64_t)r->bytes);
            bind_row(q, r);
            if (sqlite3_step(q) != SQLITE_DONE)
                rc = store_fail(st, err, errlen, "cannot store a sample");
        }
    }
    sqlite3_finalize(q);
    return rc;
}

int store_add_probes(struct store *st, int64_t id, const char *probe, const struct txnlog *log,
                     int64_t t_off_ns, char *err, size_t errlen)
{
    sqlite3_stmt *q;
    int rc = 0;

    if (!log || !log->n)
        return 0;
    q = store_prepare(st, "INSERT INTO probes VALUES (?,?,?,?,?)", err, errlen);
    if (!q)
        return -EIO;
    for (uint32_t i = 0; !rc && i < log->n; i++) {
        const struct txnlog_rec *r = &log->rec[i];
        int64_t t = (int64_t)r->t_ns + t_off_ns;
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        sqlite3_bind_int64(q, 1, id);
        sqlite3_bind_text(q, 2, probe, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 3, i);
        sqlite3_bind_int64(q, 4, (t > 0 ? t : 0) / 1000);
        if (r->lat_ns != TXNLOG_LOST)
            sqlite3_bind_double(q, 5, (double)r->lat_ns / 1e3);
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = store_fail(st, err, errlen, "cannot store a probe");
    }
    sqlite3_finalize(q);
    return rc;
}

/* The series' shape: flows (highest id + 1) and ticks (highest seq + 1). */
static int shape(struct store *st, int64_t id, const char *part, const char *side, uint32_t *nflows,
                 uint32_t *nticks, char *err, size_t errlen)
{
    sqlite3_stmt *q = store_prepare(st,
                                    "SELECT max(flow), max(seq) FROM samples WHERE run_id = ? AND"
                                    " part = ? AND side = ?",
                                    err, errlen);
    int rc = 0;

    if (!q)
        return -EIO;
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_text(q, 2, part, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, side, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW || sqlite3_column_type(q, 0) == SQLITE_NULL) {
        sqlite3_finalize(q);
        return 0;
    }
    *nflows = (uint32_t)sqlite3_column_int64(q, 0) + 1;
    *nticks = (uint32_t)sqlite3_column_int64(q, 1) + 1;
    if ((uint64_t)*nflows * *nticks > SAMPLES_MAX_ROWS) {
        snprintf(err, errlen, "run %lld's %s samples are larger than netrig writes", (long long)id,
                 side);
        rc = -EINVAL;
    }
    sqlite3_finalize(q);
    return rc ? rc : 1;
}

static void read_row(sqlite3_stmt *q, struct sample *r)
{
    r->bytes = (uint64_t)sqlite3_column_int64(q, 3);
    r->tcp = sqlite3_column_type(q, 4) != SQLITE_NULL;
    if (!r->tcp)
        return;
    r->cwnd = (uint32_t)sqlite3_column_int64(q, 4);
    r->rtt_us = (uint32_t)sqlite3_column_int64(q, 5);
    r->retrans = (uint32_t)sqlite3_column_int64(q, 6);
    r->mss = (uint32_t)sqlite3_column_int64(q, 7);
    r->delivery_rate_bps = (uint64_t)sqlite3_column_int64(q, 8);
    r->pacing_rate_bps = (uint64_t)sqlite3_column_int64(q, 9);
    r->busy_us = (uint64_t)sqlite3_column_int64(q, 10);
    r->rwnd_limited_us = (uint64_t)sqlite3_column_int64(q, 11);
    r->sndbuf_limited_us = (uint64_t)sqlite3_column_int64(q, 12);
}

static void read_series(struct store *st, int64_t id, const char *part, const char *side,
                        struct samples *s)
{
    sqlite3_stmt *q = NULL;

    if (sqlite3_prepare_v2(store_sqlite(st),
                           "SELECT period_us, asked_us, thinned, origin_us FROM sample_series"
                           " WHERE run_id = ? AND part = ? AND side = ?",
                           -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return;
    }
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_text(q, 2, part, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, side, -1, SQLITE_STATIC);
    if (sqlite3_step(q) == SQLITE_ROW) {
        s->period_ns = (uint64_t)sqlite3_column_int64(q, 0) * 1000;
        s->asked_ns = (uint64_t)sqlite3_column_int64(q, 1) * 1000;
        s->thinned = (uint32_t)sqlite3_column_int64(q, 2);
        s->origin_s = (double)sqlite3_column_int64(q, 3) / 1e6;
    }
    sqlite3_finalize(q);
}

int store_run_samples(struct store *st, int64_t id, const char *part, const char *side,
                      struct samples **out, char *err, size_t errlen)
{
    uint32_t nflows = 0, nticks = 0;
    struct samples *s;
    sqlite3_stmt *q;
    int rc = shape(st, id, part, side, &nflows, &nticks, err, errlen);

    *out = NULL;
    if (rc <= 0)
        return rc;
    s = samples_new(nflows, 1000000000ULL, (uint64_t)nticks * 1000000000ULL);
    q = s ? store_prepare(st,
                          "SELECT flow, seq, t_us, bytes, cwnd, rtt_us, retransmits, mss,"
                          " delivery_rate_bps, pacing_rate_bps, busy_us, rwnd_limited_us,"
                          " sndbuf_limited_us FROM samples WHERE run_id = ? AND part = ? AND"
                          " side = ? ORDER BY seq, flow",
                          err, errlen)
          : NULL;
    if (!q) {
        if (!s)
            snprintf(err, errlen, "out of memory for run %lld's samples", (long long)id);
        samples_free(s);
        return s ? -EIO : -ENOMEM;
    }
    memset(s->kind, SAMPLES_NONE, nflows);
    for (uint32_t k = 0; k < nticks; k++)
        samples_tick(s, 0);
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_text(q, 2, part, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, side, -1, SQLITE_STATIC);
    while (sqlite3_step(q) == SQLITE_ROW) {
        uint32_t f = (uint32_t)sqlite3_column_int64(q, 0), k = (uint32_t)sqlite3_column_int64(q, 1);
        struct sample *r = &s->rows[(uint64_t)k * nflows + f];
        s->t_s[k] = (double)sqlite3_column_int64(q, 2) / 1e6;
        read_row(q, r);
        if (s->kind[f] != SAMPLES_TCP)
            s->kind[f] = r->tcp ? SAMPLES_TCP : SAMPLES_BYTES;
    }
    sqlite3_finalize(q);
    read_series(st, id, part, side, s);
    *out = s;
    return 1;
}

int store_run_probes(struct store *st, int64_t id, const char *probe, struct txnlog *out, char *err,
                     size_t errlen)
{
    sqlite3_stmt *q = store_prepare(st,
                                    "SELECT t_us, latency_us FROM probes WHERE run_id = ? AND"
                                    " probe = ? ORDER BY seq",
                                    err, errlen);
    int64_t n = 0;

    memset(out, 0, sizeof(*out));
    if (!q)
        return -EIO;
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_text(q, 2, probe, -1, SQLITE_STATIC);
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (out->n == out->cap) {
            struct txnlog bigger;
            uint32_t cap = out->cap ? 2 * out->cap : 1024;
            if (cap > TXNLOG_MAX_CAP || txnlog_init(&bigger, cap)) {
                n = -ENOMEM;
                break;
            }
            if (out->n)
                memcpy(bigger.rec, out->rec, out->n * sizeof(*out->rec));
            bigger.n = out->n;
            txnlog_fini(out);
            *out = bigger;
        }
        out->rec[out->n].t_ns = (uint64_t)sqlite3_column_int64(q, 0) * 1000;
        out->rec[out->n].up_ns = TXNLOG_NO_OWD; /* not stored */
        out->rec[out->n].lat_ns = sqlite3_column_type(q, 1) == SQLITE_NULL
                                      ? TXNLOG_LOST
                                      : (uint64_t)llround(sqlite3_column_double(q, 1) * 1e3);
        out->n++;
        n++;
    }
    sqlite3_finalize(q);
    if (n < 0) {
        txnlog_fini(out);
        snprintf(err, errlen, "out of memory for run %lld's probes", (long long)id);
        return (int)n;
    }
    return n > 0;
}
