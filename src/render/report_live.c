/* report_live: the --live view, one table redrawn in place every interval. */
#include "report_live.h"
#include "test_kind.h"

#include "report_text.h"
#include "units.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define LIVE_MAX_ROWS    64          /* flow rows drawn at most, however tall the terminal */
#define LIVE_FIXED_LINES 5           /* title, column heads, "more", total, CPU */
#define LIVE_BUF         (16 * 1024) /* one frame: LIVE_MAX_ROWS + fixed lines of <= 160 bytes */

bool report_live_capable(FILE *out)
{
    const char *term = getenv("TERM");

    return out && isatty(fileno(out)) && term && term[0] && strcmp(term, "dumb") != 0;
}

bool report_live_wanted(enum report_live_mode m, FILE *out, bool text_output, uint64_t run_ns)
{
    if (m == REPORT_LIVE_OFF || !text_output || !report_live_capable(out))
        return false;
    return m == REPORT_LIVE_ON || run_ns > REPORT_LIVE_AUTO_NS;
}

/* Appends one line, cut to cols - 1 characters so that it never wraps. */
struct frame {
    char *buf;
    size_t len, used;
    int cols, lines;
};

static void line(struct frame *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct frame *f, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    int n;
    size_t take;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    take = (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1;
    if (f->cols > 1 && take > (size_t)(f->cols - 1))
        take = (size_t)(f->cols - 1);
    if (f->used + take + 2 > f->len)
        return;
    memcpy(f->buf + f->used, tmp, take);
    f->used += take;
    f->buf[f->used++] = '\n';
    f->buf[f->used] = '\0';
    f->lines++;
}

static double per_s(double v, double seconds) { return seconds > 0 ? v / seconds : 0; }

static void title(struct frame *f, const struct run_result *r, const struct interval *iv)
{
    const struct params *p = &r->params;
    double total = (double)(p->duration_ns + p->omit_ns) / 1e9;
    double left = total - iv->end_s;
    uint32_t n = params_total_flows(p);

    if (left < 0)
        left = 0;
    if (!p->duration_ns) { /* -n/-k: no end in time to count down to */
        char span[80];
        params_span(p, span, sizeof(span));
        line(f, "netrig %s%s to %s, %u flow%s %s, %u thread%s   %.1f s, until %s%s%s%s", r->test,
             test_kind_of(p)->label, r->server, n, n == 1 ? "" : "s", params_dir_name(p->dir),
             p->threads, p->threads == 1 ? "" : "s", iv->end_s, span,
             iv->omitted ? " (warm-up)" : "", p->title[0] ? "  " : "", p->title);
        return;
    }
    line(f, "netrig %s%s to %s, %u flow%s %s, %u thread%s   %.1f of %.1f s, %.1f s left%s%s%s",
         r->test, test_kind_of(p)->label, r->server, n, n == 1 ? "" : "s", params_dir_name(p->dir),
         p->threads, p->threads == 1 ? "" : "s", iv->end_s, total, left,
         iv->omitted ? " (warm-up)" : "", p->title[0] ? "  " : "", p->title);
}

static void flow_rows(struct frame *f, const struct run_result *r, const struct side_result *s,
                      const struct interval *iv, int max_rows)
{
    double len = iv->end_s - iv->start_s;
    uint32_t shown = 0;

    line(f, "%4s %-4s %16s %7s %10s %8s", "flow", "dir", "rate", "retr", "rtt", "cwnd");
    if (!iv->flows) {
        line(f, "     (per-flow figures are not kept for this many flows x intervals)");
        return;
    }
    for (uint32_t i = 0; i < s->nflows && shown < (uint32_t)max_rows; i++, shown++) {
        const struct interval_flow *c = &iv->flows[i];
        bool up = params_flow_client_sends(&r->params, i);
        char rt[32], retr[16] = "-", rtt[16] = "-", cwnd[16] = "-";

        units_format_rate(per_s((double)c->bytes * 8, len), rt, sizeof(rt));
        if (c->rtt_us)
            units_format_duration(c->rtt_us / 1e6, rtt, sizeof(rtt));
        if (up && (c->rtt_us || c->cwnd)) { /* TCP_INFO of the sending end: ours */
            snprintf(retr, sizeof(retr), "%u", c->retrans);
            snprintf(cwnd, sizeof(cwnd), "%useg", c->cwnd);
        } else if (!up && iv->peer == INTERVAL_PEER_CELLS) { /* the server's, as it sent them */
            snprintf(retr, sizeof(retr), "%u", c->retrans);
        }
        line(f, "%4u %-4s %16s %7s %10s %8s", i, up ? "up" : "down", rt, retr, rtt, cwnd);
    }
    if (s->nflows > shown)
        line(f, "     ... and %u more flow%s (in the total)", s->nflows - shown,
             s->nflows - shown == 1 ? "" : "s");
}

static void totals(struct frame *f, const struct run_result *r, const struct interval *iv)
{
    double len = iv->end_s - iv->start_s;
    char rt[32], up[32], down[32], retr[16];

    if (params_is_transactional(&r->params)) {
        line(f, "total %14.0f trans/s, mean latency %.1f us, %u retransmits",
             per_s((double)iv->txns, len), iv->txns ? iv->lat_sum_ns / 1e3 / iv->txns : 0,
             iv->retrans);
        return;
    }
    units_format_rate(per_s((double)(iv->sent_bytes + iv->recv_bytes) * 8, len), rt, sizeof(rt));
    units_format_rate(per_s((double)iv->sent_bytes * 8, len), up, sizeof(up));
    units_format_rate(per_s((double)iv->recv_bytes * 8, len), down, sizeof(down));
    if (result_interval_retrans(iv) < 0)
        snprintf(retr, sizeof(retr), "-");
    else
        snprintf(retr, sizeof(retr), "%u", iv->retrans);
    line(f, "total     %16s %7s   (up %s, down %s)", rt, retr, up, down);
}

static void cpu(struct frame *f, const struct cpu_usage *c)
{
    if (!c->valid) {
        line(f, "CPU client not sampled yet; server CPU comes with the final report");
        return;
    }
    line(f,
         "CPU client %5.1f%% busy (usr %.1f, sys %.1f, softirq %.1f, irq %.1f); server: at the end",
         c->busy_pct, c->user_pct, c->system_pct, c->softirq_pct, c->irq_pct);
}

int report_live_frame(char *buf, size_t len, int rows, int cols, const struct run_result *r,
                      const struct side_result *s, const struct interval *iv)
{
    struct frame f = {.buf = buf, .len = len, .cols = cols};
    int max_rows = rows - LIVE_FIXED_LINES - 1;

    if (max_rows > LIVE_MAX_ROWS)
        max_rows = LIVE_MAX_ROWS;
    if (max_rows < 1)
        max_rows = 1;
    if (len)
        buf[0] = '\0';
    title(&f, r, iv);
    flow_rows(&f, r, s, iv, max_rows);
    totals(&f, r, iv);
    cpu(&f, &iv->cpu);
    return f.lines;
}

void report_live_interval(struct report_live *l, FILE *out, const struct run_result *r,
                          const struct side_result *s, const struct interval *iv)
{
    char buf[LIVE_BUF];
    struct winsize ws;
    int rows = 24, cols = 80, n;

    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
        rows = ws.ws_row;
        cols = ws.ws_col;
    }
    /* Overwrite the last frame line by line, erasing each line's rest: no erase-display,
     * which some terminals (tmux among them) turn into a screenful of scrollback. */
    if (l->drawn > 0)
        fprintf(out, "\r\033[%dA", l->drawn);
    n = report_live_frame(buf, sizeof(buf), rows, cols, r, s, iv);
    for (char *p = buf, *nl; (nl = strchr(p, '\n')); p = nl + 1)
        fprintf(out, "%.*s\033[K\n", (int)(nl - p), p);
    for (int i = n; i < l->drawn; i++) /* a shorter frame: blank what is left of the last */
        fputs("\033[K\n", out);
    if (l->drawn > n)
        fprintf(out, "\033[%dA", l->drawn - n);
    l->drawn = n;
    fflush(out);
}

static void live_interval(void *ctx, const struct run_result *r, const struct side_result *s,
                          const struct interval *iv)
{
    struct report_live *l = ctx;

    report_live_interval(l, l->out, r, s, iv);
}

struct run_observer report_live_observer(struct report_live *l, FILE *out)
{
    *l = (struct report_live){.out = out};
    return (struct run_observer){
        .on_queued = report_text_queued,
        .on_interval = live_interval,
        .ctx = l,
    };
}
