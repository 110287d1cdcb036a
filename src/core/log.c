/* log: messages go to stderr as "netrig: text", or to syslog for a detached daemon.
 * The settings are written once before threads start and only read afterwards. A message is
 * one line whatever it quotes: control characters (a peer's newline, carriage return or
 * terminal escape) are written as \n, \r, \t or \xNN, so no input can forge a log line. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

static struct {
    const char *prog;
    bool syslog;
    enum log_level max;
} log_cfg = {"netrig", false, LOG_LVL_INFO};

void log_setup(const char *prog, bool use_syslog, enum log_level max_level)
{
    log_cfg.prog = prog;
    log_cfg.syslog = use_syslog;
    log_cfg.max = max_level;
    if (use_syslog)
        openlog(prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_reopen(void)
{
    if (log_cfg.syslog) {
        closelog();
        openlog(log_cfg.prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
    }
}

void log_escape(const char *in, char *out, size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    if (!outlen)
        return;
    for (; *in; in++) {
        unsigned char c = (unsigned char)*in;
        char esc[4] = {'\\', 0, 0, 0};
        size_t n = 1;

        if (c == '\n' || c == '\r' || c == '\t')
            esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't', n = 2;
        else if (c < 0x20 || c == 0x7f)
            esc[1] = 'x', esc[2] = hex[c >> 4], esc[3] = hex[c & 15], n = 4;
        else
            esc[0] = (char)c;
        if (o + n >= outlen)
            break;
        memcpy(out + o, esc, n);
        o += n;
    }
    out[o] = '\0';
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    char raw[1024], line[1024];
    va_list ap;

    if (lvl > log_cfg.max)
        return;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    log_escape(raw, line, sizeof(line));
    if (log_cfg.syslog)
        syslog(prio[lvl], "%s", line);
    else
        fprintf(stderr, "%s: %s%s\n", log_cfg.prog, lvl == LOG_LVL_WARN ? "warning: " : "", line);
}
