/*
 * ctlc: a client of tandemd's control socket (see ctlc.h). The socket is
 * non-blocking; every wait is a poll() bounded by the caller's deadline.
 * Received bytes stay in a buffer of CTLC_LINE_MAX, so that the lines
 * that arrive together with an answer (the events after "events") are
 * returned by the next ctlc_recv().
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctlc.h"

/* How long to wait before trying again to connect to a full backlog
 * (a Unix socket cannot be polled for that). */
#define CTLC_RETRY_MS 10

struct ctlc {
	int fd;
	size_t len; /* bytes received, not yet returned: buf[0..len) */
	char buf[CTLC_LINE_MAX];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ctlc_deadline(int64_t timeout_ms)
{
	return timeout_ms < 0 ? CTLC_FOREVER : now_ms() + timeout_ms;
}

/* Milliseconds left for poll(): -1 without a deadline, 0 once it passed. */
static int ms_left(int64_t deadline)
{
	int64_t left;

	if (deadline == CTLC_FOREVER)
		return -1;
	left = deadline - now_ms();
	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* Wait until fd is ready for events (or has an error or hang-up, which
 * the next send or recv reports). */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	int n, ms;

	for (;;) {
		ms = ms_left(deadline);
		if (ms == 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int sleep_ms(int64_t deadline, int ms)
{
	struct timespec ts;
	int left = ms_left(deadline);

	if (left == 0)
		return -ETIMEDOUT;
	if (left > 0 && left < ms)
		ms = left;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	return 0;
}

static int connect_by(int fd, const struct sockaddr_un *sa, int64_t deadline)
{
	socklen_t len = sizeof(int);
	int err, rc;

	for (;;) {
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno == EISCONN)
			return 0;
		if (errno == EINPROGRESS || errno == EALREADY) {
			rc = wait_fd(fd, POLLOUT, deadline);
			if (rc)
				return rc;
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
				return -errno;
			return -err;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		/* EAGAIN: the daemon's backlog is full; it accepts soon */
		rc = sleep_ms(deadline, CTLC_RETRY_MS);
		if (rc)
			return rc;
	}
}

int ctlc_open(const char *run_dir, int64_t deadline, struct ctlc **out)
{
	return ctlc_open_sock(run_dir, CTLC_SOCK_NAME, deadline, out);
}

int ctlc_open_sock(const char *run_dir, const char *name, int64_t deadline, struct ctlc **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ctlc *c;
	int n, rc;

	*out = NULL;
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", run_dir, name);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->len = 0;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		rc = -errno;
		free(c);
		return rc;
	}
	rc = connect_by(c->fd, &sa, deadline);
	if (rc) {
		ctlc_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

int ctlc_fd(const struct ctlc *c)
{
	return c->fd;
}

void ctlc_close(struct ctlc *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

/* All of p, in as many sends as the socket takes. */
static int send_all(struct ctlc *c, const char *p, size_t len, int64_t deadline)
{
	ssize_t n;
	int rc;

	while (len > 0) {
		n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		rc = wait_fd(c->fd, POLLOUT, deadline);
		if (rc)
			return rc;
	}
	return 0;
}

int ctlc_send(struct ctlc *c, json_object *req, int64_t deadline)
{
	const char *line;
	size_t len;
	int rc;

	if (!json_object_is_type(req, json_type_object))
		return -EINVAL;
	if (!json_object_object_get_ex(req, "v", NULL) &&
	    json_object_object_add(req, "v", json_object_new_int(CTLC_VERSION)) < 0)
		return -ENOMEM;
	line = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	if (!line)
		return -ENOMEM;
	len = strlen(line);
	if (len >= CTLC_LINE_MAX)
		return -EMSGSIZE;
	rc = send_all(c, line, len, deadline);
	return rc ? rc : send_all(c, "\n", 1, deadline);
}

/* The line buf[0..end) as a JSON object (only blanks may follow it). */
static int parse_line(const char *buf, size_t end, json_object **out)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;
	size_t i;

	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, buf, (int)end);
	i = o && json_tokener_get_error(tok) == json_tokener_success
		? json_tokener_get_parse_end(tok)
		: 0;
	json_tokener_free(tok);
	while (o && i < end && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r'))
		i++;
	if (!o || i != end || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EPROTO;
	}
	*out = o;
	return 0;
}

int ctlc_recv(struct ctlc *c, int64_t deadline, json_object **out)
{
	char *nl;
	size_t end;
	ssize_t n;
	int rc;

	*out = NULL;
	while (!(nl = memchr(c->buf, '\n', c->len))) {
		if (c->len >= sizeof(c->buf))
			return -EMSGSIZE;
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (n > 0) {
			c->len += (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET; /* closed, maybe in the middle of a line */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		rc = wait_fd(c->fd, POLLIN, deadline);
		if (rc)
			return rc;
	}
	end = (size_t)(nl - c->buf);
	rc = parse_line(c->buf, end, out);
	c->len -= end + 1;
	memmove(c->buf, nl + 1, c->len);
	return rc;
}

int ctlc_call(struct ctlc *c, json_object *req, int64_t deadline, json_object **out)
{
	int rc = ctlc_send(c, req, deadline);

	if (rc) {
		*out = NULL;
		return rc;
	}
	return ctlc_recv(c, deadline, out);
}

int ctlc_request(const char *run_dir, json_object *req, int64_t deadline, json_object **out)
{
	return ctlc_request_sock(run_dir, CTLC_SOCK_NAME, req, deadline, out);
}

int ctlc_request_sock(const char *run_dir, const char *name, json_object *req, int64_t deadline,
		      json_object **out)
{
	struct ctlc *c;
	int rc;

	*out = NULL;
	rc = ctlc_open_sock(run_dir, name, deadline, &c);
	if (rc)
		return rc;
	rc = ctlc_call(c, req, deadline, out);
	ctlc_close(c);
	return rc;
}

bool ctlc_no_daemon(int rc)
{
	return rc == -ENOENT || rc == -ECONNREFUSED;
}

const char *ctlc_strerror(int rc)
{
	if (ctlc_no_daemon(rc))
		return "not running (cannot connect)";
	switch (rc) {
	case -ETIMEDOUT:
		return "no answer in time";
	case -ECONNRESET:
		return "closed the connection without an answer";
	case -EPROTO:
		return "bad answer";
	case -EMSGSIZE:
		return "a line longer than 4 MiB";
	default:
		return strerror(-rc);
	}
}
