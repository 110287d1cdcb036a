/* log: messages go to stderr as "netrig: text" (which --logfile points at a file), or to
 * syslog for a detached daemon.
 * The settings are written once before threads start and only read afterwards. A message is
 * one line whatever it quotes: control characters (a peer's newline, carriage return or
 * terminal escape) are written as \n, \r, \t or \xNN, so no input can forge a log line. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static struct {
    const char *prog;
    bool syslog;
    enum log_level max;
    const char *file;  /* --logfile: standard output and error go there */
    const char *stamp; /* --timestamps: strftime format of each line's prefix */
} log_cfg = {"netrig", false, LOG_LVL_INFO, NULL, NULL};

/* Opens path for appending onto standard output and standard error. */
static int file_onto_stdio(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);

    if (fd < 0)
        return -errno;
    fflush(stdout);
    fflush(stderr);
    if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    close(fd);
    return 0;
}

int log_to_file(const char *path, char *err, size_t errlen)
{
    int rc = file_onto_stdio(path);

    if (rc) {
        snprintf(err, errlen, "cannot open log file '%s': %s", path, strerror(-rc));
        return rc;
    }
    log_cfg.file = path;
    return 0;
}

void log_stamp(const char *fmt) { log_cfg.stamp = fmt; }

void log_format_time(const char *fmt, char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;

    if (!len)
        return;
    buf[0] = '\0';
    if (!localtime_r(&now, &tm))
        return;
        /* the format is the user's --timestamps, as iperf3 takes it: strftime only reads it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (!strftime(buf, len, fmt, &tm))
        buf[0] = '\0';
#pragma GCC diagnostic pop
}

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
    /* dup2 replaces the descriptors at once: a line being written goes to one file or the
     * other, whole */
    if (log_cfg.file) {
        int rc = file_onto_stdio(log_cfg.file);
        if (rc) /* the old file stays open: say so there */
            log_msg(LOG_LVL_ERR, "cannot reopen log file '%s': %s", log_cfg.file, strerror(-rc));
    }
}

/* The length of the valid UTF-8 sequence at s (not a C1 control: those escape too), or 0. */
static size_t utf8_ok(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;

    if (!n || s[1] < lo || s[1] > hi || (c == 0xc2 && s[1] <= 0x9f))
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

void log_escape(const char *in, char *out, size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;

    if (!outlen)
        return;
    while (*s) {
        unsigned char c = *s;
        char esc[4] = {'\\', 0, 0, 0};
        const char *src = esc;
        size_t n = 1, take = 1;

        if (c == '\n' || c == '\r' || c == '\t')
            esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't', n = 2;
        else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !(take = utf8_ok(s))))
            esc[1] = 'x', esc[2] = hex[c >> 4], esc[3] = hex[c & 15], n = 4, take = 1;
        else
            src = (const char *)s, n = take;
        if (o + n >= outlen)
            break;
        memcpy(out + o, src, n);
        o += n;
        s += take;
    }
    out[o] = '\0';
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    char raw[1024], line[1024], stamp[128] = "";
    va_list ap;

    if (lvl > log_cfg.max)
        return;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    log_escape(raw, line, sizeof(line));
    if (log_cfg.syslog) {
        syslog(prio[lvl], "%s", line);
        return;
    }
    if (log_cfg.stamp)
        log_format_time(log_cfg.stamp, stamp, sizeof(stamp));
    fprintf(stderr, "%s%s: %s%s\n", stamp, log_cfg.prog, lvl == LOG_LVL_WARN ? "warning: " : "",
            line);
}
