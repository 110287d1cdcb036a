/* cli_output: where a command's output goes, as iperf3's options put it: --logfile FILE
 * (everything, errors too, appended), --timestamps[=FORMAT] (every line starts with the local
 * time), --forceflush (every line is written as it ends). */
#define _GNU_SOURCE
#include "cli.h"

#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A stream that stamps each line it writes to fd with the time the line began to be written
 * out (the stream is line-buffered, so: the time it was printed). */
struct cli_stamp {
    int fd;
    const char *fmt;
    bool at_line_start;
};

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static ssize_t stamp_write(void *cookie, const char *buf, size_t n)
{
    struct cli_stamp *st = cookie;
    size_t done = 0;

    while (done < n) {
        const char *nl = memchr(buf + done, '\n', n - done);
        size_t part = nl ? (size_t)(nl - (buf + done)) + 1 : n - done;
        char stamp[CLI_STAMP_MAX + 64];

        if (st->at_line_start) {
            log_format_time(st->fmt, stamp, sizeof(stamp));
            if (write_all(st->fd, stamp, strlen(stamp)))
                return done ? (ssize_t)done : -1;
            st->at_line_start = false;
        }
        if (write_all(st->fd, buf + done, part))
            return done ? (ssize_t)done : -1;
        done += part;
        st->at_line_start = nl != NULL;
    }
    return (ssize_t)n;
}

static int stamp_close(void *cookie)
{
    free(cookie);
    return 0;
}

static FILE *stamp_open(int fd, const char *fmt)
{
    static const cookie_io_functions_t io = {.write = stamp_write, .close = stamp_close};
    struct cli_stamp *st = calloc(1, sizeof(*st));
    FILE *f;

    if (!st)
        return NULL;
    *st = (struct cli_stamp){.fd = fd, .fmt = fmt, .at_line_start = true};
    f = fopencookie(st, "w", io);
    if (!f) {
        free(st);
        return NULL;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

int cli_output_opt(struct cli_output *co, int opt, const char *arg)
{
    switch (opt) {
    case CLI_OPT_LOGFILE:
        if (!*arg) {
            cli_error("--logfile needs a file name");
            return -1;
        }
        co->logfile = arg;
        return 0;
    case CLI_OPT_TIMESTAMPS:
        if (!arg) {
            co->stamp = CLI_STAMP_DEFAULT;
            return 0;
        }
        if (!*arg || strlen(arg) > CLI_STAMP_MAX) {
            cli_error("invalid format '%s' for --timestamps: give a strftime format of 1 to %d "
                      "characters after '=', e.g. --timestamps='%%F %%T ', or --timestamps alone "
                      "for '%s'",
                      arg, CLI_STAMP_MAX, CLI_STAMP_DEFAULT);
            return -1;
        }
        co->stamp = arg;
        return 0;
    case CLI_OPT_FORCEFLUSH: co->forceflush = true; return 0;
    default: return -1;
    }
}

int cli_output_open(struct cli_output *co, FILE **report)
{
    char err[512];

    *report = stdout;
    co->prev_err = NULL;
    if (co->logfile && log_to_file(co->logfile, err, sizeof(err))) {
        cli_error("%s", err);
        return -1;
    }
    if (co->stamp) {
        co->out = stamp_open(STDOUT_FILENO, co->stamp);
        co->err = stamp_open(STDERR_FILENO, co->stamp);
        if (!co->out || !co->err) {
            cli_output_close(co);
            cli_error("out of memory for --timestamps");
            return -1;
        }
        fflush(stderr);
        co->prev_err = stderr;
        stderr = co->err; /* glibc lets a program point stderr elsewhere: errors are stamped too */
        *report = co->out;
    } else if (co->forceflush) {
        setvbuf(stdout, NULL, _IOLBF, 0);
    }
    return 0;
}

void cli_output_close(struct cli_output *co)
{
    if (co->prev_err) {
        fflush(stderr);
        stderr = co->prev_err;
        co->prev_err = NULL;
    }
    if (co->out)
        fclose(co->out);
    if (co->err)
        fclose(co->err);
    co->out = co->err = NULL;
}
