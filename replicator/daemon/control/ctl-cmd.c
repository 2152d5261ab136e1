/*
 * ctl-cmd: the commands of the control socket (doc/control-protocol.md),
 * one handler row per command: a request line in, its answer out. The
 * socket and its clients are ctl.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "control/control.h"
#include "peer/peer.h"
#include "volume/volume.h"

typedef json_object *(*ctl_handler)(struct tandemd *d, json_object *req, struct reply_err *e);

/* Of what a client sent, at most this much is quoted back in an error. */
#define ECHO_MAX 64

/* The length of the UTF-8 character at p, 0 if it is not one (overlong,
 * a surrogate, past U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *p)
{
	size_t n, k;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	for (k = 1; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/*
 * s as a person may read it in a one-line error: at most ECHO_MAX bytes
 * of it (then "..."), cut between characters, with control characters
 * and bytes that are not UTF-8 as '?'. buf holds ECHO_MAX + 4.
 */
static const char *echo(const char *s, char *buf)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, n;

	while (*p) {
		n = utf8_len(p);
		if (o + (n ? n : 1) > ECHO_MAX)
			break;
		if (n > 1) {
			memcpy(buf + o, p, n);
		} else {
			n = 1;
			buf[o] = *p < 0x20 || *p == 0x7f || *p >= 0x80 ? '?' : (char)*p;
		}
		o += n;
		p += n;
	}
	if (*p) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static int bad_field(const char *key, const char *what, struct reply_err *e)
{
	ERRF(e, 1, "'%s' must be %s", key, what);
	return -EINVAL;
}

/* A field that is there is of its type, or the request is refused
 * (exit 1): a string without NUL; true or false; an integer >= 0. Absent,
 * *out is NULL, false or 0. */
static int req_str(json_object *req, const char *key, const char **out, struct reply_err *e)
{
	json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(req, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return bad_field(key, "a string (without NUL)", e);
	*out = json_object_get_string(v);
	return 0;
}

static int req_bool(json_object *req, const char *key, bool *out, struct reply_err *e)
{
	json_object *v;

	*out = false;
	if (!json_object_object_get_ex(req, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return bad_field(key, "true or false", e);
	*out = json_object_get_boolean(v);
	return 0;
}

static int req_u64(json_object *req, const char *key, uint64_t *out, struct reply_err *e)
{
	json_object *v;

	*out = 0;
	if (!json_object_object_get_ex(req, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return bad_field(key, "an integer, 0 or more", e);
	*out = json_object_get_uint64(v);
	return 0;
}

/* The resource a request names, or NULL with e filled. */
static struct resource *req_res(struct tandemd *d, json_object *req, struct reply_err *e)
{
	char quoted[ECHO_MAX + 4];
	const char *name;
	struct resource *r;

	if (req_str(req, "res", &name, e) < 0)
		return NULL;
	if (!name) {
		e->exit = 1;
		snprintf(e->msg, sizeof(e->msg), "the request names no resource ('res')");
		return NULL;
	}
	r = resource_find(d, name);
	if (!r) {
		e->exit = 10;
		snprintf(e->msg, sizeof(e->msg), "'%s' is not a resource of this node in %s",
			 echo(name, quoted), d->conf_path);
		snprintf(e->hint, sizeof(e->hint), "'tandemadm sh-resources' lists them");
	}
	return r;
}

static json_object *h_status(struct tandemd *d, json_object *req, struct reply_err *e)
{
	json_object *o, *list;
	const char *name;
	unsigned int i;

	if (req_str(req, "res", &name, e) < 0 || (name && !req_res(d, req, e)))
		return NULL;
	o = json_object_new_object();
	list = json_object_new_array();
	for (i = 0; i < d->n_res; i++)
		if (!name || !strcmp(name, d->res[i]->name))
			json_object_array_add(list, resource_status(d->res[i]));
	json_object_object_add(o, "resources", list);
	return o;
}

/* A verb on the resource named; FLAG_HANDLER's gets the boolean field key
 * as flag. */
#define SIMPLE_HANDLER(fn, call)                                                                   \
	static json_object *fn(struct tandemd *d, json_object *req, struct reply_err *e)           \
	{                                                                                          \
		struct resource *r = req_res(d, req, e);                                           \
                                                                                                   \
		if (!r || (call) < 0)                                                              \
			return NULL;                                                               \
		return json_object_new_object();                                                   \
	}
#define FLAG_HANDLER(fn, key, call)                                                                \
	static json_object *fn(struct tandemd *d, json_object *req, struct reply_err *e)           \
	{                                                                                          \
		struct resource *r = req_res(d, req, e);                                           \
		bool flag;                                                                         \
                                                                                                   \
		if (!r || req_bool(req, key, &flag, e) < 0 || (call) < 0)                          \
			return NULL;                                                               \
		return json_object_new_object();                                                   \
	}

SIMPLE_HANDLER(h_up, resource_up(r, e))
FLAG_HANDLER(h_down, "force", resource_down(r, flag, e))
FLAG_HANDLER(h_primary, "force", resource_primary(r, flag, e))
FLAG_HANDLER(h_secondary, "force", resource_secondary(r, flag, e))
FLAG_HANDLER(h_connect, "discard_my_data", resource_connect(r, flag, e))
SIMPLE_HANDLER(h_disconnect, resource_disconnect(r, e))
SIMPLE_HANDLER(h_invalidate, resource_invalidate(r, false, e))
SIMPLE_HANDLER(h_invalidate_remote, resource_invalidate(r, true, e))
SIMPLE_HANDLER(h_pause_sync, resource_pause_sync(r, true, e))
SIMPLE_HANDLER(h_resume_sync, resource_pause_sync(r, false, e))
SIMPLE_HANDLER(h_resync_oos, peer_resync_oos(r, e))
SIMPLE_HANDLER(h_resume_io, fence_resume_io(r, e))
SIMPLE_HANDLER(h_outdate, resource_outdate(r, e))
FLAG_HANDLER(h_new_current_uuid, "clear_bitmap", resource_new_current_uuid(r, flag, e))

static json_object *h_verify(struct tandemd *d, json_object *req, struct reply_err *e)
{
	struct resource *r = req_res(d, req, e);
	uint64_t start, stop;

	if (!r || req_u64(req, "start", &start, e) < 0 || req_u64(req, "stop", &stop, e) < 0 ||
	    peer_verify(r, start, stop, e) < 0)
		return NULL;
	return json_object_new_object();
}

/* adjust: re-read the configuration (the same as SIGHUP); the resource
 * named must exist afterwards. */
static json_object *h_adjust(struct tandemd *d, json_object *req, struct reply_err *e)
{
	const char *name;
	char msg[2048];

	if (req_str(req, "res", &name, e) < 0)
		return NULL;
	if (tandemd_reload(d, msg, sizeof(msg)) < 0) {
		e->exit = 10;
		snprintf(e->msg, sizeof(e->msg), "%.500s", msg);
		return NULL;
	}
	if (name && !req_res(d, req, e))
		return NULL;
	return json_object_new_object();
}

/* inject-fault (TANDEM_FAULT_INJECTION=1 only): make a volume's backing
 * device fail. {"res":R,"volume":N,"fail":"read"|"write"|"rw"|"flush"|"hang"|"none",
 * "meta":bool} */
static json_object *h_inject_fault(struct tandemd *d, json_object *req, struct reply_err *e)
{
	struct resource *r = req_res(d, req, e);
	const char *fail;
	unsigned int ops, i;
	uint64_t vnr;
	bool meta;

	if (!r || req_str(req, "fail", &fail, e) < 0 || req_u64(req, "volume", &vnr, e) < 0 ||
	    req_bool(req, "meta", &meta, e) < 0)
		return NULL;
	if (!d->fault_injection) {
		e->exit = 20;
		snprintf(e->msg, sizeof(e->msg),
			 "fault injection is off; start tandemd with TANDEM_FAULT_INJECTION=1 "
			 "(for tests only)");
		return NULL;
	}
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
	if (ops && meta)
		ops |= VOLUME_FAULT_META;
	for (i = 0; i < r->n_vols; i++)
		if (r->vols[i].vnr == vnr)
			break;
	if (i == r->n_vols) {
		e->exit = 10;
		snprintf(e->msg, sizeof(e->msg), "%s has no volume %" PRIu64, r->name, vnr);
		return NULL;
	}
	volume_set_faults(&r->vols[i], ops);
	log_res(LOG_WARNING, r->name, "volume %" PRIu64 ": fault injection: %s%s", vnr,
		fail ? fail : "none", (ops & VOLUME_FAULT_META) ? " (metadata too)" : "");
	return json_object_new_object();
}

/* events: the answer; ctl.c switches the connection to the event stream
 * (ctl_cmd_is_events) */
static json_object *h_events(struct tandemd *d, json_object *req, struct reply_err *e)
{
	bool now;

	return req_bool(req, "now", &now, e) < 0 ? NULL : json_object_new_object();
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

/*
 * The line as a request: exactly one JSON object, strict JSON in UTF-8
 * (doc/control-protocol.md, Framing), with only blanks after it; NULL for
 * anything else.
 */
static json_object *parse_req(const char *line)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(line), end;
	json_object *req;

	if (!tok || len > INT32_MAX) {
		if (tok)
			json_tokener_free(tok);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	req = json_tokener_parse_ex(tok, line, (int)len);
	end = json_tokener_get_error(tok) == json_tokener_success ? json_tokener_get_parse_end(tok)
								  : 0;
	json_tokener_free(tok);
	if (req && (!json_object_is_type(req, json_type_object) ||
		    line[end + strspn(line + end, " \t\r")] != '\0')) {
		json_object_put(req);
		req = NULL;
	}
	return req;
}

json_object *ctl_cmd_dispatch(struct tandemd *d, const char *line)
{
	struct reply_err e = {0};
	json_object *req = parse_req(line), *res = NULL;
	char quoted[ECHO_MAX + 4];
	const char *cmd;
	size_t i;

	if (!req) {
		e.exit = 1;
		snprintf(e.msg, sizeof(e.msg),
			 "the request is not a JSON object alone on its line (strict JSON, UTF-8)");
	} else if (req_str(req, "cmd", &cmd, &e) < 0) {
		/* e says why */
	} else if (!cmd) {
		e.exit = 1;
		snprintf(e.msg, sizeof(e.msg), "the request has no 'cmd'");
	} else {
		for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
			if (!strcmp(handlers[i].cmd, cmd))
				break;
		if (i == sizeof(handlers) / sizeof(handlers[0])) {
			e.exit = 1;
			snprintf(e.msg, sizeof(e.msg), "unknown command '%s'", echo(cmd, quoted));
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
	struct reply_err e = {0};
	json_object *req, *ok;
	const char *cmd;
	bool yes;

	*now = false;
	if (!json_object_object_get_ex(res, "ok", &ok) || !json_object_get_boolean(ok))
		return false;
	req = parse_req(line);
	yes = req && req_str(req, "cmd", &cmd, &e) == 0 && cmd && !strcmp(cmd, "events") &&
	      req_bool(req, "now", now, &e) == 0;
	json_object_put(req);
	return yes;
}
