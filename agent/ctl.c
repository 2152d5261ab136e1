/*
 * ctl: the agent's requests to tandemd (doc/control-protocol.md) over the
 * library's client (ctlc.h): one JSON request, one JSON response per
 * connection, within the agent's time budget. The answers become the
 * agent's view of the resource; the agent reads the JSON fields only,
 * never tandemadm's text.
 */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "arbc.h"
#include "ctlc.h"

/* The deadline of a request: what the budget leaves, but at least a
 * second, so that a last status or down still gets its chance. */
static int64_t ctl_deadline(const struct agent *a)
{
	long ms = agent_ms_left(a);

	return ctlc_deadline(ms < 1000 ? 1000 : ms);
}

/* Send req, return the parsed response in *resp. ctlc_no_daemon(rc): no
 * daemon; another -errno: it did not answer properly (ctlc.h). */
static int ctl_call(const struct agent *a, json_object *req, json_object **resp)
{
	int64_t deadline = ctl_deadline(a);
	struct ctlc *c;
	int rc;

	*resp = NULL;
	rc = ctlc_open(a->run_dir, deadline, &c);
	if (rc < 0)
		return rc;
	rc = ctlc_send(c, req, deadline);
	if (rc == 0) {
		agent_log(AGENT_DEBUG, "tandemd <- %s",
			  json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
		rc = ctlc_recv(c, deadline, resp);
	}
	if (rc == 0)
		agent_log(AGENT_DEBUG, "tandemd -> %s",
			  json_object_to_json_string_ext(*resp, JSON_C_TO_STRING_PLAIN));
	ctlc_close(c);
	return rc;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static int jint(json_object *o, const char *key, int def)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
		       ? json_object_get_int(v)
		       : def;
}

static bool jbool(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static json_object *request(const struct agent *a, const char *cmd)
{
	json_object *req = json_object_new_object();

	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	/* adjust re-reads the whole file: without a resource, it fails only
	 * when the file cannot be applied */
	if (strcmp(cmd, "adjust"))
		json_object_object_add(req, "res", json_object_new_string(a->res));
	return req;
}

static void fill_reply(json_object *resp, struct ctl_reply *r)
{
	const char *s;

	memset(r, 0, sizeof(*r));
	r->ok = jbool(resp, "ok");
	r->exit = jint(resp, "exit", r->ok ? 0 : 20);
	r->ss = jint(resp, "ss", 0);
	s = jstr(resp, "error");
	snprintf(r->error, sizeof(r->error), "%s", s ? s : (r->ok ? "" : "failed"));
	s = jstr(resp, "hint");
	snprintf(r->hint, sizeof(r->hint), "%s", s ? s : "");
}

int ctl_command(const struct agent *a, const char *cmd, bool force, struct ctl_reply *r)
{
	json_object *req = request(a, cmd), *resp;
	int rc;

	json_object_object_add(req, "force", json_object_new_boolean(force));
	rc = ctl_call(a, req, &resp);
	json_object_put(req);
	if (rc < 0) {
		memset(r, 0, sizeof(*r));
		snprintf(r->error, sizeof(r->error), "%s",
			 ctlc_no_daemon(rc) ? "tandemd is not running" : ctlc_strerror(rc));
		return rc;
	}
	fill_reply(resp, r);
	json_object_put(resp);
	return 0;
}

bool ctl_daemon_alive(const struct agent *a)
{
	struct ctlc *c;

	if (ctlc_open(a->run_dir, ctl_deadline(a), &c) < 0)
		return false;
	ctlc_close(c);
	return true;
}

/* ---------------------------------------------------------------- tandem-arbiterd */

/* One request to tandem-arbiterd (doc/arbiter.md §7), waiting at most
 * ARBC_TIMEOUT_MS (less if the budget is shorter); *resp for the
 * arbc_*() readers. */
static int arbiter_call(const struct agent *a, const char *cmd, json_object **resp)
{
	json_object *req = arbc_request(cmd, a->res);
	long ms = agent_ms_left(a);
	int rc;

	*resp = NULL;
	if (!req)
		return -ENOMEM;
	if (ms > ARBC_TIMEOUT_MS || ms < 1000)
		ms = ms < 1000 ? 1000 : ARBC_TIMEOUT_MS;
	rc = arbc_call(a->run_dir, req, ms, resp);
	agent_log(AGENT_DEBUG, "tandem-arbiterd <- %s -> %s",
		  json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN),
		  rc < 0 ? ctlc_strerror(rc)
			 : json_object_to_json_string_ext(*resp, JSON_C_TO_STRING_PLAIN));
	json_object_put(req);
	return rc;
}

const char *ctl_arbiter_wfc(const struct agent *a, char *why, size_t len)
{
	json_object *resp;
	int rc = arbiter_call(a, "wfc", &resp);
	const char *cls = arbc_wfc_class(rc, resp, why, len);

	json_object_put(resp);
	return cls;
}

enum arbc_promote ctl_arbiter_may_promote(const struct agent *a, char *why, size_t len)
{
	json_object *resp;
	int rc = arbiter_call(a, "may-promote", &resp);
	enum arbc_promote p = arbc_may_promote(rc, resp, why, len);

	json_object_put(resp);
	return p;
}

/* tandemd's state names back to the enums (the names come from state.c). */
static int role_of(const char *s)
{
	int i;

	for (i = ROLE_UNKNOWN; s && i <= ROLE_SECONDARY; i++)
		if (!strcmp(s, state_role_name((enum state_role)i)))
			return i;
	return -1;
}

static int conn_of(const char *s)
{
	int i;

	for (i = CONN_STANDALONE; s && i <= CONN_BEHIND; i++)
		if (!strcmp(s, state_conn_name((enum state_conn)i)))
			return i;
	return -1;
}

/* One resource object of the status answer into st; false if unusable. */
static bool parse_resource(json_object *r, struct ctl_status *st)
{
	json_object *vols, *v, *q;
	int role, peer, conn, disk, pdsk;
	const char *s;
	size_t i, n;

	if (!jbool(r, "up")) {
		st->view.presence = AGENT_POLICY_DOWN;
		st->view.role = ROLE_SECONDARY;
		st->view.peer = ROLE_UNKNOWN;
		st->view.conn = CONN_STANDALONE;
		return true;
	}
	role = role_of(jstr(r, "role"));
	peer = role_of(jstr(r, "peer_role"));
	conn = conn_of(jstr(r, "connection"));
	if (role < 0 || peer < 0 || conn < 0 || !json_object_object_get_ex(r, "volumes", &vols) ||
	    !json_object_is_type(vols, json_type_array)) {
		snprintf(st->error, sizeof(st->error), "unexpected status (role %s, connection %s)",
			 jstr(r, "role") ? jstr(r, "role") : "-",
			 jstr(r, "connection") ? jstr(r, "connection") : "-");
		return false;
	}
	n = json_object_array_length(vols);
	st->vols = calloc(n ? n : 1, sizeof(*st->vols));
	if (!st->vols) {
		snprintf(st->error, sizeof(st->error), "out of memory");
		return false;
	}
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(vols, i);
		disk = state_disk_from_name(jstr(v, "disk") ? jstr(v, "disk") : "");
		pdsk = state_disk_from_name(jstr(v, "peer_disk") ? jstr(v, "peer_disk") : "");
		if (disk < 0 || pdsk < 0) {
			snprintf(st->error, sizeof(st->error), "volume %zu: unknown disk state", i);
			return false;
		}
		st->vols[i].disk = (enum state_disk)disk;
		st->vols[i].pdsk = (enum state_disk)pdsk;
		st->vols[i].clients = (unsigned int)jint(v, "clients", 0);
		if (i == 0 && (s = jstr(v, "export")))
			snprintf(st->export_path, sizeof(st->export_path), "%s", s);
	}
	if ((s = jstr(r, "wfc_class")))
		snprintf(st->wfc_class, sizeof(st->wfc_class), "%s", s);
	if (json_object_object_get_ex(r, "fencing", &v))
		st->view.fence_running = jbool(v, "running");
	/* "quorum": {"policy": "off"|"majority", "on_no_quorum": ..., "quorate": B}
	 * (doc/arbiter.md §6.5); absent: no quorum policy */
	if (json_object_object_get_ex(r, "quorum", &v) && (s = jstr(v, "policy")) &&
	    !strcmp(s, "majority") && json_object_object_get_ex(v, "quorate", &q) &&
	    json_object_is_type(q, json_type_boolean))
		st->view.no_quorum = !json_object_get_boolean(q);
	st->config_pending = jbool(r, "config_pending");
	st->view.presence = AGENT_POLICY_UP;
	st->view.role = (enum state_role)role;
	st->view.peer = (enum state_role)peer;
	st->view.conn = (enum state_conn)conn;
	st->view.vols = st->vols;
	st->view.n_vols = (unsigned int)n;
	return true;
}

void ctl_status(const struct agent *a, struct ctl_status *st)
{
	json_object *req = request(a, "status"), *resp, *list, *r;
	struct ctl_reply rep;
	int rc;

	memset(st, 0, sizeof(*st));
	st->view.presence = AGENT_POLICY_BAD_ANSWER;
	rc = ctl_call(a, req, &resp);
	json_object_put(req);
	if (rc < 0) {
		if (ctlc_no_daemon(rc)) {
			st->view.presence = AGENT_POLICY_NO_DAEMON;
			snprintf(st->error, sizeof(st->error), "tandemd is not running (no %s/tandemd.sock)",
				 a->run_dir);
		} else {
			snprintf(st->error, sizeof(st->error), "tandemd did not answer: %s",
				 ctlc_strerror(rc));
		}
		return;
	}
	fill_reply(resp, &rep);
	if (!rep.ok) {
		/* exit 10: the running tandemd's configuration lacks the resource */
		if (rep.exit == 10)
			st->view.presence = AGENT_POLICY_UNKNOWN_RES;
		snprintf(st->error, sizeof(st->error), "%s%s%s", rep.error, rep.hint[0] ? "; " : "",
			 rep.hint);
	} else if (!json_object_object_get_ex(resp, "resources", &list) ||
		   !(r = json_object_array_get_idx(list, 0)) ||
		   strcmp(jstr(r, "name") ? jstr(r, "name") : "", a->res)) {
		snprintf(st->error, sizeof(st->error), "the status answer lacks %s", a->res);
	} else if (!parse_resource(r, st)) {
		free(st->vols);
		st->vols = NULL;
		memset(&st->view, 0, sizeof(st->view));
		st->view.presence = AGENT_POLICY_BAD_ANSWER;
	}
	json_object_put(resp);
}

void ctl_status_free(struct ctl_status *st)
{
	free(st->vols);
	st->vols = NULL;
	st->view.vols = NULL;
	st->view.n_vols = 0;
}
