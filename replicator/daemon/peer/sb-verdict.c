/*
 * sb-verdict: the handshake asks tandem-arbiterd for the one split-brain
 * verdict of both nodes (doc/arbiter.md §6.3).
 *
 * When uuid_compare finds a split brain, both tandemds ask their arbiter,
 * giving the two current UUIDs and this node's after-sb options; one
 * arbiter decides from the shared table and both get the same verdict.
 * It is applied as DRBD's manual resolution is: the loser's changes are
 * discarded (the after-sb options set aside, discard-my-data on the
 * loser's side), or the connection is dropped when the verdict names
 * none. Without an arbiter, or without a verdict in time, the handshake
 * applies the after-sb rules to its own view, as before.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arbc.h"
#include "ctlc.h"
#include "log.h"
#include "peer/peer-int.h"

/* The handshake waits this long at most: both sides ask at once, and the
 * verdict is one CPG round after the later one's facts. */
#define SB_VERDICT_MS 3000

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

int sb_verdict_ask(struct peer *p, const struct uuidcmp_input *in, struct sb_verdict *out)
{
	json_object *req = arbc_request("sb-verdict", p->r->name), *ans = NULL, *asb;
	const char *loser, *id, *why;
	char buf[20];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!req)
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "%016" PRIX64, in->self.uuids.uuid[GI_CURRENT]);
	json_object_object_add(req, "current", json_object_new_string(buf));
	snprintf(buf, sizeof(buf), "%016" PRIX64, in->peer.uuids.uuid[GI_CURRENT]);
	json_object_object_add(req, "peer_current", json_object_new_string(buf));
	asb = json_object_new_array();
	json_object_array_add(asb, json_object_new_int((int)in->asb.after_sb_0pri));
	json_object_array_add(asb, json_object_new_int((int)in->asb.after_sb_1pri));
	json_object_array_add(asb, json_object_new_int((int)in->asb.after_sb_2pri));
	json_object_object_add(req, "after_sb", asb);
	if (in->asb.after_sb_0pri == SBPOLICY_DISCARD_NODE && in->asb.node[0])
		json_object_object_add(req, "discard_node", json_object_new_string(in->asb.node));
	json_object_object_add(req, "timeout_ms", json_object_new_int(SB_VERDICT_MS));
	rc = arbc_call(p->r->d->run_dir, req, SB_VERDICT_MS + 1000, &ans);
	json_object_put(req);
	if (rc) {
		log_res(LOG_INFO, p->r->name,
			"split brain: no verdict from tandem-arbiterd (%s): the after-sb rules "
			"decide on this node's view",
			ctlc_strerror(rc));
		return rc;
	}
	if (!json_object_get_boolean(json_object_object_get(ans, "ok"))) {
		why = str_of(ans, "error");
		log_res(LOG_WARNING, p->r->name,
			"split brain: tandem-arbiterd gave no verdict (%s): the after-sb rules "
			"decide on this node's view",
			why ? why : "refused");
		json_object_put(ans);
		return -EAGAIN;
	}
	loser = str_of(ans, "loser");
	id = str_of(ans, "id");
	why = str_of(ans, "why");
	snprintf(out->id, sizeof(out->id), "%s", id ? id : "?");
	snprintf(out->why, sizeof(out->why), "%s", why ? why : "");
	if (!loser)
		out->loser = 0;
	else if (!strcmp(loser, p->me))
		out->loser = 1;
	else if (!strcmp(loser, p->peer_name))
		out->loser = -1;
	else {
		log_res(LOG_WARNING, p->r->name,
			"split brain: verdict %s names %s, neither %s nor %s: ignored", out->id,
			loser, p->me, p->peer_name);
		json_object_put(ans);
		return -EINVAL;
	}
	log_res(LOG_WARNING, p->r->name, "split brain: verdict %s from tandem-arbiterd: %s (%s)",
		out->id,
		out->loser > 0	 ? "this node's changes are discarded"
		: out->loser < 0 ? "the peer's changes are discarded"
				 : "no loser, disconnect",
		out->why);
	json_object_put(ans);
	return 0;
}

void sb_verdict_apply(const struct sb_verdict *v, struct uuidcmp_input *in)
{
	in->asb.after_sb_0pri = SBPOLICY_DISCONNECT;
	in->asb.after_sb_1pri = SBPOLICY_DISCONNECT;
	in->asb.after_sb_2pri = SBPOLICY_DISCONNECT;
	in->self.discard_my_data = v->loser > 0;
	in->peer.discard_my_data = v->loser < 0;
}
