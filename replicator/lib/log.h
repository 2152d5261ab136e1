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

/*
 * qb_log drops a message logged while another thread is inside qb_log (its
 * recursion guard is process-wide), so every call is serialised here:
 * the daemon logs from its NBD, replication and resync threads.
 */
void log_lock(void);
void log_unlock(void);
#define log_qb(...)                                                                                \
	do {                                                                                       \
		log_lock();                                                                        \
		qb_log(__VA_ARGS__);                                                               \
		log_unlock();                                                                      \
	} while (0)

#define log_err(...)   log_qb(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_qb(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  log_qb(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_qb(LOG_DEBUG, __VA_ARGS__)
/* Per-resource messages: "[res] message". */
#define log_res(level, res, fmt, ...) log_qb(level, "[%s] " fmt, (res), ##__VA_ARGS__)

#endif
