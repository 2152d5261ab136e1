/*
 * log: the one logging API of tandem programs, on libqb's qb_log
 * (targets stderr, syslog, file), with a per-resource prefix.
 */
#ifndef TANDEM_LOG_H
#define TANDEM_LOG_H

#include <stdbool.h>
#include <syslog.h>

#include <qb/qblog.h>

struct log_opts {
	const char *ident;     /* program name for syslog */
	bool to_stderr;
	bool to_syslog;
	const char *file;      /* NULL: no file target */
	int level;             /* LOG_ERR .. LOG_DEBUG */
};

int log_init(const struct log_opts *o);
void log_fini(void);

#define log_err(...)   qb_log(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  qb_log(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  qb_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) qb_log(LOG_DEBUG, __VA_ARGS__)
/* Per-resource messages: "[res] message". */
#define log_res(level, res, fmt, ...) qb_log(level, "[%s] " fmt, (res), ##__VA_ARGS__)

#endif
