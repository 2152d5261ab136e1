/*
 * ctl-cmd: the commands of the control socket (doc/control-protocol.md),
 * one handler row per command: a request line in, its answer out. The
 * socket and its clients are ctl.c's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "control/control.h"
#include "peer/peer.h"
#include "volume/volume.h"

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

/* events: the answer; ctl.c switches the connection to the event stream
 * (ctl_cmd_is_events) */
static json_object *h_events(struct tandemd *d, json_object *req, struct reply_err *e)
{
	return json_object_new_object();
}

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

json_object *ctl_cmd_dispatch(struct tandemd *d, const char *line)
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

bool ctl_cmd_is_events(const char *line, json_object *res, bool *now)
{
	json_object *req = json_tokener_parse(line), *ok;
	bool yes = req && req_str(req, "cmd") && !strcmp(req_str(req, "cmd"), "events") &&
		   json_object_object_get_ex(res, "ok", &ok) && json_object_get_boolean(ok);

	*now = yes && req_bool(req, "now");
	json_object_put(req);
	return yes;
}
