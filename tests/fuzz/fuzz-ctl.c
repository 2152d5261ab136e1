/*
 * fuzz-ctl: libFuzzer target for the control socket's requests
 * (replicator/daemon/control/ctl-cmd.c, doc/control-protocol.md), run
 * against an in-memory daemon of two resources, r0 (volumes 0 and 1) and
 * r1 (volume 0), whose verbs are stubs: no disk, thread or socket.
 *
 * The input is what a client writes to the socket. As ctl.c reads it,
 * each line up to a newline is one request, ending at its first NUL; a
 * last line without a newline waits for more and is not answered; after
 * a successful `events` the connection is an event stream and what
 * follows is not read as requests. Every input runs twice, with fault
 * injection off and on. For each request:
 *  - the answer is one line of UTF-8 JSON, an object with a boolean "ok";
 *    a refusal has a documented "exit" (1, 5, 10, 11, 16, 17 or 20), a
 *    one-line "error", and a one-line "hint" and a negative "ss" if any;
 *  - it is the answer the protocol gives, as the harness reads the
 *    request on its own: a line that is not exactly one JSON object, a
 *    missing or unknown "cmd", a missing "res", a field of the wrong
 *    type (booleans true or false, numbers non-negative integers,
 *    strings without NUL) or a bad "fail" is refused with exit 1, a
 *    resource of another node with exit 10, inject-fault without fault
 *    injection with exit 20; otherwise the verb's stub runs exactly once,
 *    on the resource and with the arguments the request names, and the
 *    answer is its result (the stubs refuse on r1, with exit 11);
 *  - a refused request runs no verb (only adjust's reload runs before
 *    its resource is looked up);
 *  - `status` lists the resource named, or all of them, in order;
 *  - ctl_cmd_is_events() says yes exactly for a successful `events`,
 *    with "now" as the request has it.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "control/control.h"
#include "peer/peer.h"
#include "tandemd.h"
#include "volume/volume.h"

#define CONF_PATH "/etc/tandem/tandem.conf"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void __attribute__((noreturn)) fail(const char *what, const char *line, const char *reply)
{
	fprintf(stderr, "fuzz-ctl: %s\n  request: %.300s\n  reply:   %.600s\n", what, line,
		reply ? reply : "(none)");
	abort();
}

/* ---------------------------------------------------------------- the stubs */

/* The last verb a stub ran, and how often any ran. */
static struct {
	unsigned int n;
	const char *verb;
	struct resource *r;
	bool flag; /* force, discard_my_data, clear_bitmap, remote or pause */
	uint64_t start, stop;
	struct volume *v;
	unsigned int ops;
	bool failed;
} ran;
static unsigned int reloads;

/* A verb on r: r0 does it, r1 refuses as a state change would. */
static int verb(const char *name, struct resource *r, bool flag, struct reply_err *e)
{
	ran.n++;
	ran.verb = name;
	ran.r = r;
	ran.flag = flag;
	ran.failed = strcmp(r->name, "r0") != 0;
	if (!ran.failed)
		return 0;
	ERRF(e, 11, "State change failed: (-12) Device is held open by someone");
	e->ss = -12;
	snprintf(e->hint, sizeof(e->hint),
		 "stop the NBD clients of %s (1 connected) or use --force", r->name);
	return -EBUSY;
}

int resource_up(struct resource *r, struct reply_err *e)
{
	return verb("up", r, false, e);
}

int resource_down(struct resource *r, bool force, struct reply_err *e)
{
	return verb("down", r, force, e);
}

int resource_primary(struct resource *r, bool force, struct reply_err *e)
{
	return verb("primary", r, force, e);
}

int resource_secondary(struct resource *r, bool force, struct reply_err *e)
{
	return verb("secondary", r, force, e);
}

int resource_connect(struct resource *r, bool discard_my_data, struct reply_err *e)
{
	return verb("connect", r, discard_my_data, e);
}

int resource_disconnect(struct resource *r, struct reply_err *e)
{
	return verb("disconnect", r, false, e);
}

int resource_invalidate(struct resource *r, bool remote, struct reply_err *e)
{
	return verb("invalidate", r, remote, e);
}

int resource_pause_sync(struct resource *r, bool pause, struct reply_err *e)
{
	return verb("pause-sync", r, pause, e);
}

int resource_outdate(struct resource *r, struct reply_err *e)
{
	return verb("outdate", r, false, e);
}

int resource_new_current_uuid(struct resource *r, bool clear_bitmap, struct reply_err *e)
{
	return verb("new-current-uuid", r, clear_bitmap, e);
}

int peer_verify(struct resource *r, uint64_t start, uint64_t stop, struct reply_err *e)
{
	ran.start = start;
	ran.stop = stop;
	return verb("verify", r, false, e);
}

int peer_resync_oos(struct resource *r, struct reply_err *e)
{
	return verb("resync-oos", r, false, e);
}

int fence_resume_io(struct resource *r, struct reply_err *e)
{
	return verb("resume-io", r, false, e);
}

int volume_set_faults(struct volume *v, unsigned int ops)
{
	ran.n++;
	ran.verb = "inject-fault";
	ran.r = v->res;
	ran.v = v;
	ran.ops = ops;
	return 0;
}

/* quorum.c is not linked: its own checks are not fuzzed here. */
json_object *quorum_cmd(struct tandemd *d, json_object *req, struct reply_err *e)
{
	json_object *o = json_object_new_object();

	ran.n++;
	ran.verb = "quorum";
	json_object_object_add(o, "quorate", json_object_new_boolean(true));
	json_object_object_add(o, "changed", json_object_new_boolean(false));
	return o;
}

/* Every second reload fails, as a configuration with an error does. */
int tandemd_reload(struct tandemd *d, char *msg, size_t msglen)
{
	ran.n++;
	ran.verb = "adjust";
	ran.failed = reloads++ % 2 == 1;
	if (!ran.failed)
		return 0;
	snprintf(msg, msglen, "%s:3:5: error: unknown keyword 'bogus'", CONF_PATH);
	return -EINVAL;
}

json_object *resource_status(struct resource *r)
{
	json_object *o = json_object_new_object(), *vols = json_object_new_array();
	unsigned int i;

	json_object_object_add(o, "name", json_object_new_string(r->name));
	json_object_object_add(o, "role", json_object_new_string("Secondary"));
	for (i = 0; i < r->n_vols; i++) {
		json_object *v = json_object_new_object();

		json_object_object_add(v, "volume", json_object_new_int((int)r->vols[i].vnr));
		json_object_object_add(v, "disk", json_object_new_string("UpToDate"));
		json_object_array_add(vols, v);
	}
	json_object_object_add(o, "volumes", vols);
	return o;
}

/* log.h's serialisation of qb_log: one thread here. */
void log_lock(void)
{
}

void log_unlock(void)
{
}

/* ---------------------------------------------------------------- the daemon */

static struct tandemd node;
static struct resource res[2];
static struct resource *res_list[2] = {&res[0], &res[1]};
static struct volume vols0[2], vols1[1];

static void daemon_init(void)
{
	unsigned int i;

	res[0].name = "r0";
	res[0].vols = vols0;
	res[0].n_vols = 2;
	res[1].name = "r1";
	res[1].vols = vols1;
	res[1].n_vols = 1;
	for (i = 0; i < 2; i++) {
		res[i].d = &node;
		vols0[i].res = &res[0];
		vols0[i].vnr = i;
	}
	vols1[0].res = &res[1];
	node.conf_path = CONF_PATH;
	node.res = res_list;
	node.n_res = 2;
	node.quorate = true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* qb_log without qb_log_init() logs nowhere */
	daemon_init();
	return 0;
}

/* ---------------------------------------------------------------- the request, read here */

/* The field's value, or NULL when the request has none. */
static json_object *field(json_object *req, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(req, key, &v) ? v : NULL;
}

/* A string field without NUL, or NULL (*bad when present but not one). */
static const char *str_field(json_object *req, const char *key, bool *bad)
{
	json_object *v = field(req, key);

	if (!v)
		return NULL;
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v)) {
		*bad = true;
		return NULL;
	}
	return json_object_get_string(v);
}

static bool bool_field(json_object *req, const char *key, bool *bad)
{
	json_object *v = field(req, key);

	if (!v)
		return false;
	if (!json_object_is_type(v, json_type_boolean)) {
		*bad = true;
		return false;
	}
	return json_object_get_boolean(v);
}

static uint64_t u64_field(json_object *req, const char *key, bool *bad)
{
	json_object *v = field(req, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
		*bad = true;
		return 0;
	}
	return json_object_get_uint64(v);
}

/* The line as one JSON object (whitespace around it), or NULL. */
static json_object *parse(const char *line)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(line), off;
	json_object *o;

	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	off = json_tokener_get_error(tok) == json_tokener_success ? json_tokener_get_parse_end(tok)
								  : 0;
	json_tokener_free(tok);
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	for (; o && off < len; off++) {
		if (!strchr(" \t\r", line[off])) {
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

/* What the protocol says the answer is. */
struct want {
	unsigned int exits; /* bit N: a refusal with exit N is right; 0: success */
	const char *verb;   /* the stub that runs (NULL: none) */
	struct resource *r;
	bool flag;
	uint64_t start, stop;
	int vnr;
	unsigned int ops;
	bool now;
	bool status_all;
};

#define REFUSE(w, code) ((w)->exits |= 1u << (code))

static const struct cmd {
	const char *cmd;
	const char *verb;
	enum { RES_NONE, RES_OPT, RES_REQ } res;
	const char *flag; /* its boolean field */
	bool flag_value;  /* the flag the verb gets when the field is not there */
} cmds[] = {
    {"status", NULL, RES_OPT, NULL, false},
    {"up", "up", RES_REQ, NULL, false},
    {"attach", "up", RES_REQ, NULL, false},
    {"down", "down", RES_REQ, "force", false},
    {"detach", "down", RES_REQ, "force", false},
    {"primary", "primary", RES_REQ, "force", false},
    {"secondary", "secondary", RES_REQ, "force", false},
    {"new-current-uuid", "new-current-uuid", RES_REQ, "clear_bitmap", false},
    {"connect", "connect", RES_REQ, "discard_my_data", false},
    {"disconnect", "disconnect", RES_REQ, NULL, false},
    {"invalidate", "invalidate", RES_REQ, NULL, false},
    {"invalidate-remote", "invalidate", RES_REQ, NULL, true},
    {"pause-sync", "pause-sync", RES_REQ, NULL, true},
    {"resume-sync", "pause-sync", RES_REQ, NULL, false},
    {"verify", "verify", RES_REQ, NULL, false},
    {"resync-oos", "resync-oos", RES_REQ, NULL, false},
    {"resume-io", "resume-io", RES_REQ, NULL, false},
    {"outdate", "outdate", RES_REQ, NULL, false},
    {"quorum", "quorum", RES_NONE, NULL, false},
    {"adjust", "adjust", RES_OPT, NULL, false},
    {"events", NULL, RES_NONE, "now", false},
    {"inject-fault", "inject-fault", RES_REQ, "meta", false},
};

static void want_fault(json_object *req, const struct resource *r, struct want *w)
{
	static const struct {
		const char *name;
		unsigned int ops;
	} fails[] = {
	    {"read", VOLUME_FAULT_READ},
	    {"write", VOLUME_FAULT_WRITE},
	    {"rw", VOLUME_FAULT_READ | VOLUME_FAULT_WRITE},
	    {"flush", VOLUME_FAULT_FLUSH},
	    {"hang", VOLUME_FAULT_HANG},
	    {"none", 0},
	};
	bool bad = false;
	const char *f = str_field(req, "fail", &bad);
	json_object *jv = field(req, "volume");
	unsigned int i;

	if (bad)
		REFUSE(w, 1);
	w->ops = ~0u;
	for (i = 0; i < sizeof(fails) / sizeof(fails[0]); i++)
		if (!f || !strcmp(f, fails[i].name))
			w->ops = f ? fails[i].ops : 0;
	if (w->ops == ~0u)
		REFUSE(w, 1);
	if (w->ops && w->flag)
		w->ops |= VOLUME_FAULT_META;
	w->vnr = 0;
	if (jv && (!json_object_is_type(jv, json_type_int) || json_object_get_int64(jv) < 0))
		REFUSE(w, 1);
	else if (jv)
		w->vnr = json_object_get_int64(jv) > 1000 ? -1 : (int)json_object_get_int64(jv);
	if (!node.fault_injection)
		REFUSE(w, 20);
	if (r && (w->vnr < 0 || (unsigned int)w->vnr >= r->n_vols))
		REFUSE(w, 10);
}

static void want_of(json_object *req, struct want *w)
{
	const struct cmd *c = NULL;
	const char *cmd, *name;
	bool bad = false;
	unsigned int i;

	memset(w, 0, sizeof(*w));
	if (!req) {
		REFUSE(w, 1);
		return;
	}
	cmd = str_field(req, "cmd", &bad);
	for (i = 0; cmd && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].cmd, cmd))
			c = &cmds[i];
	if (!c) {
		REFUSE(w, 1);
		return;
	}
	w->verb = c->verb;
	w->flag = c->flag ? bool_field(req, c->flag, &bad) : c->flag_value;
	w->now = w->flag;
	if (!strcmp(c->verb ? c->verb : "", "verify")) {
		w->start = u64_field(req, "start", &bad);
		w->stop = u64_field(req, "stop", &bad);
	}
	if (!strcmp(c->cmd, "quorum"))
		return; /* quorum.c checks its request */
	name = c->res != RES_NONE ? str_field(req, "res", &bad) : NULL;
	if (bad || (c->res == RES_REQ && !name))
		REFUSE(w, 1);
	w->r = name ? resource_find(&node, name) : NULL;
	if (name && !w->r)
		REFUSE(w, 10);
	w->status_all = !name;
	if (!strcmp(c->cmd, "inject-fault"))
		want_fault(req, w->r, w);
}

/* ---------------------------------------------------------------- the answer */

/* s is UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	size_t i = 0, k, len;
	uint32_t cp;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		len = s[i] >= 0xf0 ? 4 : s[i] >= 0xe0 ? 3 : s[i] >= 0xc0 ? 2 : 0;
		if (!len || i + len > n || s[i] > 0xf4)
			return false;
		cp = s[i] & (0x7f >> len);
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* One line of text for a person: UTF-8 without control characters. */
static bool text_ok(json_object *v)
{
	const char *s;
	size_t n, i;

	if (!v || !json_object_is_type(v, json_type_string))
		return false;
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (n == 0 || strlen(s) != n || !utf8_ok((const unsigned char *)s, n))
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static void check_status(json_object *reply, const struct want *w, const char *line,
			 const char *out)
{
	json_object *list = field(reply, "resources"), *name;
	size_t i, n;

	if (!list || !json_object_is_type(list, json_type_array))
		fail("status without a list of resources", line, out);
	n = json_object_array_length(list);
	if (n != (w->status_all ? node.n_res : 1))
		fail("status lists the wrong number of resources", line, out);
	for (i = 0; i < n; i++) {
		name = field(json_object_array_get_idx(list, i), "name");
		if (!name || strcmp(json_object_get_string(name),
				    w->status_all ? node.res[i]->name : w->r->name))
			fail("status lists another resource", line, out);
	}
}

/* The answer to line, against what the protocol says; true: it switched
 * the connection to the event stream. */
static bool check_one(const char *line)
{
	json_object *req = parse(line), *reply, *again, *ok, *v;
	const char *out;
	struct want w;
	bool events, now;
	int code;

	want_of(req, &w);
	memset(&ran, 0, sizeof(ran));
	reply = ctl_cmd_dispatch(&node, line);
	if (!reply || !json_object_is_type(reply, json_type_object))
		fail("the answer is not a JSON object", line, NULL);
	out = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
	if (strchr(out, '\n') || !utf8_ok((const unsigned char *)out, strlen(out)))
		fail("the answer is not one line of UTF-8", line, out);
	again = parse(out);
	if (!again)
		fail("the answer does not parse as one JSON object", line, out);
	if (strcmp(json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN), out))
		fail("the answer parses to another object", line, out);
	json_object_put(again);
	ok = field(reply, "ok");
	if (!ok || !json_object_is_type(ok, json_type_boolean))
		fail("the answer has no boolean 'ok'", line, out);

	if (json_object_get_boolean(ok)) {
		if (w.exits)
			fail("a request the protocol refuses succeeded", line, out);
		if (w.verb && (ran.n != 1 || strcmp(ran.verb, w.verb) || ran.failed))
			fail("success without its verb having run, once", line, out);
		if (!w.verb && ran.n)
			fail("a verb ran for a request that has none", line, out);
	} else {
		v = field(reply, "exit");
		code = v && json_object_is_type(v, json_type_int) ? json_object_get_int(v) : -1;
		if (code != 1 && code != 5 && code != 10 && code != 11 && code != 16 &&
		    code != 17 && code != 20)
			fail("a refusal without a documented exit code", line, out);
		if (!text_ok(field(reply, "error")))
			fail("a refusal without a one-line error", line, out);
		if ((v = field(reply, "hint")) && !text_ok(v))
			fail("a hint that is not one line", line, out);
		if ((v = field(reply, "ss")) &&
		    (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) >= 0))
			fail("an 'ss' that is not negative", line, out);
		if (w.exits && !(w.exits & (1u << code)))
			fail("refused with another exit code than the protocol's", line, out);
		if (w.exits && ran.n && !(w.verb && !strcmp(w.verb, "adjust") && code == 10))
			fail("a refused request ran a verb", line, out);
		if (!w.exits &&
		    (ran.n != 1 || !ran.failed || code != (!strcmp(ran.verb, "adjust") ? 10 : 11)))
			fail("refused, but not by its verb", line, out);
	}
	if (!w.exits && w.verb && !strcmp(w.verb, "adjust") && ran.n != 1)
		fail("adjust did not reload, once", line, out);
	if (!w.exits && ran.n && strcmp(w.verb, "adjust") && strcmp(w.verb, "quorum")) {
		if (ran.r != w.r)
			fail("the verb ran on another resource", line, out);
		if (strcmp(w.verb, "inject-fault") && ran.flag != w.flag)
			fail("the verb got another flag", line, out);
		if (!strcmp(w.verb, "verify") && (ran.start != w.start || ran.stop != w.stop))
			fail("verify got another range", line, out);
		if (!strcmp(w.verb, "inject-fault") &&
		    (ran.v->vnr != (unsigned int)w.vnr || ran.ops != w.ops))
			fail("inject-fault hit another volume or fault", line, out);
	}
	if (json_object_get_boolean(ok) && req &&
	    !strcmp(json_object_get_string(field(req, "cmd")), "status"))
		check_status(reply, &w, line, out);

	events = ctl_cmd_is_events(line, reply, &now);
	if (events != (json_object_get_boolean(ok) && req &&
		       !strcmp(json_object_get_string(field(req, "cmd")), "events")))
		fail("ctl_cmd_is_events() is wrong", line, out);
	if (events && now != w.now)
		fail("ctl_cmd_is_events() has another 'now'", line, out);
	json_object_put(reply);
	json_object_put(req);
	return events;
}

/* The input as ctl.c's client_read() takes it. */
static void run(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *line, *nl;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (line = buf; (nl = memchr(line, '\n', size - (size_t)(line - buf))); line = nl + 1) {
		*nl = '\0';
		if (check_one(line))
			break;
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	node.fault_injection = false;
	reloads = 0;
	run(data, size);
	node.fault_injection = true;
	run(data, size);
	return 0;
}
