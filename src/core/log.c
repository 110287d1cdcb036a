/* log: messages go to stderr as "netrig: text", or to syslog for a detached daemon.
 * The settings are written once before threads start and only read afterwards. */
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

void log_msg(enum log_level lvl, const char *fmt, ...)
{
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    char line[1024];
    va_list ap;

    if (lvl > log_cfg.max)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (log_cfg.syslog)
        syslog(prio[lvl], "%s", line);
    else
        fprintf(stderr, "%s: %s%s\n", log_cfg.prog, lvl == LOG_LVL_WARN ? "warning: " : "", line);
}
