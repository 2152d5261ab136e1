/*
 * ctl: the control socket (doc/control-protocol.md): newline-delimited
 * JSON requests from root, one handler row per command, answered on the
 * daemon's event loop. At most CTL_CLIENTS_MAX clients; one that sends
 * no whole request for CTL_IDLE_MS is closed (not an event stream).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ratelimit.h"
#include "control/control.h"
#include "front/nbd-srv.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

#define CTL_LINE_MAX (64 * 1024)
/* Replies and events a client has not read yet, per client: beyond this
 * (or with no progress for CTL_STALL_MS) the client is dropped. */
#define CTL_OUT_MAX (4 * 1024 * 1024)
#define CTL_OUT_MAX_TEXT "4 MiB"
#define CTL_STALL_MS 60000
#define CTL_STALL_TEXT "60 s"
#define CTL_LOG_EVERY_MS 10000
#define CTL_ACCEPT_REST_MS 200
/* Clients at once (the event streams included); one more gets an error
 * line and is closed. */
#define CTL_CLIENTS_MAX 64
/* A client that sends no whole request this long after it connected, or
 * after its last answer went out, is closed. */
#define CTL_IDLE_MS 10000
#define CTL_IDLE_TEXT "10 s"

/* What clients can make us log, each kind at most every CTL_LOG_EVERY_MS */
enum ctl_log { CTL_LOG_DROP, CTL_LOG_REST, CTL_LOG_REFUSED, CTL_LOG_IDLE, CTL_LOG_KINDS };

struct ctl_client {
	struct ctl *ctl;
	int fd;
	bool events;	/* switched to the event stream */
	bool closing;	/* closed once its output is sent */
	int32_t polled; /* the events it is polled for */
	size_t len;
	char *out; /* unsent output: out[out_off, out_len) */
	size_t out_off, out_len, out_cap;
	uint64_t progress_ms; /* output pending: when the client last took some */
	qb_loop_timer_handle stall_timer;
	bool stall_armed;
	uint64_t active_ms; /* connected, or its last answer went out */
	qb_loop_timer_handle idle_timer;
	bool idle_armed;
	struct ctl_client *next;
	char buf[CTL_LINE_MAX];
};

struct ctl {
	struct tandemd *d;
	int lfd;
	char path[108];
	struct ctl_client *clients;
	unsigned int n_clients;
	qb_loop_timer_handle rest_timer; /* out of file descriptors: accept later */
	bool resting;
	struct ratelimit *rl[CTL_LOG_KINDS];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void client_events(struct ctl_client *cl);

/* Remove the client from the loop (also from its own callback, which then
 * returns 0), close and free it. */
static void client_close(struct ctl_client *cl)
{
	struct ctl_client **pp;

	for (pp = &cl->ctl->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	}
	if (cl->stall_armed)
		qb_loop_timer_del(cl->ctl->d->loop, cl->stall_timer);
	if (cl->idle_armed)
		qb_loop_timer_del(cl->ctl->d->loop, cl->idle_timer);
	cl->ctl->n_clients--;
	qb_loop_poll_del(cl->ctl->d->loop, cl->fd);
	close(cl->fd);
	free(cl->out);
	free(cl);
}

/* A client that does not read what it asked for: dropped, so that its
 * unsent replies and events cannot grow without bound. */
static void client_drop(struct ctl_client *cl, const char *why)
{
	char note[96];

	if (ratelimit_ok(cl->ctl->rl[CTL_LOG_DROP], note, sizeof(note)))
		log_warn("control client dropped: %s (%zu bytes unsent)%s", why,
			 cl->out_len - cl->out_off, note);
	client_close(cl);
}

/* A client that sends nothing is closed after CTL_IDLE_MS; one that waits
 * for its answers to go out has the stall check, an event stream may rest
 * as long as it likes. */
static void idle_check(void *data)
{
	struct ctl_client *cl = data;
	uint64_t now = now_ms(), since;
	char note[96];

	cl->idle_armed = false;
	if (cl->events)
		return;
	if (cl->out_off < cl->out_len)
		cl->active_ms = now;
	since = now - (cl->active_ms > cl->progress_ms ? cl->active_ms : cl->progress_ms);
	if (since >= CTL_IDLE_MS) {
		if (ratelimit_ok(cl->ctl->rl[CTL_LOG_IDLE], note, sizeof(note)))
			log_warn("control client closed: no request for " CTL_IDLE_TEXT "%s", note);
		client_close(cl);
		return;
	}
	if (qb_loop_timer_add(cl->ctl->d->loop, QB_LOOP_LOW,
			      (CTL_IDLE_MS - since) * QB_TIME_NS_IN_MSEC, cl, idle_check,
			      &cl->idle_timer) == 0)
		cl->idle_armed = true;
}

static void stall_check(void *data)
{
	struct ctl_client *cl = data;
	uint64_t idle;

	cl->stall_armed = false;
	if (cl->out_off == cl->out_len)
		return;
	idle = now_ms() - cl->progress_ms;
	if (idle >= CTL_STALL_MS) {
		client_drop(cl, "it has not read its replies for " CTL_STALL_TEXT);
		return;
	}
	if (qb_loop_timer_add(cl->ctl->d->loop, QB_LOOP_LOW,
			      (CTL_STALL_MS - idle) * QB_TIME_NS_IN_MSEC, cl, stall_check,
			      &cl->stall_timer) == 0)
		cl->stall_armed = true;
}

/* Send what is pending; 0 when all of it or part went (or nothing could),
 * a negative errno when the client is gone. */
static int client_flush(struct ctl_client *cl)
{
	ssize_t w;

	while (cl->out_off < cl->out_len) {
		w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		cl->out_off += (size_t)w;
		cl->progress_ms = now_ms();
	}
	cl->out_off = cl->out_len = 0;
	if (cl->out_cap > CTL_LINE_MAX) { /* a large reply went: give its memory back */
		free(cl->out);
		cl->out = NULL;
		cl->out_cap = 0;
	}
	if (cl->stall_armed) {
		qb_loop_timer_del(cl->ctl->d->loop, cl->stall_timer);
		cl->stall_armed = false;
	}
	client_events(cl);
	return 0;
}

/*
 * Write to a client: straight to the socket while nothing is pending, the
 * rest (a short send on the non-blocking socket) to its buffer, sent when
 * the socket is writable. -ENOBUFS when the buffer would pass
 * CTL_OUT_MAX, another negative errno when the client is gone.
 */
static int client_write(struct ctl_client *cl, const char *data, size_t n)
{
	size_t pending;
	ssize_t w;

	while (n && cl->out_off == cl->out_len) {
		w = send(cl->fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		data += w;
		n -= (size_t)w;
	}
	if (!n)
		return 0;
	pending = cl->out_len - cl->out_off;
	if (pending + n > CTL_OUT_MAX)
		return -ENOBUFS;
	if (cl->out_off && cl->out_len + n > cl->out_cap) {
		memmove(cl->out, cl->out + cl->out_off, pending);
		cl->out_off = 0;
		cl->out_len = pending;
	}
	if (cl->out_len + n > cl->out_cap) {
		size_t cap = cl->out_cap ? cl->out_cap : 4096;
		char *p;

		while (cap < cl->out_len + n)
			cap *= 2;
		p = realloc(cl->out, cap);
		if (!p)
			return -ENOMEM;
		cl->out = p;
		cl->out_cap = cap;
	}
	memcpy(cl->out + cl->out_len, data, n);
	cl->out_len += n;
	if (!pending) { /* it starts waiting for the client now */
		cl->progress_ms = now_ms();
		client_events(cl);
		if (!cl->stall_armed && qb_loop_timer_add(cl->ctl->d->loop, QB_LOOP_LOW,
							  CTL_STALL_MS * QB_TIME_NS_IN_MSEC, cl,
							  stall_check, &cl->stall_timer) == 0)
			cl->stall_armed = true;
	}
	return 0;
}

/* One JSON line to a client; the client is closed (and the result
 * negative) when that fails. */
static int send_line(struct ctl_client *cl, json_object *o)
{
	const char *out = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	int rc = client_write(cl, out, strlen(out));

	if (rc == 0)
		rc = client_write(cl, "\n", 1);
	if (rc == -ENOBUFS)
		client_drop(cl, "more than " CTL_OUT_MAX_TEXT " of replies or events unread");
	else if (rc < 0)
		client_close(cl);
	return rc;
}

/* With "now": the current state first, one "exists" event per resource
 * and volume, then {"event":"exists","end":true}. Negative when the
 * client is gone (closed). */
static int send_exists(struct ctl_client *cl)
{
	struct tandemd *d = cl->ctl->d;
	unsigned int i;
	int rc = 0;

	for (i = 0; i < d->n_res && rc == 0; i++) {
		json_object *o = resource_status(d->res[i]);

		json_object_object_add(o, "event", json_object_new_string("exists"));
		rc = send_line(cl, o);
		json_object_put(o);
	}
	if (rc == 0) {
		json_object *end = json_object_new_object();

		json_object_object_add(end, "event", json_object_new_string("exists"));
		json_object_object_add(end, "end", json_object_new_boolean(true));
		rc = send_line(cl, end);
		json_object_put(end);
	}
	return rc;
}

void ctl_event(struct tandemd *d, const char *res, const char *what, const char *old,
	       const char *new_value)
{
	struct ctl_client *cl, *next;
	json_object *o;
	struct timespec ts;
	struct tm tm;
	char when[40];

	if (!d->ctl)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%03ldZ", ts.tv_nsec / 1000000);
	o = json_object_new_object();
	json_object_object_add(o, "event", json_object_new_string("change"));
	json_object_object_add(o, "res", json_object_new_string(res));
	json_object_object_add(o, "what", json_object_new_string(what));
	json_object_object_add(o, "old", json_object_new_string(old));
	json_object_object_add(o, "new", json_object_new_string(new_value));
	json_object_object_add(o, "time", json_object_new_string(when));
	for (cl = d->ctl->clients; cl; cl = next) {
		next = cl->next;
		if (cl->events)
			send_line(cl, o); /* closes a client gone or too slow to keep up */
	}
	json_object_put(o);
}

/* Read requests and answer them; 0, or negative when the client is
 * closed. */
static int client_read(struct ctl_client *cl)
{
	ssize_t r;
	char *nl;

	r = read(cl->fd, cl->buf + cl->len, sizeof(cl->buf) - cl->len - 1);
	if (r <= 0) {
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		client_close(cl);
		return -ECONNRESET;
	}
	cl->len += (size_t)r;
	cl->buf[cl->len] = '\0';
	while ((nl = memchr(cl->buf, '\n', cl->len))) {
		json_object *res;
		bool now;
		int rc;

		*nl = '\0';
		res = ctl_cmd_dispatch(cl->ctl->d, cl->buf);
		if (ctl_cmd_is_events(cl->buf, res, &now)) {
			cl->events = true;
			rc = send_line(cl, res);
			if (rc == 0 && now)
				rc = send_exists(cl);
			json_object_put(res);
			if (rc == 0)
				cl->len = 0; /* an event client sends nothing more */
			return rc;
		}
		rc = send_line(cl, res);
		json_object_put(res);
		if (rc < 0)
			return rc;
		cl->active_ms = now_ms();
		cl->len -= (size_t)(nl + 1 - cl->buf);
		memmove(cl->buf, nl + 1, cl->len);
	}
	if (cl->len >= sizeof(cl->buf) - 1) {
		const char *msg = "{\"ok\":false,\"exit\":1,\"error\":\"request longer than 64 KiB\"}\n";

		if (client_write(cl, msg, strlen(msg)) < 0 || cl->out_off == cl->out_len) {
			client_close(cl);
			return -EMSGSIZE;
		}
		cl->closing = true; /* once the answers before it and it are out */
		cl->len = 0;
		client_events(cl);
	}
	return 0;
}

static int32_t client_ready(int32_t fd, int32_t revents, void *data)
{
	struct ctl_client *cl = data;
	int rc;

	if (revents & POLLOUT) {
		rc = client_flush(cl);
		if (rc < 0) {
			client_close(cl);
			return 0;
		}
		if (cl->closing && cl->out_off == cl->out_len) {
			client_close(cl);
			return 0;
		}
	}
	if (!cl->closing && (revents & (POLLIN | POLLHUP | POLLERR)))
		client_read(cl);
	else if (cl->closing && (revents & (POLLHUP | POLLERR)))
		client_close(cl);
	return 0;
}

/* The events to poll a client for: its requests, and while output is
 * pending, room to send it. */
static void client_events(struct ctl_client *cl)
{
	int32_t ev = (cl->closing ? 0 : POLLIN) | (cl->out_off < cl->out_len ? POLLOUT : 0);

	if (ev == cl->polled)
		return;
	if (qb_loop_poll_mod(cl->ctl->d->loop, QB_LOOP_MED, cl->fd, ev, cl, client_ready) == 0)
		cl->polled = ev;
}

static int32_t ctl_acceptable(int32_t fd, int32_t revents, void *data);

/* Out of file descriptors: the listener rests, instead of waking the loop
 * for a connection it cannot take, and tries again a little later. */
static void listen_again(void *data)
{
	struct ctl *c = data;

	c->resting = false;
	if (qb_loop_poll_add(c->d->loop, QB_LOOP_MED, c->lfd, POLLIN, c, ctl_acceptable) != 0)
		log_err("cannot poll the control socket again; control requests go unanswered");
}

static void listen_rest(struct ctl *c, int err)
{
	char note[96];

	if (ratelimit_ok(c->rl[CTL_LOG_REST], note, sizeof(note)))
		log_warn("control socket: cannot accept a connection: %s; trying again every "
			 "%d ms%s",
			 strerror(err), CTL_ACCEPT_REST_MS, note);
	qb_loop_poll_del(c->d->loop, c->lfd);
	if (qb_loop_timer_add(c->d->loop, QB_LOOP_LOW, CTL_ACCEPT_REST_MS * QB_TIME_NS_IN_MSEC, c,
			      listen_again, &c->rest_timer) == 0)
		c->resting = true;
	else
		listen_again(c);
}

/* A connection not served: one error line (short, on a new socket: it
 * fits) and closed. */
static void refuse(struct ctl *c, int cfd, const struct ucred *cr, const char *why)
{
	char line[256], note[96];

	if (ratelimit_ok(c->rl[CTL_LOG_REFUSED], note, sizeof(note)))
		log_warn("control connection from pid %d (uid %d, gid %d) refused: %s%s",
			 (int)cr->pid, (int)cr->uid, (int)cr->gid, why, note);
	snprintf(line, sizeof(line), "{\"ok\":false,\"exit\":20,\"error\":\"%s\"}\n", why);
	if (send(cfd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("refused client went away");
	close(cfd);
}

static int32_t ctl_acceptable(int32_t fd, int32_t revents, void *data)
{
	struct ctl *c = data;
	struct ucred cred = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
	socklen_t len = sizeof(cred);
	struct ctl_client *cl;
	int cfd;

	cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			listen_rest(c, errno);
		return 0;
	}
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		refuse(c, cfd, &cred, "only root may control tandemd");
		return 0;
	}
	if (c->n_clients >= CTL_CLIENTS_MAX) {
		refuse(c, cfd, &cred, "too many control connections (64): try again later");
		return 0;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl || qb_loop_poll_add(c->d->loop, QB_LOOP_MED, cfd, POLLIN, cl, client_ready) != 0) {
		free(cl);
		close(cfd);
		return 0;
	}
	cl->ctl = c;
	cl->fd = cfd;
	cl->polled = POLLIN;
	cl->active_ms = now_ms();
	cl->next = c->clients;
	c->clients = cl;
	c->n_clients++;
	if (qb_loop_timer_add(c->d->loop, QB_LOOP_LOW, CTL_IDLE_MS * QB_TIME_NS_IN_MSEC, cl,
			      idle_check, &cl->idle_timer) == 0)
		cl->idle_armed = true;
	return 0;
}

static void ctl_free(struct ctl *c)
{
	unsigned int i;

	for (i = 0; i < CTL_LOG_KINDS; i++)
		ratelimit_free(c->rl[i]);
	free(c);
}

int ctl_start(struct tandemd *d, const char *path, struct ctl **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	unsigned int i;
	struct ctl *c;
	int rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (i = 0; i < CTL_LOG_KINDS; i++) {
		rc = ratelimit_new(1, CTL_LOG_EVERY_MS, &c->rl[i]);
		if (rc < 0) {
			ctl_free(c);
			return rc;
		}
	}
	c->d = d;
	snprintf(c->path, sizeof(c->path), "%s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->lfd < 0 || bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 || listen(c->lfd, SOMAXCONN) < 0) {
		rc = -errno;
		if (c->lfd >= 0)
			close(c->lfd);
		ctl_free(c);
		return rc;
	}
	rc = qb_loop_poll_add(d->loop, QB_LOOP_MED, c->lfd, POLLIN, c, ctl_acceptable);
	if (rc != 0) {
		close(c->lfd);
		ctl_free(c);
		return rc < 0 ? rc : -EIO;
	}
	*out = c;
	return 0;
}

void ctl_stop(struct ctl *c)
{
	if (!c)
		return;
	while (c->clients)
		client_close(c->clients);
	if (c->resting)
		qb_loop_timer_del(c->d->loop, c->rest_timer);
	else
		qb_loop_poll_del(c->d->loop, c->lfd);
	if (c->d->ctl == c)
		c->d->ctl = NULL;
	close(c->lfd);
	unlink(c->path);
	ctl_free(c);
}
