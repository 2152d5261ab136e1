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
#include "tandemd.h"

#define CTL_LINE_MAX (64 * 1024)

struct ctl_client {
	struct ctl *ctl;
	int fd;
	bool events; /* switched to the event stream */
	size_t len;
	struct ctl_client *next;
	char buf[CTL_LINE_MAX];
};

struct ctl {
	struct tandemd *d;
	int lfd;
	char path[108];
	struct ctl_client *clients;
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
 * device fail. {"res":R,"volume":N,"fail":"read"|"write"|"rw"|"none",
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
	      : !strcmp(fail, "none") ? 0
				      : ~0u;
	if (ops == ~0u) {
		e->exit = 1;
		snprintf(e->msg, sizeof(e->msg), "'fail' must be read, write, rw, hang or none");
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
	qb_loop_poll_del(cl->ctl->d->loop, cl->fd);
	close(cl->fd);
	free(cl);
}

static int send_line(int fd, json_object *o)
{
	const char *out = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	if (send(fd, out, strlen(out), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
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
 * and volume, then {"event":"exists","end":true}. */
static int send_exists(struct ctl_client *cl)
{
	struct tandemd *d = cl->ctl->d;
	unsigned int i;
	int rc = 0;

	for (i = 0; i < d->n_res && rc == 0; i++) {
		json_object *o = resource_status(d->res[i]);

		json_object_object_add(o, "event", json_object_new_string("exists"));
		rc = send_line(cl->fd, o);
		json_object_put(o);
	}
	if (rc == 0) {
		json_object *end = json_object_new_object();

		json_object_object_add(end, "event", json_object_new_string("exists"));
		json_object_object_add(end, "end", json_object_new_boolean(true));
		rc = send_line(cl->fd, end);
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
		if (cl->events && send_line(cl->fd, o) < 0)
			client_close(cl); /* gone, or too slow to keep up */
	}
	json_object_put(o);
}

static json_object *h_events(struct tandemd *d, json_object *req, struct reply_err *e)
{
	return json_object_new_object();
}

static int32_t client_readable(int32_t fd, int32_t revents, void *data)
{
	struct ctl_client *cl = data;
	ssize_t r;
	char *nl;

	r = read(fd, cl->buf + cl->len, sizeof(cl->buf) - cl->len - 1);
	if (r <= 0) {
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		client_close(cl);
		return 0;
	}
	cl->len += (size_t)r;
	cl->buf[cl->len] = '\0';
	while ((nl = memchr(cl->buf, '\n', cl->len))) {
		json_object *res;
		const char *out;

		*nl = '\0';
		res = dispatch(cl->ctl->d, cl->buf);
		if (is_events_request(cl->buf, res)) {
			cl->events = true;
			if (send_line(fd, res) < 0 ||
			    (events_now(cl->buf) && send_exists(cl) < 0)) {
				json_object_put(res);
				client_close(cl);
				return 0;
			}
			json_object_put(res);
			cl->len = 0; /* an event client sends nothing more */
			return 0;
		}
		out = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN);
		if (send(fd, out, strlen(out), MSG_NOSIGNAL) < 0 ||
		    send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
			json_object_put(res);
			client_close(cl);
			return 0;
		}
		json_object_put(res);
		cl->len -= (size_t)(nl + 1 - cl->buf);
		memmove(cl->buf, nl + 1, cl->len);
	}
	if (cl->len >= sizeof(cl->buf) - 1) {
		const char *msg = "{\"ok\":false,\"exit\":1,\"error\":\"request longer than 64 KiB\"}\n";

		if (send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0)
			log_warn("control client went away");
		client_close(cl);
		return 0;
	}
	return 0;
}

static int32_t ctl_acceptable(int32_t fd, int32_t revents, void *data)
{
	struct ctl *c = data;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct ctl_client *cl;
	int cfd;

	cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0)
		return 0;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		const char *msg = "{\"ok\":false,\"exit\":20,\"error\":\"only root may control "
				  "tandemd\"}\n";

		log_warn("control connection from uid %d refused: only root", (int)cred.uid);
		if (send(cfd, msg, strlen(msg), MSG_NOSIGNAL) < 0)
			log_debug("refused client went away");
		close(cfd);
		return 0;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl || qb_loop_poll_add(c->d->loop, QB_LOOP_MED, cfd, POLLIN, cl, client_readable) !=
			   0) {
		free(cl);
		close(cfd);
		return 0;
	}
	cl->ctl = c;
	cl->fd = cfd;
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
	    chmod(path, 0600) < 0 || listen(c->lfd, 16) < 0) {
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
	qb_loop_poll_del(c->d->loop, c->lfd);
	close(c->lfd);
	unlink(c->path);
	free(c);
}
