/*
 * arb-local: following the local tandemd (see arb-local.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arb-local.h"
#include "ctlc.h"
#include "log.h"
#include "state.h"

#define CALL_MS 2000	/* a request to tandemd */
#define POLL_MS 2000	/* status without an event */
#define RETRY_MS 250	/* reconnecting to tandemd */
#define MAX_RES 256

struct arb_local {
	qb_loop_t *loop;
	char *run_dir;
	const struct arb_local_ops *ops;
	void *ctx;
	struct ctlc *events; /* NULL while tandemd is not followed */
	struct arb_local_res *res;
	size_t n_res;
	qb_loop_timer_handle timer;
	bool timer_armed;
	bool said_down; /* "tandemd is not running" logged once per outage */
};

/* ---------------------------------------------------------------- status → facts */

static int enum_of(const char *name, const char *(*namer)(int), int max)
{
	int i;

	for (i = 0; name && i <= max; i++)
		if (!strcmp(namer(i), name))
			return i;
	return -1;
}

static const char *role_namer(int i)
{
	return state_role_name((enum state_role)i);
}

static const char *conn_namer(int i)
{
	return state_conn_name((enum state_conn)i);
}

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static int64_t int_of(json_object *o, const char *key, int64_t dflt)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : dflt;
}

static uint64_t uuid_of(json_object *o, const char *key)
{
	const char *s = str_of(o, key);

	return s ? strtoull(s, NULL, 16) : 0;
}

static int disk_of(const char *name)
{
	int d = name ? state_disk_from_name(name) : -1;

	return d < 0 ? DISK_DUNKNOWN : d;
}

/* One resource of `status` as its record; -EINVAL for one the arbiter
 * cannot publish (no peer, a name too long). */
static int parse_res(json_object *o, struct arb_local_res *out)
{
	const char *name = str_of(o, "name"), *peer = str_of(o, "peer"), *s;
	json_object *vols, *jq, *jf;
	int v;
	size_t i, n;

	memset(out, 0, sizeof(*out));
	if (!name || !peer || strlen(name) > ARBMSG_NAME_MAX || strlen(peer) > ARBMSG_NAME_MAX ||
	    !name[0] || !peer[0])
		return -EINVAL;
	strcpy(out->f.resource, name);
	strcpy(out->f.peer, peer);
	out->f.up = json_object_get_boolean(json_object_object_get(o, "up")) ? 1 : 0;
	v = enum_of(str_of(o, "role"), role_namer, ROLE_SECONDARY);
	out->f.role = (uint8_t)(v < 0 ? ROLE_UNKNOWN : v);
	v = enum_of(str_of(o, "connection"), conn_namer, CONN_BEHIND);
	out->f.conn = (uint8_t)(v < 0 ? CONN_STANDALONE : v);
	out->f.disk = DISK_DISKLESS;
	out->f.pdsk = DISK_DUNKNOWN;
	if (json_object_object_get_ex(o, "volumes", &vols) &&
	    json_object_is_type(vols, json_type_array)) {
		n = json_object_array_length(vols);
		for (i = 0; i < n; i++) {
			json_object *jv = json_object_array_get_idx(vols, i), *c;
			int d = disk_of(str_of(jv, "disk"));

			if (i == 0 || d < out->f.disk)
				out->f.disk = (uint8_t)d;
			if (i == 0) {
				out->f.pdsk = (uint8_t)disk_of(str_of(jv, "peer_disk"));
				out->f.current = uuid_of(jv, "current_uuid");
				out->f.bitmap = uuid_of(jv, "bitmap_uuid");
				if (json_object_object_get_ex(jv, "counters", &c))
					out->f.changes = (uint64_t)int_of(c, "oos", 0) / 4;
			}
		}
	}
	if (!out->f.up) {
		out->f.conn = CONN_STANDALONE;
		out->f.pdsk = DISK_DUNKNOWN;
	}
	if (json_object_object_get_ex(o, "fencing", &jf)) {
		s = str_of(jf, "policy");
		out->f.fencing = s && !strcmp(s, "resource-and-stonith") ? 2
				 : s && !strcmp(s, "resource-only")	  ? 1
									  : 0;
		if (json_object_get_boolean(json_object_object_get(jf, "io_frozen")))
			out->f.susp |= ARBMSG_SUSP_FEN;
	}
	out->f.susp |= (uint8_t)(int_of(o, "susp", 0) & 0x0f);
	if (json_object_object_get_ex(o, "quorum", &jq)) {
		s = str_of(jq, "policy");
		out->f.quorum = s && !strcmp(s, "majority");
		s = str_of(jq, "on_no_quorum");
		out->f.on_no_quorum = s && !strcmp(s, "io-error");
	}
	if (out->f.role == ROLE_PRIMARY) {
		int64_t t = int_of(o, "primary_since", 0);

		out->primary_since_s = t > 0 && t <= UINT32_MAX ? (uint32_t)t : 0;
	}
	return 0;
}

static struct arb_local_res *find(const struct arb_local *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n_res; i++)
		if (!strcmp(l->res[i].f.resource, name))
			return &l->res[i];
	return NULL;
}

static bool same(const struct arb_local_res *a, const struct arb_local_res *b)
{
	const struct arbmsg_facts *x = &a->f, *y = &b->f;

	/* `changes` alone does not republish: it moves with every write
	 * while disconnected; it rides along with the next change */
	return !strcmp(x->peer, y->peer) && x->role == y->role && x->disk == y->disk &&
	       x->conn == y->conn && x->pdsk == y->pdsk && x->susp == y->susp &&
	       x->fencing == y->fencing && x->quorum == y->quorum &&
	       x->on_no_quorum == y->on_no_quorum && x->current == y->current &&
	       x->bitmap == y->bitmap && x->up == y->up &&
	       a->primary_since_s == b->primary_since_s;
}

/* Take the status answer's resources; report changes and the gone. */
static void take_status(struct arb_local *l, json_object *ans)
{
	struct arb_local_res *now = calloc(MAX_RES, sizeof(*now));
	json_object *arr;
	size_t i, n = 0, len;

	if (!now)
		return;
	if (json_object_object_get_ex(ans, "resources", &arr) &&
	    json_object_is_type(arr, json_type_array)) {
		len = json_object_array_length(arr);
		for (i = 0; i < len && n < MAX_RES; i++)
			if (parse_res(json_object_array_get_idx(arr, i), &now[n]) == 0)
				n++;
	}
	for (i = 0; i < l->n_res; i++) {
		size_t j;
		bool kept = false;

		for (j = 0; j < n && !kept; j++)
			kept = !strcmp(now[j].f.resource, l->res[i].f.resource);
		if (!kept)
			l->ops->gone(l->ctx, l->res[i].f.resource);
	}
	for (i = 0; i < n; i++) {
		const struct arb_local_res *old = find(l, now[i].f.resource);

		if (!old || !same(old, &now[i]))
			l->ops->facts(l->ctx, &now[i]);
	}
	free(l->res);
	l->res = now;
	l->n_res = n;
}

/* tandemd is gone: every resource is down here. */
static void all_down(struct arb_local *l)
{
	size_t i;

	for (i = 0; i < l->n_res; i++) {
		struct arb_local_res *r = &l->res[i];

		if (!r->f.up && r->f.role != ROLE_PRIMARY)
			continue;
		r->f.up = 0;
		r->f.role = ROLE_UNKNOWN; /* tandemd's state is unknown, not Secondary */
		r->f.conn = CONN_STANDALONE;
		r->f.pdsk = DISK_DUNKNOWN;
		r->f.susp = 0;
		r->primary_since_s = 0;
		l->ops->facts(l->ctx, r);
	}
}

void arb_local_refresh(struct arb_local *l)
{
	json_object *req = json_object_new_object(), *ans = NULL;
	int rc;

	json_object_object_add(req, "cmd", json_object_new_string("status"));
	rc = ctlc_request(l->run_dir, req, ctlc_deadline(CALL_MS), &ans);
	json_object_put(req);
	if (rc == 0 && json_object_get_boolean(json_object_object_get(ans, "ok")))
		take_status(l, ans);
	else if (rc)
		log_debug("arbiter: tandemd status: %s", ctlc_strerror(rc));
	json_object_put(ans);
}

/* ---------------------------------------------------------------- the event stream */

static void stop_events(struct arb_local *l)
{
	if (!l->events)
		return;
	qb_loop_poll_del(l->loop, ctlc_fd(l->events));
	ctlc_close(l->events);
	l->events = NULL;
}

static int32_t on_events(int32_t fd, int32_t revents, void *data)
{
	struct arb_local *l = data;
	json_object *ev;
	bool any = false;
	int rc;

	(void)fd;
	(void)revents;
	while ((rc = ctlc_recv(l->events, ctlc_deadline(0), &ev)) == 0 || rc == -EPROTO) {
		any = true;
		json_object_put(ev);
	}
	if (rc != -ETIMEDOUT) {
		log_warn("arbiter: tandemd's event stream ended (%s): its resources count as down",
			 ctlc_strerror(rc));
		stop_events(l);
		all_down(l);
		l->said_down = true;
		return 0;
	}
	if (any)
		arb_local_refresh(l);
	return 0;
}

static void start_events(struct arb_local *l)
{
	json_object *req = json_object_new_object(), *ans = NULL;
	struct ctlc *c;
	int rc;

	rc = ctlc_open(l->run_dir, ctlc_deadline(CALL_MS), &c);
	if (rc) {
		if (!l->said_down)
			log_info("arbiter: tandemd is not running (%s): waiting for it",
				 ctlc_strerror(rc));
		l->said_down = true;
		json_object_put(req);
		return;
	}
	json_object_object_add(req, "cmd", json_object_new_string("events"));
	json_object_object_add(req, "now", json_object_new_boolean(false));
	rc = ctlc_call(c, req, ctlc_deadline(CALL_MS), &ans);
	json_object_put(req);
	json_object_put(ans);
	if (rc || qb_loop_poll_add(l->loop, QB_LOOP_HIGH, ctlc_fd(c), POLLIN, l, on_events)) {
		log_warn("arbiter: cannot follow tandemd's events: %s", ctlc_strerror(rc));
		ctlc_close(c);
		return;
	}
	l->events = c;
	l->said_down = false;
	log_info("arbiter: following tandemd's events");
	arb_local_refresh(l);
}

static void arm(struct arb_local *l, unsigned int ms);

static void on_timer(void *data)
{
	struct arb_local *l = data;

	l->timer_armed = false;
	if (!l->events)
		start_events(l);
	else
		arb_local_refresh(l);
	arm(l, l->events ? POLL_MS : RETRY_MS);
}

static void arm(struct arb_local *l, unsigned int ms)
{
	if (qb_loop_timer_add(l->loop, QB_LOOP_LOW, (uint64_t)ms * QB_TIME_NS_IN_MSEC, l, on_timer,
			      &l->timer) == 0)
		l->timer_armed = true;
}

int arb_local_new(qb_loop_t *loop, const char *run_dir, const struct arb_local_ops *ops, void *ctx,
		  struct arb_local **out)
{
	struct arb_local *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->run_dir = strdup(run_dir);
	if (!l->run_dir) {
		free(l);
		return -ENOMEM;
	}
	l->loop = loop;
	l->ops = ops;
	l->ctx = ctx;
	arm(l, 1); /* from the loop: the caller holds l first */
	*out = l;
	return 0;
}

void arb_local_free(struct arb_local *l)
{
	if (!l)
		return;
	if (l->timer_armed)
		qb_loop_timer_del(l->loop, l->timer);
	stop_events(l);
	free(l->res);
	free(l->run_dir);
	free(l);
}

bool arb_local_connected(const struct arb_local *l)
{
	return l->events != NULL;
}

int arb_local_get(const struct arb_local *l, const char *res, struct arb_local_res *out)
{
	const struct arb_local_res *r = find(l, res);

	if (!r)
		return -ENOENT;
	*out = *r;
	return 0;
}

void arb_local_each(const struct arb_local *l, void (*fn)(void *arg, const struct arb_local_res *r),
		    void *arg)
{
	size_t i;

	for (i = 0; i < l->n_res; i++)
		fn(arg, &l->res[i]);
}

/* ---------------------------------------------------------------- requests */

static int call(struct arb_local *l, json_object *req, char *why, size_t len)
{
	json_object *ans = NULL;
	int rc = ctlc_request(l->run_dir, req, ctlc_deadline(CALL_MS), &ans);

	json_object_put(req);
	if (rc) {
		snprintf(why, len, "tandemd: %s", ctlc_strerror(rc));
		return ctlc_no_daemon(rc) || rc == -ETIMEDOUT ? -ENOTCONN : rc;
	}
	if (!json_object_get_boolean(json_object_object_get(ans, "ok"))) {
		const char *e = str_of(ans, "error");

		snprintf(why, len, "%s", e ? e : "refused");
		rc = int_of(ans, "exit", 20) == 11 ? -EPERM : -EIO;
		if (e && strstr(e, "unknown command"))
			rc = -ENOTSUP;
	}
	json_object_put(ans);
	return rc;
}

int arb_local_outdate(struct arb_local *l, const char *res, uint8_t *disk, char *why, size_t len)
{
	json_object *req = json_object_new_object();
	struct arb_local_res r;
	int rc;

	json_object_object_add(req, "cmd", json_object_new_string("outdate"));
	json_object_object_add(req, "res", json_object_new_string(res));
	why[0] = '\0';
	rc = call(l, req, why, len);
	arb_local_refresh(l);
	if (arb_local_get(l, res, &r) == 0)
		*disk = r.f.disk;
	else
		*disk = DISK_DUNKNOWN;
	return rc;
}

int arb_local_quorum(struct arb_local *l, bool quorate)
{
	json_object *req = json_object_new_object();
	char why[256];
	int rc;

	json_object_object_add(req, "cmd", json_object_new_string("quorum"));
	json_object_object_add(req, "quorate", json_object_new_boolean(quorate));
	rc = call(l, req, why, sizeof(why));
	if (rc && rc != -ENOTCONN)
		log_warn("arbiter: cannot tell tandemd the quorum: %s", why);
	return rc;
}
