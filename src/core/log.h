/* log: one logging API for the whole program (stderr, a log file, or syslog). */
#ifndef NETRIG_LOG_H
#define NETRIG_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_LVL_ERR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DBG };

/* Called once at start-up, before any thread exists. */
void log_setup(const char *prog, bool use_syslog, enum log_level max_level);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* in with its control characters (C0, DEL, C1) and its bytes that are not valid UTF-8 written
 * as \n, \r, \t or \xNN (cut to fit outlen): text from a peer, safe to print or echo. */
void log_escape(const char *in, char *out, size_t outlen);
/* Re-open the syslog connection, or the log file (after SIGHUP: logrotate). */
void log_reopen(void);
/* Log lines, and everything else written to standard output and standard error, go to path
 * (created mode 0644, appended; as iperf3's --logfile). Called before threads start; the path
 * is kept for log_reopen. 0, or -errno with err naming the file. */
int log_to_file(const char *path, char *err, size_t errlen);
/* Each log line starts with the local time in strftime format fmt (NULL: none); fmt is kept.
 * Called before threads start. */
void log_stamp(const char *fmt);
/* The local time now in strftime format fmt, into buf (at most len - 1 bytes; "" if it does
 * not fit). */
void log_format_time(const char *fmt, char *buf, size_t len);

#define LOG_ERR(...)  log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define LOG_WARN(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define LOG_INFO(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define LOG_DBG(...)  log_msg(LOG_LVL_DBG, __VA_ARGS__)

#endif
