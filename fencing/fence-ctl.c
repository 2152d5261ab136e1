/*
 * fence-ctl: one "status" request to tandemd's control socket through
 * the library's client (ctlc.h), reduced to what the fence rules need.
 * Handlers run while a resource may be frozen, so the request has a
 * deadline.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlc.h"
#include "fence-ctl.h"

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

int fence_ctl_from_json(json_object *r, struct fence_ctl_res *out)
{
	json_object *vols, *v, *up;
	size_t i, n;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(r, json_type_object) || !jstr(r, "name"))
		return -EPROTO;
	copy(out->role, sizeof(out->role), jstr(r, "role"));
	copy(out->conn, sizeof(out->conn), jstr(r, "connection"));
	out->up = json_object_object_get_ex(r, "up", &up) ? json_object_get_boolean(up)
							   : strcmp(out->conn, "Unconfigured") != 0;
	out->disk = FENCE_DISK_NONE;
	out->pdisk = FENCE_DISK_NONE;
	if (!json_object_object_get_ex(r, "volumes", &vols) ||
	    !json_object_is_type(vols, json_type_array))
		return 0;
	n = json_object_array_length(vols);
	for (i = 0; i < n; i++) {
		enum fence_disk d, pd;

		v = json_object_array_get_idx(vols, i);
		d = fence_policy_disk(jstr(v, "disk"));
		pd = fence_policy_disk(jstr(v, "peer_disk"));
		out->disk = i ? fence_policy_worse(out->disk, d) : d;
		out->pdisk = i ? fence_policy_worse(out->pdisk, pd) : pd;
	}
	out->n_vols = (unsigned int)n;
	return 0;
}

int fence_ctl_from_answer(json_object *resp, const char *res, struct fence_ctl_res *out)
{
	json_object *ok, *list, *r, *ex;
	size_t i;

	if (!json_object_is_type(resp, json_type_object) ||
	    !json_object_object_get_ex(resp, "ok", &ok))
		return -EPROTO;
	/* exit 10: "'r9' is not a resource of this node" */
	if (!json_object_get_boolean(ok))
		return json_object_object_get_ex(resp, "exit", &ex) && json_object_get_int(ex) == 10
			       ? -ENOENT
			       : -EPROTO;
	if (!json_object_object_get_ex(resp, "resources", &list) ||
	    !json_object_is_type(list, json_type_array))
		return -EPROTO;
	for (i = 0; i < json_object_array_length(list); i++) {
		r = json_object_array_get_idx(list, i);
		if (jstr(r, "name") && !strcmp(jstr(r, "name"), res))
			return fence_ctl_from_json(r, out);
	}
	return -ENOENT;
}

const char *fence_ctl_error(int rc)
{
	return rc == -ENOTCONN ? "not running (cannot connect)" : ctlc_strerror(rc);
}

int fence_ctl_status(const char *run_dir, const char *res, int timeout_ms,
		     struct fence_ctl_res *out)
{
	int64_t deadline = ctlc_deadline(timeout_ms);
	json_object *req, *resp;
	struct ctlc *c;
	int rc;

	rc = ctlc_open(run_dir, deadline, &c);
	if (rc < 0)
		return rc == -ENAMETOOLONG || rc == -ENOMEM || rc == -ETIMEDOUT ? rc : -ENOTCONN;
	req = json_object_new_object();
	if (!req) {
		ctlc_close(c);
		return -ENOMEM;
	}
	json_object_object_add(req, "cmd", json_object_new_string("status"));
	json_object_object_add(req, "res", json_object_new_string(res));
	rc = ctlc_call(c, req, deadline, &resp);
	ctlc_close(c);
	json_object_put(req);
	if (rc == 0)
		rc = fence_ctl_from_answer(resp, res, out);
	json_object_put(resp);
	return rc;
}

int fence_ctl_from_env(struct fence_ctl_res *out)
{
	const char *disk = getenv("TANDEM_DISK");

	const char *pdisk = getenv("TANDEM_PEER_DISK");

	memset(out, 0, sizeof(*out));
	if (!disk || !*disk)
		return -ENOENT;
	copy(out->role, sizeof(out->role), getenv("TANDEM_ROLE"));
	copy(out->conn, sizeof(out->conn), getenv("TANDEM_CONNECTION"));
	out->up = true;
	out->disk = fence_policy_disk(disk);
	out->pdisk = pdisk && *pdisk ? fence_policy_disk(pdisk) : FENCE_DISK_DUNKNOWN;
	out->n_vols = 1;
	if (out->disk == FENCE_DISK_NONE || (pdisk && *pdisk && out->pdisk == FENCE_DISK_NONE)) {
		out->disk = out->pdisk = FENCE_DISK_NONE;
		return -EINVAL;
	}
	return 0;
}
