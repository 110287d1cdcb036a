/* samples: the time series storage and its thinning. */
#include "samples.h"

#include <stdlib.h>
#include <string.h>

struct samples *samples_new(uint32_t nflows, uint64_t period_ns, uint64_t span_ns)
{
    struct samples *s;
    uint64_t want, room;

    if (!nflows || !period_ns || SAMPLES_MAX_ROWS / nflows < 4)
        return NULL;
    want = span_ns / period_ns + 4;
    room = SAMPLES_MAX_ROWS / nflows;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->nflows = nflows;
    s->asked_ns = s->period_ns = period_ns;
    s->cap = (uint32_t)(want < room ? want : room);
    s->t_s = calloc(s->cap, sizeof(*s->t_s));
    s->kind = malloc(nflows);
    s->rows = calloc((size_t)s->cap * nflows, sizeof(*s->rows));
    if (!s->t_s || !s->kind || !s->rows) {
        samples_free(s);
        return NULL;
    }
    memset(s->kind, SAMPLES_BYTES, nflows);
    return s;
}

void samples_free(struct samples *s)
{
    if (!s)
        return;
    free(s->t_s);
    free(s->kind);
    free(s->rows);
    free(s);
}

/* Keeps ticks 0, 2, 4, ...: half the rows, twice the period. */
static void thin(struct samples *s)
{
    uint32_t k = 0;

    for (uint32_t i = 0; i < s->n; i += 2, k++) {
        s->t_s[k] = s->t_s[i];
        if (k != i)
            memcpy(&s->rows[(uint64_t)k * s->nflows], &s->rows[(uint64_t)i * s->nflows],
                   s->nflows * sizeof(*s->rows));
    }
    s->n = k;
    s->period_ns *= 2;
    s->thinned++;
}

struct sample *samples_tick(struct samples *s, double t_s)
{
    struct sample *row;

    if (s->n == s->cap)
        thin(s);
    s->t_s[s->n] = t_s;
    row = &s->rows[(uint64_t)s->n * s->nflows];
    memset(row, 0, s->nflows * sizeof(*row));
    s->n++;
    return row;
}

double samples_bps(const struct samples *s, uint32_t k, uint32_t f)
{
    double t0 = k ? s->t_s[k - 1] : s->origin_s, dt = s->t_s[k] - t0;
    uint64_t b1 = samples_row(s, k, f)->bytes, b0 = k ? samples_row(s, k - 1, f)->bytes : 0;

    return dt > 0 && b1 >= b0 ? (double)(b1 - b0) * 8 / dt : 0;
}
