/*
 * arbc: requests to tandem-arbiterd and the reading of its answers (see
 * arbc.h; the answers are doc/arbiter.md §7's).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arbc.h"
#include "ctlc.h"

json_object *arbc_request(const char *cmd, const char *res)
{
	json_object *req = json_object_new_object();

	if (!req)
		return NULL;
	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	if (res)
		json_object_object_add(req, "res", json_object_new_string(res));
	return req;
}

int arbc_call(const char *run_dir, json_object *req, int64_t timeout_ms, json_object **out)
{
	return ctlc_request_sock(run_dir, CTLC_ARBITER_SOCK_NAME, req, ctlc_deadline(timeout_ms),
				 out);
}

/* ---------------------------------------------------------------- reading */

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* Why there is no usable answer at all: rc < 0, or {"ok": false}. NULL
 * if the answer is an ok one. */
static const char *no_answer(int rc, json_object *answer, char *why, size_t len)
{
	json_object *ok;
	const char *err;

	if (rc < 0) {
		snprintf(why, len, "%s",
			 ctlc_no_daemon(rc) ? "tandem-arbiterd is not running"
					    : "tandem-arbiterd did not answer: ");
		if (!ctlc_no_daemon(rc))
			strncat(why, ctlc_strerror(rc), len - strlen(why) - 1);
		return why;
	}
	ok = get(answer, "ok");
	if (!ok || !json_object_is_type(ok, json_type_boolean) || !json_object_get_boolean(ok)) {
		err = str(answer, "error");
		snprintf(why, len, "tandem-arbiterd refused: %s", err ? err : "no reason given");
		return why;
	}
	return NULL;
}

/* An integer field; false if absent or not an integer. */
static bool int_of(json_object *o, const char *key, int *out)
{
	json_object *v = get(o, key);

	if (!v || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int(v);
	return true;
}

/* ---------------------------------------------------------------- fence-peer */

const char *arbc_fence_act_name(enum arbc_fence_act a)
{
	switch (a) {
	case ARBC_FENCE_FALLBACK:
		return "fallback";
	case ARBC_FENCE_EXIT:
		return "exit";
	case ARBC_FENCE_CONSTRAINT:
		return "constraint";
	case ARBC_FENCE_STONITH:
		return "stonith";
	}
	return "?";
}

/* An answer outside the table of doc/arbiter.md §7: fall back. */
static void not_in_table(struct arbc_fence *out, const char *action, bool has_exit, int code)
{
	out->act = ARBC_FENCE_FALLBACK;
	out->exit = -1;
	if (!action)
		snprintf(out->why, sizeof(out->why), "tandem-arbiterd's answer has no action");
	else if (has_exit)
		snprintf(out->why, sizeof(out->why),
			 "tandem-arbiterd's action '%s' with exit %d is not in its table", action,
			 code);
	else
		snprintf(out->why, sizeof(out->why), "tandem-arbiterd's action '%s' %s", action,
			 strcmp(action, "exit") ? "is unknown to this version"
						: "has no exit code");
}

void arbc_fence_decide(int rc, json_object *answer, struct arbc_fence *out)
{
	const char *action, *why, *peer;
	bool has_exit;
	int code = -1, id;

	memset(out, 0, sizeof(*out));
	out->act = ARBC_FENCE_FALLBACK;
	out->exit = -1;
	if (no_answer(rc, answer, out->why, sizeof(out->why)))
		return;
	if ((peer = str(answer, "peer")))
		snprintf(out->peer, sizeof(out->peer), "%s", peer);
	if (int_of(answer, "peer_id", &id) && id > 0)
		out->peer_id = (unsigned int)id;
	action = str(answer, "action");
	has_exit = int_of(answer, "exit", &code);
	why = str(answer, "why");
	if (!action) {
		not_in_table(out, NULL, false, 0);
		return;
	}
	if (!strcmp(action, "fallback")) {
		snprintf(out->why, sizeof(out->why), "%s",
			 why ? why : "tandem-arbiterd cannot decide");
		return;
	}
	if (!strcmp(action, "exit")) {
		if (!has_exit || (code != 1 && code != 3 && code != 4 && code != 6)) {
			not_in_table(out, action, has_exit, code);
			return;
		}
		out->act = ARBC_FENCE_EXIT;
	} else if (!strcmp(action, "constraint") || !strcmp(action, "stonith")) {
		int want = action[0] == 'c' ? 4 : 7;

		if (has_exit && code != want) {
			not_in_table(out, action, true, code);
			return;
		}
		code = want;
		out->act = action[0] == 'c' ? ARBC_FENCE_CONSTRAINT : ARBC_FENCE_STONITH;
	} else {
		not_in_table(out, action, false, 0);
		return;
	}
	out->exit = code;
	snprintf(out->why, sizeof(out->why), "%s", why ? why : "");
}

int64_t arbc_fence_timeout_ms(unsigned int timeout_s, int64_t elapsed_ms)
{
	int64_t t = (int64_t)timeout_s * 1000 - elapsed_ms - ARBC_FENCE_MARGIN_MS;

	return t < ARBC_FENCE_MIN_MS ? ARBC_FENCE_MIN_MS : t;
}

int arbc_stonith_timeout_s(unsigned int timeout_s, int64_t elapsed_ms)
{
	int64_t t = ((int64_t)timeout_s * 1000 - elapsed_ms) / 1000;

	return t < 1 ? 1 : (int)t;
}

/* ---------------------------------------------------------------- wfc */

const char *arbc_wfc_class(int rc, json_object *answer, char *why, size_t len)
{
	json_object *cls;
	const char *c, *w;

	if (no_answer(rc, answer, why, len))
		return NULL;
	cls = get(answer, "class");
	w = str(answer, "why");
	if (!cls || json_object_is_type(cls, json_type_null)) {
		snprintf(why, len, "tandem-arbiterd does not know: %s",
			 w ? w : "it knows nothing of the peer");
		return NULL;
	}
	c = json_object_is_type(cls, json_type_string) ? json_object_get_string(cls) : "";
	snprintf(why, len, "%s", w ? w : "");
	if (!strcmp(c, "default"))
		return "default";
	if (!strcmp(c, "degraded"))
		return "degraded";
	if (!strcmp(c, "outdated"))
		return "peer-outdated";
	snprintf(why, len, "tandem-arbiterd's class '%s' is unknown to this version", c);
	return NULL;
}

/* ---------------------------------------------------------------- may-promote */

enum arbc_promote arbc_may_promote(int rc, json_object *answer, char *why, size_t len)
{
	json_object *allow;
	const char *w;

	if (no_answer(rc, answer, why, len))
		return ARBC_PROMOTE_NO_VETO;
	allow = get(answer, "allow");
	w = str(answer, "why");
	if (!allow || !json_object_is_type(allow, json_type_boolean)) {
		snprintf(why, len, "tandem-arbiterd's answer has no allow");
		return ARBC_PROMOTE_NO_VETO;
	}
	if (json_object_get_boolean(allow)) {
		snprintf(why, len, "%s", w ? w : "");
		return ARBC_PROMOTE_ALLOW;
	}
	snprintf(why, len, "%s", w ? w : "tandem-arbiterd gave no reason");
	return ARBC_PROMOTE_REFUSE;
}
