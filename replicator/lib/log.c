/* log: qb_log set-up for tandem programs. */
#include "config.h"

#include <errno.h>

#include <pthread.h>

#include "log.h"

static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;

void log_lock(void)
{
	pthread_mutex_lock(&log_mutex);
}

void log_unlock(void)
{
	pthread_mutex_unlock(&log_mutex);
}

int log_init(const struct log_opts *o)
{
	int fd;

	qb_log_init(o->ident, LOG_DAEMON, o->level);
	qb_log_format_set(QB_LOG_STDERR, "%T %N: %b"); /* with milliseconds */
	qb_log_format_set(QB_LOG_SYSLOG, "%b");
	qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_ENABLED, o->to_syslog ? QB_TRUE : QB_FALSE);
	qb_log_ctl(QB_LOG_STDERR, QB_LOG_CONF_ENABLED, o->to_stderr ? QB_TRUE : QB_FALSE);
	qb_log_filter_ctl(QB_LOG_STDERR, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE, "*", o->level);
	qb_log_filter_ctl(QB_LOG_SYSLOG, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE, "*", o->level);
	if (o->file) {
		fd = qb_log_file_open(o->file);
		if (fd < 0)
			return fd;
		qb_log_format_set(fd, "%T %N[%P]: %b");
		qb_log_filter_ctl(fd, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE, "*", o->level);
		qb_log_ctl(fd, QB_LOG_CONF_ENABLED, QB_TRUE);
	}
	return 0;
}

void log_fini(void)
{
	qb_log_fini();
}
