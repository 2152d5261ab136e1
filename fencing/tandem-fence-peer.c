/*
 * tandem-fence-peer: the fence-peer handler (drbd-utils' crm-fence-peer
 * and dopd's client, in C on libcib). It asks tandem-arbiterd first
 * (doc/arbiter.md §7): the arbiter may have the peer outdated over
 * corosync (exit 3, 4, 6: no constraint), or find the peer's node gone
 * and have the handler place the constraint (4) and, under
 * resource-and-stonith, fence the node through Pacemaker's fencer (7, or
 * 5 when not confirmed). Without an answer from the arbiter it takes the
 * CIB path, as before: it places the location constraint tandem-fence-RES
 * that forbids the Promoted role of the resource's clone on every node
 * but this one, and tells tandemd through its exit code what became of
 * the peer (ref/drbd-semantics.md section 7): 3 peer Inconsistent, 4 peer
 * outdated (reachable, constraint placed), 5 peer unreachable, 7 peer
 * fenced; 1 when nothing could be decided or placed. The decisions are
 * fence-policy.c's and arbc.c's; this file gathers their inputs and acts.
 */
#include "config.h"

#include <crm/common/results.h>
#include <crm/stonith-ng.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arbc.h"
#include "ctlc.h"
#include "fence-cib.h"
#include "fence-ctl.h"
#include "fence-handler.h"
#include "fence-policy.h"

#define PLACE_TRIES 3

struct run {
	struct fence_handler_opts o;
	struct fence_cib *cib;
	struct fence_cib_facts facts;
	char id[FENCE_POLICY_NAME_MAX + 16];
	char clone[FENCE_POLICY_NAME_MAX];
	struct fence_constraint want, have;
	enum fence_have have_kind;
	struct fence_ctl_res local;
};

static void read_have(struct run *r)
{
	r->have_kind = fence_cib_get(r->cib, r->id, &r->have) == 0
			       ? fence_policy_compare(&r->have, &r->want, r->o.me)
			       : FENCE_HAVE_NONE;
}

static void describe(const struct run *r, const struct fence_constraint *c, const char *what)
{
	char nodes[512] = "";
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < c->n_allowed && len < sizeof(nodes); i++)
		len += (size_t)snprintf(nodes + len, sizeof(nodes) - len, "%s%s", i ? "," : "",
					c->allowed[i]);
	fence_handler_say(&r->o, "%s %s: rsc %s, role %s, %s%s", what, r->id, c->rsc,
			  c->role[0] ? c->role : "-",
			  c->forbids ? "Promoted allowed only on " : "not a fence rule",
			  c->forbids ? (nodes[0] ? nodes : "no node") : "");
}

/*
 * Pacemaker's view of the peer, polled like crm-fence-peer does: first a
 * DC (unless offline), then the peer's node_state until it is definite
 * (reachable with an answering controller, fenced, unreachable) or the
 * timeout runs out. The CIB query timeout grows 1, 2, 2, 3, 4, ... s.
 */
static enum fence_peer peer_state(struct run *r)
{
	bool offline = fence_cib_offline(r->cib);
	unsigned int tenths = 10;
	struct fence_node_state n = {0};
	char from[FENCE_POLICY_NAME_MAX];
	enum fence_peer p;
	long long left;

	while (!offline && fence_cib_ping(r->cib, NULL, (int)tenths * 100, from, sizeof(from))) {
		if (fence_handler_elapsed() >= r->o.dc_timeout)
			return FENCE_PEER_NO_DC;
		sleep(1); /* the controller may also fail at once */
		tenths = tenths * 5 / 4 + 1;
	}
	if (!r->o.peer[0]) {
		left = r->o.timeout - fence_handler_elapsed();
		fence_handler_say(&r->o, "the peer is not known (no DRBD_PEERS, several other "
					 "nodes): waiting the full timeout, %lld s",
				  left > 0 ? left : 0);
		if (left > 0)
			sleep((unsigned int)left);
		return FENCE_PEER_UNKNOWN;
	}
	for (;;) {
		if (fence_cib_refresh(r->cib, (tenths + 9) / 10) < 0) {
			if (fence_handler_elapsed() >= r->o.dc_timeout)
				return FENCE_PEER_NO_DC;
		} else {
			fence_cib_facts(r->cib, &r->facts);
			fence_cib_node_state(r->cib, r->o.peer, &n);
			p = fence_policy_classify(&n, r->facts.stonith_enabled,
						  r->facts.startup_fencing);
			if (p == FENCE_PEER_FENCED || p == FENCE_PEER_UNREACHABLE)
				return p;
			if (p == FENCE_PEER_REACHABLE &&
			    (offline || fence_cib_ping(r->cib, r->o.peer, (int)tenths * 200, from,
						       sizeof(from)) == 0))
				return p;
		}
		left = r->o.timeout - fence_handler_elapsed();
		if (left <= 0)
			return fence_policy_timed_out(&n);
		sleep(left < 2 ? (unsigned int)left : 2);
		tenths = tenths * 5 / 4;
	}
}

/* --network-hickup: a peer that is alive may get its link back. */
static void wait_hickup(struct run *r)
{
	struct fence_ctl_res st;

	while (fence_handler_elapsed() < r->o.hickup) {
		if (fence_ctl_status(r->o.run_dir, r->o.res, 5000, &st) == 0 &&
		    st.pdisk == FENCE_DISK_UPTODATE) {
			r->local = st;
			return;
		}
		sleep(1);
	}
}

/* Create the constraint, or restrict a wider one; the CIB arbitrates
 * between concurrent runs on both nodes. 0, or 1 for the exit code. */
static int place(struct run *r)
{
	int tries, rc;

	for (tries = 0; tries < PLACE_TRIES; tries++) {
		if (r->have_kind == FENCE_HAVE_WIDER) {
			describe(r, &r->have, "restricting");
			rc = fence_cib_remove(r->cib, r->id, &r->have);
			if (rc < 0 && rc != -ENOENT) {
				fence_handler_say(&r->o, "%s", fence_cib_error(r->cib));
				return 1;
			}
		}
		rc = fence_cib_create(r->cib, r->id, &r->want);
		if (rc == 0) {
			describe(r, &r->want, "placed");
			return 0;
		}
		if (rc != -EEXIST) {
			fence_handler_say(&r->o, "%s", fence_cib_error(r->cib));
			return 1;
		}
		/* someone else was faster (the peer, or a concurrent run): look */
		if (fence_cib_refresh(r->cib, r->o.dc_timeout ? r->o.dc_timeout : 1) < 0) {
			fence_handler_say(&r->o, "%s", fence_cib_error(r->cib));
			return 1;
		}
		read_have(r);
		if (r->have_kind == FENCE_HAVE_SAME) {
			describe(r, &r->have, "placed concurrently, the same");
			return 0;
		}
		if (r->have_kind == FENCE_HAVE_OTHER) {
			describe(r, &r->have, "lost the race to");
			return 1;
		}
	}
	fence_handler_say(&r->o, "the constraint kept changing; giving up");
	return 1;
}

/* After 3/4/7, as crm-fence-peer: if the peer came back UpToDate
 * meanwhile, take the constraint away again. */
static int double_check(struct run *r, int exit_code)
{
	struct fence_ctl_res st;

	if (exit_code == 5 || fence_ctl_status(r->o.run_dir, r->o.res, 5000, &st) < 0 ||
	    st.pdisk != FENCE_DISK_UPTODATE || st.disk != FENCE_DISK_UPTODATE)
		return exit_code;
	fence_handler_say(&r->o, "both disks are UpToDate again: removing the constraint");
	if (fence_cib_remove(r->cib, r->id, &r->want) < 0)
		fence_handler_say(&r->o, "%s", fence_cib_error(r->cib));
	return 1;
}

static int find_clone(struct run *r)
{
	int rc;

	if (r->o.clone_id) {
		snprintf(r->clone, sizeof(r->clone), "%s", r->o.clone_id);
		if (!fence_cib_has_resource(r->cib, r->clone)) {
			fence_handler_say(&r->o, "--id %s: no such resource in the CIB", r->clone);
			return -ENOENT;
		}
		return 0;
	}
	rc = fence_cib_find_clone(r->cib, r->o.res, r->clone, sizeof(r->clone));
	if (rc == -ENOENT)
		fence_handler_say(&r->o, "no clone of ocf:tandem:tandem with resource=%s in the "
					 "CIB; name it with --id",
				  r->o.res);
	else if (rc == -ENOTUNIQ)
		fence_handler_say(&r->o, "several promotable clones have resource=%s; name one "
					 "with --id",
				  r->o.res);
	else if (rc == -EINVAL)
		fence_handler_say(&r->o, "clone %s is not promotable (meta promotable=true)",
				  r->clone);
	else if (rc < 0)
		fence_handler_say(&r->o, "cannot search the CIB: %s", strerror(-rc));
	return rc;
}

/* Sign on to the CIB, find the clone, and shape the constraint this
 * node wants (r->want) and the one there is (r->have). 0, or 1 for the
 * exit code. */
static int prepare(struct run *r)
{
	char other[FENCE_POLICY_NAME_MAX];

	if (fence_cib_open(r->cib, r->o.prog, r->o.dc_timeout) < 0) {
		fence_handler_say(&r->o, "%s", fence_cib_error(r->cib));
		return 1;
	}
	if (find_clone(r) < 0 || fence_policy_id(r->o.res, r->id, sizeof(r->id)) < 0)
		return 1;
	if (!fence_cib_has_node(r->cib, r->o.me)) {
		/* the constraint would forbid the Promoted role everywhere */
		fence_handler_say(&r->o, "this node, '%s', is not a node of the CIB; give "
					 "Pacemaker's name with --node",
				  r->o.me);
		return 1;
	}
	if (!r->o.peer[0] && fence_cib_other_node(r->cib, r->o.me, other, sizeof(other)) == 0)
		snprintf(r->o.peer, sizeof(r->o.peer), "%s", other);
	fence_cib_facts(r->cib, &r->facts);
	snprintf(r->want.rsc, sizeof(r->want.rsc), "%s", r->clone);
	snprintf(r->want.role, sizeof(r->want.role), "%s",
		 r->o.role ? r->o.role : fence_policy_role(r->facts.validate_with));
	r->want.forbids = true;
	r->want.n_allowed = 1;
	snprintf(r->want.allowed[0], sizeof(r->want.allowed[0]), "%s", r->o.me);
	read_have(r);
	if (r->have_kind != FENCE_HAVE_NONE && !r->o.quiet)
		describe(r, &r->have, "found");
	return 0;
}

/* The CIB path: the peer as Pacemaker sees it decides (fence-policy.c). */
static int cib_path(struct run *r)
{
	struct fence_out out;
	struct fence_in in;
	const char *src;
	bool polled;
	int rc;

	if ((rc = prepare(r)))
		return rc;
	src = fence_handler_local(&r->o, &r->local);
	polled = false;
	in = (struct fence_in){
		.peer = FENCE_PEER_UNKNOWN,
		.disk = r->local.disk,
		.pdisk = r->local.pdisk,
		.quorum = r->facts.quorum,
		.unreachable_is_outdated = r->o.unreachable_is_outdated,
		.have = r->have_kind,
	};
	if ((in.have == FENCE_HAVE_NONE || in.have == FENCE_HAVE_WIDER) && in.quorum &&
	    in.disk != FENCE_DISK_NONE && in.pdisk != FENCE_DISK_UPTODATE) {
		in.peer = peer_state(r);
		polled = true;
		if (in.peer == FENCE_PEER_REACHABLE && r->o.hickup) {
			wait_hickup(r);
			in.pdisk = r->local.pdisk;
		}
		in.quorum = r->facts.quorum;
	}
	fence_policy_decide(&in, &out);
	fence_handler_say(&r->o,
			  "peer %s: %s; this node %s: %s, peer disk %s (from %s); %s; "
			  "clone %s: %s",
			  r->o.peer[0] ? r->o.peer : "?",
			  polled ? fence_policy_peer_name(in.peer) : "not polled", r->o.me,
			  fence_handler_disk_name(in.disk), fence_handler_disk_name(in.pdisk),
			  src ? src : "nowhere", in.quorum ? "quorate" : "no quorum", r->clone,
			  out.why);
	switch (out.action) {
	case FENCE_ACT_PLACE:
		rc = place(r);
		return rc ? rc : double_check(r, out.exit);
	case FENCE_ACT_REMOVE:
		rc = fence_cib_remove(r->cib, r->id, &r->have);
		if (rc < 0 && rc != -ENOENT)
			fence_handler_say(&r->o, "%s", fence_cib_error(r->cib));
		else
			fence_handler_say(&r->o, "removed %s", r->id);
		return out.exit;
	case FENCE_ACT_NOTHING:
		break;
	}
	return out.exit;
}

/* ---------------------------------------------------------------- the arbiter */

/* Ask tandem-arbiterd (doc/arbiter.md §7) what to do; arbc.c reads the
 * answer into *af (a fallback, with the reason, when there is none). */
static void ask_arbiter(struct run *r, struct arbc_fence *af)
{
	int64_t t = arbc_fence_timeout_ms(r->o.timeout, fence_handler_elapsed_ms());
	json_object *req = arbc_request("fence-peer", r->o.res), *resp = NULL;
	int rc = -ENOMEM;

	if (req) {
		json_object_object_add(req, "timeout_ms", json_object_new_int64(t));
		rc = arbc_call(r->o.run_dir, req, t + ARBC_FENCE_SLACK_MS, &resp);
	}
	arbc_fence_decide(rc, resp, af);
	json_object_put(req);
	json_object_put(resp);
	if (af->act == ARBC_FENCE_FALLBACK)
		fence_handler_say(&r->o, "%s (%s/" CTLC_ARBITER_SOCK_NAME "): taking the CIB path",
				  af->why, r->o.run_dir);
	else
		fence_handler_say(&r->o, "tandem-arbiterd (asked for %lld ms): %s, exit %d%s%s",
				  (long long)t, arbc_fence_act_name(af->act), af->exit,
				  af->why[0] ? ": " : "", af->why);
}

/* Tell the arbiter what this handler did, so that it multicasts FENCED
 * (doc/arbiter.md §4.6). A failure changes nothing but the log. */
static void tell_fenced(struct run *r, const char *how)
{
	json_object *req = arbc_request("fenced", r->o.res), *resp = NULL, *ok;
	int rc = -ENOMEM;

	if (req) {
		json_object_object_add(req, "how", json_object_new_string(how));
		rc = arbc_call(r->o.run_dir, req, ARBC_TIMEOUT_MS, &resp);
	}
	if (rc < 0)
		fence_handler_say(&r->o, "could not tell tandem-arbiterd (fenced %s): %s", how,
				  ctlc_strerror(rc));
	else if (!json_object_object_get_ex(resp, "ok", &ok) || !json_object_get_boolean(ok))
		fence_handler_say(&r->o, "tandem-arbiterd refused 'fenced %s': %s", how,
				  json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
	json_object_put(req);
	json_object_put(resp);
}

/* Fence the peer node through Pacemaker's fencer (off), waiting for its
 * confirmation until --timeout runs out: 7 confirmed, 5 not. */
static int fence_node(struct run *r, const struct arbc_fence *af)
{
	const char *target = r->o.peer[0] ? r->o.peer : af->peer;
	int t = arbc_stonith_timeout_s(r->o.timeout, fence_handler_elapsed_ms()), rc;

	if (!target[0]) {
		fence_handler_say(&r->o, "no name of the peer node to fence (no DRBD_PEERS, "
					 "--peer, or peer in the arbiter's answer)");
		return 5;
	}
	if (!strcmp(target, r->o.me)) {
		fence_handler_say(&r->o, "refusing to fence this node, %s", target);
		return 1;
	}
	if (af->peer[0] && strcmp(af->peer, target))
		fence_handler_say(&r->o, "the arbiter's peer %s is %s to Pacemaker (--peer)",
				  af->peer, target);
	if (fence_cib_offline(r->cib)) {
		/* a dry run on a CIB file: there is no fencer to ask */
		fence_handler_say(&r->o, "CIB_file: no cluster, the fencer is not asked to fence "
					 "%s: not confirmed",
				  target);
		return 5;
	}
	fence_handler_say(&r->o, "asking Pacemaker's fencer to turn %s off (waiting %d s)",
			  target, t);
	rc = stonith_api_kick(af->peer_id, target, t, true);
	if (rc != pcmk_ok) {
		fence_handler_say(&r->o, "the fencer did not confirm that %s is off: %s (%d)",
				  target, pcmk_strerror(rc), rc);
		return 5;
	}
	fence_handler_say(&r->o, "the fencer confirmed that %s is off", target);
	tell_fenced(r, "stonith");
	return 7;
}

/* The arbiter found the peer's node gone from a quorate partition: the
 * constraint as the CIB path places it, then (stonith) the fencer. */
static int arbiter_acts(struct run *r, const struct arbc_fence *af)
{
	int rc;

	if ((rc = prepare(r)) || (rc = place(r))) {
		fence_handler_say(&r->o, "the constraint could not be placed%s",
				  af->act == ARBC_FENCE_STONITH ? ": not fencing the peer" : "");
		return rc;
	}
	if (af->act == ARBC_FENCE_STONITH)
		return fence_node(r, af);
	rc = double_check(r, 4);
	if (rc == 4)
		tell_fenced(r, "constraint");
	return rc;
}

static int run(struct run *r)
{
	struct arbc_fence af;

	ask_arbiter(r, &af);
	switch (af.act) {
	case ARBC_FENCE_EXIT:
		return af.exit;
	case ARBC_FENCE_CONSTRAINT:
	case ARBC_FENCE_STONITH:
		return arbiter_acts(r, &af);
	case ARBC_FENCE_FALLBACK:
		break;
	}
	return cib_path(r);
}

/* ---------------------------------------------------------------- --list, --clear */

struct list_ctx {
	struct run *r;
	unsigned int n, n_stale, n_removed, n_failed;
	bool told_no_tandemd;
};

/* What tandemd says about resource `res`, as fence_policy_stale() wants it. */
static void ask_tandemd(struct list_ctx *l, const char *res, struct fence_res_state *s)
{
	struct fence_ctl_res st;
	int rc = fence_ctl_status(l->r->o.run_dir, res, 5000, &st);

	s->asked = rc == 0 || rc == -ENOENT;
	s->known = rc == 0;
	s->connected = rc == 0 && fence_policy_connected(st.conn);
	s->disk = rc == 0 ? st.disk : FENCE_DISK_NONE;
	s->pdisk = rc == 0 ? st.pdisk : FENCE_DISK_NONE;
	if (!s->asked && !l->told_no_tandemd) {
		fprintf(stderr, "%s: cannot ask tandemd (%s/tandemd.sock): %s; constraints of "
				"resources it may run are kept\n",
			l->r->o.prog, l->r->o.run_dir, fence_ctl_error(rc));
		l->told_no_tandemd = true;
	}
}

/* Remove a stale constraint under the resource's handler lock, after
 * asking tandemd once more, and only as it was read (a handler that
 * placed it anew meanwhile wins). */
static void clear_one(struct list_ctx *l, const char *id, const struct fence_constraint *fc,
		      const char *res, struct fence_res_state *s)
{
	struct run *r = l->r;
	enum fence_stale why;
	int lock, rc;

	r->o.res = res;
	lock = fence_handler_lock(&r->o);
	if (s->clone_exists)
		ask_tandemd(l, res, s);
	why = fence_policy_stale(s);
	if (!fence_policy_is_stale(why)) {
		printf("%s: kept, it is %s now\n", id, fence_policy_stale_text(why));
	} else {
		rc = fence_cib_remove(r->cib, id, fc->forbids ? fc : NULL);
		if (rc == 0) {
			printf("%s: removed\n", id);
			l->n_removed++;
		} else {
			fprintf(stderr, "%s: %s: %s\n", r->o.prog, id, fence_cib_error(r->cib));
			l->n_failed++;
		}
	}
	if (lock >= 0)
		close(lock);
	r->o.res = NULL;
}

static int list_one(const char *id, const struct fence_constraint *fc, void *arg)
{
	struct list_ctx *l = arg;
	struct run *r = l->r;
	struct fence_res_state s = {0};
	char res[FENCE_POLICY_NAME_MAX], nodes[512] = "";
	enum fence_stale why;
	size_t len = 0;
	unsigned int i;

	l->n++;
	/* the resource: the clone's tandem primitive says; else the id */
	if (fence_cib_clone_resource(r->cib, fc->rsc, res, sizeof(res)) < 0)
		snprintf(res, sizeof(res), "%s", id + strlen(FENCE_POLICY_ID_PREFIX));
	s.clone_exists = fc->rsc[0] && fence_cib_has_resource(r->cib, fc->rsc);
	if (s.clone_exists)
		ask_tandemd(l, res, &s);
	why = fence_policy_stale(&s);
	for (i = 0; i < fc->n_allowed && len < sizeof(nodes); i++)
		len += (size_t)snprintf(nodes + len, sizeof(nodes) - len, "%s%s", i ? "," : "",
					fc->allowed[i]);
	printf("%s: clone %s, resource %s, %s%s: %s\n", id, fc->rsc[0] ? fc->rsc : "-", res,
	       fc->forbids ? "Promoted only on " : "not a fence rule",
	       fc->forbids ? (nodes[0] ? nodes : "no node") : "", fence_policy_stale_text(why));
	if (fence_policy_is_stale(why)) {
		l->n_stale++;
		if (r->o.clear)
			clear_one(l, id, fc, res, &s);
	}
	return 0;
}

static int list_drbd(const char *id, const struct fence_constraint *fc, void *arg)
{
	struct list_ctx *l = arg;

	printf("%s: clone %s: left by drbd-utils' crm-fence-peer, not tandem's: if DRBD no "
	       "longer runs here, remove it with: cibadmin -D -X '<rsc_location id=\"%s\"/>'\n",
	       id, fc->rsc[0] ? fc->rsc : "-", id);
	l->n++;
	return 0;
}

/* `tandemadm fence-constraints [--clear]`: every tandem-fence-* location
 * constraint, whether it still protects anything, and with --clear the
 * stale ones removed. 0; 1 if the CIB could not be read or a removal
 * failed. */
static int list(struct run *r)
{
	struct list_ctx l = {.r = r};

	if (fence_cib_open(r->cib, r->o.prog, r->o.dc_timeout) < 0) {
		fprintf(stderr, "%s: %s\n", r->o.prog, fence_cib_error(r->cib));
		return 1;
	}
	fence_cib_each(r->cib, FENCE_POLICY_ID_PREFIX, list_one, &l);
	fence_cib_each(r->cib, "drbd-fence-by-handler-", list_drbd, &l);
	if (!l.n)
		printf("no fence constraints\n");
	else if (l.n_stale && !r->o.clear)
		printf("%u stale; remove them with: tandemadm fence-constraints --clear\n",
		       l.n_stale);
	return l.n_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct run r;
	int rc, lock;

	fence_handler_elapsed();
	rc = fence_handler_parse(&r.o, argc, argv);
	if (rc >= 0)
		return rc;
	if (r.o.list) {
		r.cib = fence_cib_new(r.o.prog);
		rc = r.cib ? list(&r) : 1;
		fence_cib_free(r.cib);
		return rc;
	}
	if (!r.o.quiet)
		fence_handler_say(&r.o, "fencing peer %s from %s (timeout %u s, dc-timeout %u s)",
				  r.o.peer[0] ? r.o.peer : "?", r.o.me, r.o.timeout,
				  r.o.dc_timeout);
	lock = fence_handler_lock(&r.o);
	r.cib = fence_cib_new(r.o.prog);
	if (!r.cib) {
		fence_handler_say(&r.o, "out of memory");
		return 1;
	}
	rc = run(&r);
	fence_cib_free(r.cib);
	if (lock >= 0)
		close(lock);
	if (!r.o.quiet || rc != 4)
		fence_handler_say(&r.o, "exit %d", rc);
	return rc;
}
