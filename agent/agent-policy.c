/*
 * agent-policy: the OCF agent's decisions as pure functions (see
 * agent-policy.h). Each decision is one ordered list of rules, the first
 * that matches wins, so that the code reads like the table in
 * doc/ocf-agent.md.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent-policy.h"

/* ---------------------------------------------------------------- the facts */

bool agent_policy_all_disks(const struct agent_policy_view *v, enum state_disk d)
{
	unsigned int i;

	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].disk != d)
			return false;
	return v->n_vols > 0;
}

static bool any_disk(const struct agent_policy_view *v, enum state_disk d)
{
	unsigned int i;

	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].disk == d)
			return true;
	return false;
}

static bool any_pdsk(const struct agent_policy_view *v, enum state_disk d)
{
	unsigned int i;

	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].pdsk == d)
			return true;
	return false;
}

static bool all_pdsk_uptodate(const struct agent_policy_view *v)
{
	unsigned int i;

	if (v->conn < CONN_CONNECTED)
		return false;
	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].pdsk != DISK_UPTODATE)
			return false;
	return v->n_vols > 0;
}

bool agent_policy_uptodate_access(const struct agent_policy_view *v)
{
	unsigned int i;

	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].disk != DISK_UPTODATE &&
		    !(v->conn >= CONN_CONNECTED && v->vols[i].pdsk == DISK_UPTODATE))
			return false;
	return v->n_vols > 0;
}

unsigned int agent_policy_clients(const struct agent_policy_view *v)
{
	unsigned int i, n = 0;

	for (i = 0; i < v->n_vols; i++)
		n += v->vols[i].clients;
	return n;
}

/* ---------------------------------------------------------------- parameters */

int agent_policy_parse_bool(const char *text, bool def, bool *out)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};
	size_t i;

	if (!text || !*text) {
		*out = def;
		return 0;
	}
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(text, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(text, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

bool agent_policy_valid_name(const char *name)
{
	const char *p;

	if (!name || !*name || strlen(name) > 128)
		return false;
	for (p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-%+./:=@_", *p))
			return false;
	return true;
}

int agent_policy_parse_scores(const char *text, struct agent_policy_scores *out, char *err,
			      size_t errlen)
{
	long v[4];
	const char *p = text;
	char *end;
	int i;

	if (!text)
		text = p = AGENT_POLICY_SCORES_DEFAULT;
	for (i = 0; i < 4; i++) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p) {
			snprintf(err, errlen, "'%s' has %d value%s, expected four integers like '%s'",
				 text, i, i == 1 ? "" : "s", AGENT_POLICY_SCORES_DEFAULT);
			return -EINVAL;
		}
		errno = 0;
		v[i] = strtol(p, &end, 10);
		if (end == p || (*end && !isspace((unsigned char)*end)) || errno ||
		    v[i] < -1000000 || v[i] > 1000000) {
			snprintf(err, errlen, "'%s': value %d is not an integer in -1000000..1000000",
				 text, i + 1);
			return -EINVAL;
		}
		if (i > 0 && v[i] < v[i - 1]) {
			snprintf(err, errlen, "'%s': the values must not decrease (%ld after %ld)", text,
				 v[i], v[i - 1]);
			return -EINVAL;
		}
		p = end;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p) {
		snprintf(err, errlen, "'%s' has more than four values", text);
		return -EINVAL;
	}
	out->only_consistent = (int)v[0];
	out->only_remote = (int)v[1];
	out->local_ok = (int)v[2];
	out->best = (int)v[3];
	return 0;
}

int agent_policy_wfc(const char *param, const char *wfc_class, uint64_t wfc, uint64_t degr,
		     uint64_t outd, long *secs)
{
	uint64_t t;
	char *end;
	long n;

	if (!param || !strcmp(param, "config")) {
		/* DRBD's sanity rules (ref/drbd-semantics.md §8) */
		if (wfc > 0 && (degr == 0 || degr > wfc))
			degr = wfc;
		if (degr > 0 && (outd == 0 || outd > degr))
			outd = degr;
		t = !wfc_class || !strcmp(wfc_class, "default") ? wfc
		    : !strcmp(wfc_class, "degraded")             ? degr
		    : !strcmp(wfc_class, "peer-outdated")        ? outd
								 : wfc;
		*secs = t > LONG_MAX ? LONG_MAX : (long)t;
		return 0;
	}
	if (!*param || !strcmp(param, "none")) {
		*secs = -1;
		return 0;
	}
	errno = 0;
	n = strtol(param, &end, 10);
	if (*end || errno || n < 0 || !isdigit((unsigned char)*param))
		return -EINVAL;
	*secs = n;
	return 0;
}

/* ---------------------------------------------------------------- decisions */

static struct agent_policy_score score_of(enum agent_policy_score_op op, int value,
					  const char *why)
{
	struct agent_policy_score s = {.op = op, .value = value, .why = why};

	if (op == AGENT_POLICY_SCORE_SET && value <= 0)
		s.op = AGENT_POLICY_SCORE_DELETE; /* never 0 or negative */
	return s;
}

struct agent_policy_score agent_policy_score(const struct agent_policy_view *v,
					     const struct agent_policy_scores *s,
					     bool remove_if_peer_primary)
{
	bool uptodate = agent_policy_all_disks(v, DISK_UPTODATE);
	unsigned int i;

	if (v->presence != AGENT_POLICY_UP)
		return score_of(AGENT_POLICY_SCORE_DELETE, 0, "not running");
	if (v->n_vols == 0)
		return score_of(AGENT_POLICY_SCORE_DELETE, 0, "no volumes");
	if (any_disk(v, DISK_ATTACHING) || any_disk(v, DISK_NEGOTIATING))
		return score_of(AGENT_POLICY_SCORE_KEEP, 0, "a disk is attaching");
	if (v->no_quorum)
		return score_of(AGENT_POLICY_SCORE_DELETE, 0,
				"no quorum (quorum majority): this partition may not promote");
	if (remove_if_peer_primary && v->role != ROLE_PRIMARY && v->peer == ROLE_PRIMARY &&
	    all_pdsk_uptodate(v))
		return score_of(AGENT_POLICY_SCORE_DELETE, 0,
				"the peer is Primary (remove_promotion_score_if_peer_primary)");
	if (uptodate && v->role == ROLE_PRIMARY)
		return score_of(AGENT_POLICY_SCORE_SET, s->best, "UpToDate and Primary");
	if (uptodate && !any_pdsk(v, DISK_DUNKNOWN))
		return score_of(AGENT_POLICY_SCORE_SET, s->best, "UpToDate, the peer's disk known");
	if (uptodate)
		return score_of(AGENT_POLICY_SCORE_SET, s->local_ok,
				"UpToDate, the peer's disk unknown");
	if (all_pdsk_uptodate(v))
		return score_of(AGENT_POLICY_SCORE_SET, s->only_remote,
				"only the peer's disk is UpToDate");
	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].disk < DISK_CONSISTENT || v->vols[i].disk == DISK_DUNKNOWN)
			break;
	if (i == v->n_vols)
		return score_of(AGENT_POLICY_SCORE_SET, s->only_consistent, "Consistent only");
	return score_of(AGENT_POLICY_SCORE_DELETE, 0, "no access to UpToDate data");
}

enum agent_policy_ocf agent_policy_monitor(const struct agent_policy_view *v)
{
	switch (v->presence) {
	case AGENT_POLICY_NO_DAEMON:
	case AGENT_POLICY_UNKNOWN_RES:
	case AGENT_POLICY_DOWN:
		return AGENT_POLICY_OCF_NOT_RUNNING;
	case AGENT_POLICY_BAD_ANSWER:
		return AGENT_POLICY_OCF_ERR_GENERIC;
	case AGENT_POLICY_UP:
		break;
	}
	if (v->role == ROLE_PRIMARY)
		return agent_policy_uptodate_access(v) ? AGENT_POLICY_OCF_RUNNING_PROMOTED
						       : AGENT_POLICY_OCF_FAILED_PROMOTED;
	if (v->role == ROLE_SECONDARY)
		return AGENT_POLICY_OCF_SUCCESS;
	return AGENT_POLICY_OCF_ERR_GENERIC;
}

/* The refusal a volume without access to UpToDate data causes. */
static enum agent_policy_promote no_data_cause(const struct agent_policy_view *v,
					       bool consistent_is_fencing)
{
	unsigned int i;

	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].disk == DISK_OUTDATED)
			return AGENT_POLICY_PROMOTE_OUTDATED;
	if (consistent_is_fencing && any_disk(v, DISK_CONSISTENT))
		return AGENT_POLICY_PROMOTE_FENCING;
	return AGENT_POLICY_PROMOTE_NO_DATA;
}

enum agent_policy_promote agent_policy_promote_check(const struct agent_policy_view *v,
						     bool allow_two_primaries)
{
	unsigned int i;

	if (v->presence != AGENT_POLICY_UP)
		return AGENT_POLICY_PROMOTE_NOT_RUNNING;
	if (v->role == ROLE_PRIMARY)
		return AGENT_POLICY_PROMOTE_ALREADY;
	if (v->peer == ROLE_PRIMARY && !allow_two_primaries)
		return AGENT_POLICY_PROMOTE_PEER_PRIMARY;
	if (v->n_vols == 0)
		return AGENT_POLICY_PROMOTE_NO_DATA;
	if (agent_policy_uptodate_access(v))
		return AGENT_POLICY_PROMOTE_OK;
	/* Consistent may become UpToDate once the peer is outdated: tandemd decides */
	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].disk != DISK_UPTODATE && v->vols[i].disk != DISK_CONSISTENT &&
		    !(v->conn >= CONN_CONNECTED && v->vols[i].pdsk == DISK_UPTODATE))
			return no_data_cause(v, false);
	return AGENT_POLICY_PROMOTE_OK;
}

enum agent_policy_promote agent_policy_promote_refused(const struct agent_policy_view *v, int ss)
{
	switch (ss) {
	case SS_TWO_PRIMARIES:
		return AGENT_POLICY_PROMOTE_PEER_PRIMARY;
	case SS_PRIMARY_NOP:
		return AGENT_POLICY_PROMOTE_FENCING;
	case SS_NO_UP_TO_DATE_DISK:
		return no_data_cause(v, true);
	default:
		return AGENT_POLICY_PROMOTE_REFUSED;
	}
}

/* Between losing the peer and waiting for it again. */
static bool conn_changing(enum state_conn c)
{
	return (c > CONN_STANDALONE && c < CONN_WFCONNECTION) || c == CONN_WFREPORTPARAMS;
}

const char *agent_policy_promote_transient(enum agent_policy_promote p,
					   const struct agent_policy_view *v,
					   bool fail_early_if_peer_primary)
{
	switch (p) {
	case AGENT_POLICY_PROMOTE_PEER_PRIMARY:
		if (fail_early_if_peer_primary)
			return NULL;
		return v->conn >= CONN_CONNECTED
			       ? "the peer is still Primary and connected (waiting for its demotion or "
				 "for tandemd to see it go)"
			       : "the peer is still believed Primary";
	case AGENT_POLICY_PROMOTE_FENCING:
		if (v->fence_running)
			return "fence-peer is running to outdate the peer";
		return v->fence_handler ? "the peer is not outdated yet (fence-peer runs again)"
					: NULL;
	case AGENT_POLICY_PROMOTE_REFUSED:
		return conn_changing(v->conn) ? "the connection is being torn down" : NULL;
	case AGENT_POLICY_PROMOTE_VETO:
		return "tandem-arbiterd vetoes it (the peer may still be Primary)";
	default:
		return NULL;
	}
}

const char *agent_policy_promote_text(enum agent_policy_promote p)
{
	switch (p) {
	case AGENT_POLICY_PROMOTE_OK:
		return "promotion allowed";
	case AGENT_POLICY_PROMOTE_ALREADY:
		return "already Primary";
	case AGENT_POLICY_PROMOTE_NOT_RUNNING:
		return "the resource is not running";
	case AGENT_POLICY_PROMOTE_PEER_PRIMARY:
		return "the peer is Primary";
	case AGENT_POLICY_PROMOTE_OUTDATED:
		return "the disk is Outdated";
	case AGENT_POLICY_PROMOTE_NO_DATA:
		return "no access to UpToDate data";
	case AGENT_POLICY_PROMOTE_FENCING:
		return "fencing failed: the peer's disk is not known to be Outdated";
	case AGENT_POLICY_PROMOTE_BANNED:
		return "a cli-ban constraint forbids promotion on this node";
	case AGENT_POLICY_PROMOTE_FENCE_CONSTRAINT:
		return "a fence constraint forbids promotion on this node";
	case AGENT_POLICY_PROMOTE_CONSTRAINT:
		return "a location constraint forbids promotion on this node";
	case AGENT_POLICY_PROMOTE_REFUSED:
		return "tandemd refused";
	case AGENT_POLICY_PROMOTE_VETO:
		return "tandem-arbiterd refused the promotion";
	}
	return "?";
}

const char *agent_policy_promote_hint(enum agent_policy_promote p)
{
	switch (p) {
	case AGENT_POLICY_PROMOTE_OK:
	case AGENT_POLICY_PROMOTE_ALREADY:
		return "";
	case AGENT_POLICY_PROMOTE_NOT_RUNNING:
		return "start the resource first";
	case AGENT_POLICY_PROMOTE_PEER_PRIMARY:
		return "demote the peer first; if Pacemaker believes the peer is stopped, the "
		       "cluster is split while replication works: check the cluster links";
	case AGENT_POLICY_PROMOTE_OUTDATED:
		return "start the peer so that this node resyncs from it; only if this is the last "
		       "copy, 'tandemadm primary --force' by hand";
	case AGENT_POLICY_PROMOTE_NO_DATA:
		return "wait for the resync to finish (tandemadm status)";
	case AGENT_POLICY_PROMOTE_FENCING:
		return "check the fence-peer handler and the peer; promotion works once the peer is "
		       "connected, Outdated or fenced";
	case AGENT_POLICY_PROMOTE_BANNED:
		return "remove it with crm_resource --clear (pcs resource clear, crm resource clear)";
	case AGENT_POLICY_PROMOTE_FENCE_CONSTRAINT:
		return "tandem-unfence-peer removes it once both disks are UpToDate; let the peer "
		       "resync, or remove it by id if the peer's data is lost";
	case AGENT_POLICY_PROMOTE_CONSTRAINT:
		return "remove or change that location constraint";
	case AGENT_POLICY_PROMOTE_REFUSED:
		return "see tandemd's message and log";
	case AGENT_POLICY_PROMOTE_VETO:
		return "the peer's node must be seen Secondary, or fenced, first: check "
		       "'tandemadm arbiter' and the cluster's fencing (doc/arbiter.md, 6.4)";
	}
	return "";
}

/* ---------------------------------------------------------------- constraints */

static bool minus_infinity(const char *score)
{
	return score && (!strcasecmp(score, "-INFINITY") || !strcasecmp(score, "-inf"));
}

/* Does the role cover promotion? No role: every role. */
static bool role_blocks_promotion(const char *role)
{
	return !role || !*role || !strcasecmp(role, "Promoted") || !strcasecmp(role, "Master") ||
	       !strcasecmp(role, "Started");
}

/* The rule applies to node: 1, does not: 0, cannot tell: -1. */
static int rule_matches(const struct agent_policy_rule *r, const char *node)
{
	unsigned int i;

	if (r->unknown || r->n_exprs == 0)
		return -1;
	for (i = 0; i < r->n_exprs; i++) {
		bool m = (strcasecmp(r->exprs[i].value, node) == 0) != r->exprs[i].ne;

		if (r->any && m)
			return 1;
		if (!r->any && !m)
			return 0;
	}
	return r->any ? 0 : 1;
}

static enum agent_policy_block kind_of(const char *id)
{
	if (!strncmp(id, "cli-ban-", 8))
		return AGENT_POLICY_BLOCK_BAN;
	if (!strncmp(id, "drbd-fence-by-handler-", 22) || !strncmp(id, "tandem-fence-", 13))
		return AGENT_POLICY_BLOCK_FENCE;
	return AGENT_POLICY_BLOCK_OTHER;
}

enum agent_policy_block agent_policy_location_blocks(const struct agent_policy_location *l,
						     const char *node, const char *rsc,
						     const char *clone, bool *uncertain)
{
	unsigned int i;

	if (!l->id || !l->rsc || !node ||
	    !((rsc && !strcmp(l->rsc, rsc)) || (clone && !strcmp(l->rsc, clone))))
		return AGENT_POLICY_BLOCK_NONE;
	if (l->node) {
		if (minus_infinity(l->score) && role_blocks_promotion(l->role) &&
		    !strcasecmp(l->node, node))
			return kind_of(l->id);
		return AGENT_POLICY_BLOCK_NONE;
	}
	for (i = 0; i < l->n_rules; i++) {
		const struct agent_policy_rule *r = &l->rules[i];
		int m;

		if (!minus_infinity(r->score ? r->score : l->score) ||
		    !role_blocks_promotion(r->role ? r->role : l->role))
			continue;
		m = rule_matches(r, node);
		if (m < 0)
			*uncertain = true;
		if (m > 0)
			return kind_of(l->id);
	}
	return AGENT_POLICY_BLOCK_NONE;
}

/* ---------------------------------------------------------------- meta attributes */

static void add_finding(struct agent_policy_finding *f, unsigned int max, unsigned int *n,
			enum agent_policy_ocf rc, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void add_finding(struct agent_policy_finding *f, unsigned int max, unsigned int *n,
			enum agent_policy_ocf rc, const char *fmt, ...)
{
	va_list ap;

	if (*n >= max)
		return;
	f[*n].rc = rc;
	va_start(ap, fmt);
	vsnprintf(f[*n].text, sizeof(f[*n].text), fmt, ap);
	va_end(ap);
	(*n)++;
}

/* A meta attribute that must be a number: -1 if absent, -2 if not a number. */
static long meta_num(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno || v < 0)
		return -2;
	return v;
}

enum agent_policy_ocf agent_policy_check_meta(const struct agent_policy_meta *m,
					      bool allow_two_primaries, bool notify_optional,
					      const char *res,
					      struct agent_policy_finding *f, unsigned int max,
					      unsigned int *n)
{
	static const struct {
		const char *name;
		size_t off;
	} nums[] = {
		{"clone-max", offsetof(struct agent_policy_meta, clone_max)},
		{"clone-node-max", offsetof(struct agent_policy_meta, clone_node_max)},
		{"promoted-max", offsetof(struct agent_policy_meta, promoted_max)},
		{"promoted-node-max", offsetof(struct agent_policy_meta, promoted_node_max)},
	};
	enum agent_policy_ocf worst = AGENT_POLICY_OCF_SUCCESS;
	const enum agent_policy_ocf bad = AGENT_POLICY_OCF_ERR_CONFIGURED;
	long cmax, cnmax, pmax, pnmax;
	bool promotable = false, notify = false;
	unsigned int i;

	*n = 0;
	if (!m->promotable && !m->notify && !m->clone_max && !m->promoted_max) {
		add_finding(f, max, n, AGENT_POLICY_OCF_SUCCESS,
			    "not run as a clone (no clone meta attributes): clone checks skipped");
		return worst;
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		const char *s = *(const char *const *)((const char *)m + nums[i].off);

		if (meta_num(s) == -2)
			add_finding(f, max, n, bad, "%s='%s' is not a number; set %s=%s", nums[i].name,
				    s, nums[i].name, i == 0 ? "2" : "1");
	}
	cmax = meta_num(m->clone_max);
	cnmax = meta_num(m->clone_node_max);
	pmax = meta_num(m->promoted_max);
	pnmax = meta_num(m->promoted_node_max);
	if (agent_policy_parse_bool(m->promotable, false, &promotable) < 0 || !promotable) {
		if (pmax <= 0)
			add_finding(f, max, n, bad,
				    "the clone of %s is not promotable: set promotable=true on the "
				    "clone (pcs resource promotable, crm ... meta promotable=true)",
				    res);
	}
	if ((agent_policy_parse_bool(m->notify, false, &notify) < 0 || !notify) && notify_optional)
		add_finding(f, max, n, AGENT_POLICY_OCF_SUCCESS,
			    "notify is %s on the clone of %s (ignore_missing_notifications): no "
			    "reconnect after the peer starts, no outdating on notifications",
			    m->notify ? m->notify : "off", res);
	else if (agent_policy_parse_bool(m->notify, false, &notify) < 0 || !notify)
		add_finding(f, max, n, bad,
			    "notify is %s on the clone of %s: set notify=true (the agent reconnects "
			    "and re-scores on notifications), or ignore_missing_notifications=true",
			    m->notify ? m->notify : "off", res);
	if (pmax > 2)
		add_finding(f, max, n, bad,
			    "promoted-max=%ld: a tandem resource has two nodes; set promoted-max=1",
			    pmax);
	else if (pmax == 2 && !allow_two_primaries)
		add_finding(f, max, n, bad,
			    "promoted-max=2 needs allow-two-primaries in the net section of %s; "
			    "set promoted-max=1",
			    res);
	if (pnmax > 1)
		add_finding(f, max, n, bad, "promoted-node-max=%ld: set promoted-node-max=1", pnmax);
	if (cnmax > 1)
		add_finding(f, max, n, bad, "clone-node-max=%ld: set clone-node-max=1", cnmax);
	if (cmax > 2 || cmax == 0)
		add_finding(f, max, n, bad,
			    "clone-max=%ld: a tandem resource has two nodes; set clone-max=2", cmax);
	else if (cmax == 1)
		add_finding(f, max, n, AGENT_POLICY_OCF_SUCCESS,
			    "clone-max=1: the peer will never be started here; set clone-max=2");
	for (i = 0; i < *n; i++)
		if (f[i].rc != AGENT_POLICY_OCF_SUCCESS)
			worst = f[i].rc;
	return worst;
}

/* ---------------------------------------------------------------- notifications */

int agent_policy_notify(const char *type, const char *operation)
{
	static const char *const ops[] = {"start", "stop", "promote", "demote"};
	bool post;
	size_t i;

	if (!type || !operation)
		return -EINVAL;
	if (!strcmp(type, "post"))
		post = true;
	else if (!strcmp(type, "pre"))
		post = false;
	else
		return -EINVAL;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(operation, ops[i]))
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return -EINVAL;
	/* a start anywhere: the configuration may have changed with it, as
	 * drbd.ocf's adjust on every start notification assumes */
	if (!post)
		return i == 0 ? AGENT_POLICY_NOTIFY_ADJUST : 0;
	if (i == 0) /* the peer may have started: connect if we gave up */
		return AGENT_POLICY_NOTIFY_ADJUST | AGENT_POLICY_NOTIFY_RECONNECT |
		       AGENT_POLICY_NOTIFY_RESCORE | AGENT_POLICY_NOTIFY_OUTDATE_CHECK;
	return AGENT_POLICY_NOTIFY_RESCORE | AGENT_POLICY_NOTIFY_OUTDATE_CHECK;
}

/* Is name (len bytes) in the space-separated list? */
static bool in_list(const char *list, const char *name, size_t len)
{
	const char *p = list, *e;

	while (p && *p) {
		while (*p == ' ')
			p++;
		e = p;
		while (*e && *e != ' ')
			e++;
		if ((size_t)(e - p) == len && !strncasecmp(p, name, len))
			return true;
		p = e;
	}
	return false;
}

enum agent_policy_outdate agent_policy_outdate_self(const struct agent_policy_view *v,
						    const char *me, const char *promoted,
						    const char *stopping, const char *demoting,
						    bool at_stop, char *other, size_t otherlen)
{
	const char *p = promoted, *e = promoted;
	size_t len = 0;

	if (v->presence != AGENT_POLICY_UP || !promoted)
		return AGENT_POLICY_OUTDATE_NO;
	if (!at_stop && v->conn >= CONN_CONNECTED)
		return AGENT_POLICY_OUTDATE_NO;
	for (p = promoted; *p; p = e) {
		while (*p == ' ')
			p++;
		for (e = p; *e && *e != ' ';)
			e++;
		len = (size_t)(e - p);
		if (len == 0 || (me && strlen(me) == len && !strncasecmp(p, me, len)))
			continue; /* this node */
		if (!in_list(stopping, p, len) && !in_list(demoting, p, len))
			break;
	}
	if (!*p)
		return AGENT_POLICY_OUTDATE_NO;
	snprintf(other, otherlen, "%.*s", (int)len, p);
	if (v->role == ROLE_PRIMARY)
		return AGENT_POLICY_OUTDATE_SPLIT_BRAIN;
	return AGENT_POLICY_OUTDATE_YES;
}
