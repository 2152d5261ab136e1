/*
 * ctl: the control socket (doc/control-protocol.md): newline-delimited
 * JSON requests from root, one handler row per command, answered on the
 * daemon's event loop.
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
	struct ctl_client *next;
	char buf[CTL_LINE_MAX];
};

struct ctl {
	struct tandemd *d;
	int lfd;
	char path[108];
	struct ctl_client *clients;
	qb_loop_timer_handle rest_timer; /* out of file descriptors: accept later */
	bool resting;
};

typedef json_object *(*ctl_handler)(struct tandemd *d, json_object *req, struct reply_err *e);

static const char *req_str(json_object *req, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(req, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static bool req_bool(json_object *req, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(req, key, &v) && json_object_get_boolean(v);
}

static uint64_t req_u64(json_object *req, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(req, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

/* The resource a request names, or NULL with e filled. */
static struct resource *req_res(struct tandemd *d, json_object *req, struct reply_err *e)
{
	const char *name = req_str(req, "res");
	struct resource *r;

	if (!name) {
		e->exit = 1;
		snprintf(e->msg, sizeof(e->msg), "the request names no resource ('res')");
		return NULL;
	}
	r = resource_find(d, name);
	if (!r) {
		e->exit = 10;
		snprintf(e->msg, sizeof(e->msg), "'%s' is not a resource of this node in %s", name,
			 d->conf_path);
		snprintf(e->hint, sizeof(e->hint), "'tandemadm sh-resources' lists them");
	}
	return r;
}

static json_object *h_status(struct tandemd *d, json_object *req, struct reply_err *e)
{
	json_object *o = json_object_new_object(), *list = json_object_new_array();
	const char *name = req_str(req, "res");
	unsigned int i;

	if (name && !req_res(d, req, e)) {
		json_object_put(o);
		json_object_put(list);
		return NULL;
	}
	for (i = 0; i < d->n_res; i++)
		if (!name || !strcmp(name, d->res[i]->name))
			json_object_array_add(list, resource_status(d->res[i]));
	json_object_object_add(o, "resources", list);
	return o;
}

#define SIMPLE_HANDLER(fn, call)                                                                   \
	static json_object *fn(struct tandemd *d, json_object *req, struct reply_err *e)           \
	{                                                                                          \
		struct resource *r = req_res(d, req, e);                                           \
                                                                                                   \
		if (!r || (call) < 0)                                                              \
			return NULL;                                                               \
		return json_object_new_object();                                                   \
	}

SIMPLE_HANDLER(h_up, resource_up(r, e))
SIMPLE_HANDLER(h_down, resource_down(r, req_bool(req, "force"), e))
SIMPLE_HANDLER(h_primary, resource_primary(r, req_bool(req, "force"), e))
SIMPLE_HANDLER(h_secondary, resource_secondary(r, req_bool(req, "force"), e))
SIMPLE_HANDLER(h_connect, resource_connect(r, req_bool(req, "discard_my_data"), e))
SIMPLE_HANDLER(h_disconnect, resource_disconnect(r, e))
SIMPLE_HANDLER(h_invalidate, resource_invalidate(r, false, e))
SIMPLE_HANDLER(h_invalidate_remote, resource_invalidate(r, true, e))
SIMPLE_HANDLER(h_pause_sync, resource_pause_sync(r, true, e))
SIMPLE_HANDLER(h_resume_sync, resource_pause_sync(r, false, e))
SIMPLE_HANDLER(h_verify, peer_verify(r, req_u64(req, "start"), req_u64(req, "stop"), e))
SIMPLE_HANDLER(h_resync_oos, peer_resync_oos(r, e))
SIMPLE_HANDLER(h_resume_io, fence_resume_io(r, e))
SIMPLE_HANDLER(h_outdate, resource_outdate(r, e))
SIMPLE_HANDLER(h_new_current_uuid, resource_new_current_uuid(r, req_bool(req, "clear_bitmap"), e))

/* adjust: re-read the configuration (the same as SIGHUP); the resource
 * named must exist afterwards. */
static json_object *h_adjust(struct tandemd *d, json_object *req, struct reply_err *e)
{
	char msg[2048];

	if (tandemd_reload(d, msg, sizeof(msg)) < 0) {
		e->exit = 10;
		snprintf(e->msg, sizeof(e->msg), "%.500s", msg);
		return NULL;
	}
	if (req_str(req, "res") && !req_res(d, req, e))
		return NULL;
	return json_object_new_object();
}

/* inject-fault (TANDEM_FAULT_INJECTION=1 only): make a volume's backing
 * device fail. {"res":R,"volume":N,"fail":"read"|"write"|"rw"|"flush"|"hang"|"none",
 * "meta":bool} */
static json_object *h_inject_fault(struct tandemd *d, json_object *req, struct reply_err *e)
{
	struct resource *r = req_res(d, req, e);
	const char *fail = req_str(req, "fail");
	json_object *jv;
	unsigned int ops, i;
	int vnr = 0;

	if (!r)
		return NULL;
	if (!d->fault_injection) {
		e->exit = 20;
		snprintf(e->msg, sizeof(e->msg),
			 "fault injection is off; start tandemd with TANDEM_FAULT_INJECTION=1 "
			 "(for tests only)");
		return NULL;
	}
	if (json_object_object_get_ex(req, "volume", &jv))
		vnr = json_object_get_int(jv);
	ops = !fail ? 0
	      : !strcmp(fail, "read") ? VOLUME_FAULT_READ
	      : !strcmp(fail, "write") ? VOLUME_FAULT_WRITE
	      : !strcmp(fail, "rw")   ? VOLUME_FAULT_READ | VOLUME_FAULT_WRITE
	      : !strcmp(fail, "hang") ? VOLUME_FAULT_HANG
	      : !strcmp(fail, "flush") ? VOLUME_FAULT_FLUSH
	      : !strcmp(fail, "none") ? 0
				      : ~0u;
	if (ops == ~0u) {
		e->exit = 1;
		snprintf(e->msg, sizeof(e->msg),
			 "'fail' must be read, write, rw, flush, hang or none");
		return NULL;
	}
	if (ops && req_bool(req, "meta"))
		ops |= VOLUME_FAULT_META;
	for (i = 0; i < r->n_vols; i++)
		if ((int)r->vols[i].vnr == vnr)
			break;
	if (i == r->n_vols) {
		e->exit = 10;
		snprintf(e->msg, sizeof(e->msg), "%s has no volume %d", r->name, vnr);
		return NULL;
	}
	volume_set_faults(&r->vols[i], ops);
	log_res(LOG_WARNING, r->name, "volume %d: fault injection: %s%s", vnr, fail ? fail : "none",
		(ops & VOLUME_FAULT_META) ? " (metadata too)" : "");
	return json_object_new_object();
}

static json_object *h_events(struct tandemd *d, json_object *req, struct reply_err *e);

static const struct {
	const char *cmd;
	ctl_handler fn;
} handlers[] = {
	{"status", h_status},
	{"up", h_up},
	{"attach", h_up},
	{"down", h_down},
	{"detach", h_down},
	{"primary", h_primary},
	{"secondary", h_secondary},
	{"new-current-uuid", h_new_current_uuid},
	{"connect", h_connect},
	{"disconnect", h_disconnect},
	{"invalidate", h_invalidate},
	{"invalidate-remote", h_invalidate_remote},
	{"pause-sync", h_pause_sync},
	{"verify", h_verify},
	{"resync-oos", h_resync_oos},
	{"resume-io", h_resume_io},
	{"quorum", quorum_cmd},
	{"outdate", h_outdate},
	{"resume-sync", h_resume_sync},
	{"adjust", h_adjust},
	{"events", h_events},
	{"inject-fault", h_inject_fault},
};

static json_object *dispatch(struct tandemd *d, const char *line)
{
	struct reply_err e = {0};
	json_object *req = json_tokener_parse(line), *res = NULL;
	const char *cmd;
	size_t i;

	if (!req || !json_object_is_type(req, json_type_object)) {
		e.exit = 1;
		snprintf(e.msg, sizeof(e.msg), "the request is not a JSON object");
	} else if (!(cmd = req_str(req, "cmd"))) {
		e.exit = 1;
		snprintf(e.msg, sizeof(e.msg), "the request has no 'cmd'");
	} else {
		for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
			if (!strcmp(handlers[i].cmd, cmd))
				break;
		if (i == sizeof(handlers) / sizeof(handlers[0])) {
			e.exit = 1;
			snprintf(e.msg, sizeof(e.msg), "unknown command '%s'", cmd);
		} else {
			res = handlers[i].fn(d, req, &e);
		}
	}
	json_object_put(req);
	if (res) {
		json_object_object_add(res, "ok", json_object_new_boolean(true));
		return res;
	}
	res = json_object_new_object();
	json_object_object_add(res, "ok", json_object_new_boolean(false));
	json_object_object_add(res, "exit", json_object_new_int(e.exit ? e.exit : 20));
	if (e.ss)
		json_object_object_add(res, "ss", json_object_new_int(e.ss));
	json_object_object_add(res, "error", json_object_new_string(e.msg[0] ? e.msg : "failed"));
	if (e.hint[0])
		json_object_object_add(res, "hint", json_object_new_string(e.hint));
	return res;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* At most one warning of a kind every CTL_LOG_EVERY_MS: true when this
 * one may go out, with *skipped the number left out since the last. */
struct ratelimit {
	uint64_t last;
	unsigned int skipped;
};

static bool ratelimit_ok(struct ratelimit *rl, unsigned int *skipped)
{
	uint64_t now = now_ms();

	if (rl->last && now - rl->last < CTL_LOG_EVERY_MS) {
		rl->skipped++;
		return false;
	}
	*skipped = rl->skipped;
	rl->last = now;
	rl->skipped = 0;
	return true;
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
	qb_loop_poll_del(cl->ctl->d->loop, cl->fd);
	close(cl->fd);
	free(cl->out);
	free(cl);
}

/* A client that does not read what it asked for: dropped, so that its
 * unsent replies and events cannot grow without bound. */
static void client_drop(struct ctl_client *cl, const char *why)
{
	static struct ratelimit rl;
	unsigned int skipped;

	if (!ratelimit_ok(&rl, &skipped))
		; /* said recently */
	else if (!skipped)
		log_warn("control client dropped: %s (%zu bytes unsent)", why,
			 cl->out_len - cl->out_off);
	else
		log_warn("control client dropped: %s (%zu bytes unsent); %u more since the last "
			 "message",
			 why, cl->out_len - cl->out_off, skipped);
	client_close(cl);
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

static bool is_events_request(const char *line, json_object *res)
{
	json_object *req = json_tokener_parse(line), *ok;
	bool yes = req && req_str(req, "cmd") && !strcmp(req_str(req, "cmd"), "events") &&
		   json_object_object_get_ex(res, "ok", &ok) && json_object_get_boolean(ok);

	json_object_put(req);
	return yes;
}

static bool events_now(const char *line)
{
	json_object *req = json_tokener_parse(line);
	bool now = req && req_bool(req, "now");

	json_object_put(req);
	return now;
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

static json_object *h_events(struct tandemd *d, json_object *req, struct reply_err *e)
{
	return json_object_new_object();
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
		int rc;

		*nl = '\0';
		res = dispatch(cl->ctl->d, cl->buf);
		if (is_events_request(cl->buf, res)) {
			cl->events = true;
			rc = send_line(cl, res);
			if (rc == 0 && events_now(cl->buf))
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
	static struct ratelimit rl;
	unsigned int skipped;

	if (ratelimit_ok(&rl, &skipped))
		log_warn("control socket: cannot accept a connection: %s; trying again every "
			 "%d ms",
			 strerror(err), CTL_ACCEPT_REST_MS);
	qb_loop_poll_del(c->d->loop, c->lfd);
	if (qb_loop_timer_add(c->d->loop, QB_LOOP_LOW, CTL_ACCEPT_REST_MS * QB_TIME_NS_IN_MSEC, c,
			      listen_again, &c->rest_timer) == 0)
		c->resting = true;
	else
		listen_again(c);
}

static int32_t ctl_acceptable(int32_t fd, int32_t revents, void *data)
{
	struct ctl *c = data;
	struct ucred cred;
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
		const char *msg = "{\"ok\":false,\"exit\":20,\"error\":\"only root may control "
				  "tandemd\"}\n";

		log_warn("control connection from uid %d refused: only root", (int)cred.uid);
		/* a short line on a new socket: it fits */
		if (send(cfd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			log_debug("refused client went away");
		close(cfd);
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
	cl->next = c->clients;
	c->clients = cl;
	return 0;
}

int ctl_start(struct tandemd *d, const char *path, struct ctl **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ctl *c;
	int rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
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
		free(c);
		return rc;
	}
	rc = qb_loop_poll_add(d->loop, QB_LOOP_MED, c->lfd, POLLIN, c, ctl_acceptable);
	if (rc != 0) {
		close(c->lfd);
		free(c);
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
	free(c);
}
