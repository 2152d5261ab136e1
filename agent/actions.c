/*
 * actions: start, stop, monitor, promote, demote, notify and
 * reload-agent of ocf:tandem:tandem (doc/ocf-agent.md). Each asks
 * tandemd for the resource's state (ctl.c), lets agent-policy.c decide,
 * carries the decision out and publishes the promotion score again.
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "conf.h"
#include "ctlc.h"

/* A promote refused for a transient reason polls the state this often,
 * and asks again at the latest after PROMOTE_RETRY_MS. */
#define PROMOTE_POLL_MS  100
#define PROMOTE_RETRY_MS 1000
/* How long demote waits for the export's clients to go away. */
/* A promote that tandem-arbiterd keeps vetoing logs its reason this often. */
#define VETO_LOG_MS 10000
#define DEMOTE_CLIENT_WAIT_MS 5000
#define POLL_MS 200

static const char *meta_env(const char *name)
{
	char key[128];
	const char *v;

	snprintf(key, sizeof(key), "OCF_RESKEY_CRM_meta_%s", name);
	v = getenv(key);
	return v && *v ? v : NULL;
}

static void publish(const struct agent *a, const struct ctl_status *st)
{
	struct agent_policy_score s =
		agent_policy_score(&st->view, &a->scores, a->remove_if_peer_primary);

	cluster_publish_score(a, &s);
}

static void remove_score(const struct agent *a, const char *why)
{
	struct agent_policy_score s = {AGENT_POLICY_SCORE_DELETE, 0, why};

	cluster_publish_score(a, &s);
}

/* The state again, after a change. */
static void refresh(const struct agent *a, struct ctl_status *st)
{
	ctl_status_free(st);
	ctl_status(a, st);
}

static bool running(const struct ctl_status *st)
{
	return st->view.presence == AGENT_POLICY_UP;
}

/* Both disks of every volume UpToDate, connected. */
static bool all_uptodate(const struct agent_policy_view *v)
{
	unsigned int i;

	if (v->conn < CONN_CONNECTED || !agent_policy_all_disks(v, DISK_UPTODATE))
		return false;
	for (i = 0; i < v->n_vols; i++)
		if (v->vols[i].pdsk != DISK_UPTODATE)
			return false;
	return true;
}

struct res_facts res_facts(const struct agent *a)
{
	struct res_facts f = {0};
	const struct conf_res *cr;
	struct conf *c;
	const char *fencing;

	if (agent_conf_load(a, AGENT_DEBUG, &c, &cr) == AGENT_POLICY_OCF_SUCCESS) {
		f.two_primaries = conf_res_bool(c, cr, CONF_SECT_NET, "allow-two-primaries");
		fencing = conf_res_text(c, cr, CONF_SECT_DISK, "fencing");
		f.fencing = fencing && strcmp(fencing, "dont-care");
		f.fence_handler = f.fencing && conf_res_text(c, cr, CONF_SECT_HANDLERS, "fence-peer");
	}
	conf_free(c);
	return f;
}

/* ---------------------------------------------------------------- monitor */

int action_monitor(struct agent *a)
{
	struct ctl_status st;
	int rc;

	ctl_status(a, &st);
	rc = agent_policy_monitor(&st.view);
	switch (st.view.presence) {
	case AGENT_POLICY_BAD_ANSWER:
		agent_fail("cannot read the state of %s: %s", a->res, st.error);
		break;
	case AGENT_POLICY_UNKNOWN_RES:
		agent_log(AGENT_INFO, "not running: %s", st.error);
		break;
	default:
		break;
	}
	if (rc == AGENT_POLICY_OCF_NOT_RUNNING && !a->probe)
		remove_score(a, "not running");
	else if (rc != AGENT_POLICY_OCF_NOT_RUNNING && rc != AGENT_POLICY_OCF_ERR_GENERIC)
		publish(a, &st); /* probes too: scores survive a cluster restart */
	if (rc == AGENT_POLICY_OCF_FAILED_PROMOTED)
		agent_fail("%s is Primary without access to UpToDate data (disk %s, peer disk %s)",
			   a->res, st.view.n_vols ? state_disk_name(st.view.vols[0].disk) : "-",
			   st.view.n_vols ? state_disk_name(st.view.vols[0].pdsk) : "-");
	if (rc == AGENT_POLICY_OCF_RUNNING_PROMOTED && a->unfence && all_uptodate(&st.view))
		cluster_unfence(a);
	ctl_status_free(&st);
	return rc;
}

/* ---------------------------------------------------------------- start */

/*
 * Wait for the connection as the wfc timeouts say (never a failure). The
 * timeout class is tandem-arbiterd's when it answers (doc/arbiter.md
 * §6.2), else tandemd's from the metadata flags; asked only when
 * wfc_timeout is "config" (a number applies to every class).
 */
static void wait_connect(struct agent *a, const struct conf *c, const struct conf_res *cr,
			 struct ctl_status *st)
{
	const char *cls = st->wfc_class[0] ? st->wfc_class : "default";
	const char *src = "the metadata flags";
	bool after_sb = conf_res_bool(c, cr, CONF_SECT_STARTUP, "wait-after-sb");
	char why[512] = "";
	long secs, limit;

	if (!cr->peer)
		return;
	if (!a->wfc || !strcmp(a->wfc, "config")) {
		const char *arb = ctl_arbiter_wfc(a, why, sizeof(why));

		if (arb) {
			cls = arb;
			src = "tandem-arbiterd";
		}
	} else {
		src = "wfc_timeout";
	}
	if (agent_policy_wfc(a->wfc, cls, conf_res_num(c, cr, CONF_SECT_STARTUP, "wfc-timeout"),
			     conf_res_num(c, cr, CONF_SECT_STARTUP, "degr-wfc-timeout"),
			     conf_res_num(c, cr, CONF_SECT_STARTUP, "outdated-wfc-timeout"),
			     &secs) < 0 ||
	    secs < 0)
		return;
	/* leave a second of the budget for the score */
	limit = agent_ms_left(a) - 1000;
	if (secs > 0 && secs * 1000 < limit)
		limit = secs * 1000;
	if (!strcmp(src, "wfc_timeout"))
		agent_log(AGENT_INFO, "waiting up to %ld s for the peer (wfc_timeout=%s)",
			  limit / 1000, a->wfc);
	else
		agent_log(AGENT_INFO,
			  "waiting up to %ld s for the peer (%s timeout class, from %s%s%s)",
			  limit / 1000, cls, src, why[0] ? ": " : "", why);
	limit += agent_ms_spent(a);
	while (running(st) && st->view.conn < CONN_CONNECTED) {
		if (st->view.conn == CONN_STANDALONE && !after_sb) {
			agent_log(AGENT_WARN, "%s is StandAlone (refused by the peer, split brain?): "
					      "not waiting; see tandemd's log",
				  a->res);
			return;
		}
		if (agent_ms_spent(a) >= limit) {
			agent_log(AGENT_INFO, "the peer did not connect in time (still %s): started "
					      "without it",
				  state_conn_name(st->view.conn));
			return;
		}
		agent_sleep_ms(a, POLL_MS);
		refresh(a, st);
	}
	if (running(st))
		agent_log(AGENT_INFO, "connected to the peer: %s", state_conn_name(st->view.conn));
}

/* tandemd re-reads the configuration, so that what runs matches the file
 * (drbd.ocf's start and notify run `drbdadm adjust` for the same reason). */
static int adjust(const struct agent *a)
{
	struct ctl_reply r;

	if (ctl_command(a, "adjust", false, &r) < 0 || !r.ok) {
		agent_fail("tandemd cannot apply %s: %s%s%s (is tandemd running with another "
			   "configuration file?)",
			   a->config, r.error, r.hint[0] ? "; " : "", r.hint);
		return r.exit == 10 ? AGENT_POLICY_OCF_ERR_CONFIGURED : AGENT_POLICY_OCF_ERR_GENERIC;
	}
	agent_log(AGENT_DEBUG, "tandemd re-read %s", a->config);
	return AGENT_POLICY_OCF_SUCCESS;
}

int action_start(struct agent *a)
{
	const struct conf_res *cr;
	struct ctl_status st = {0};
	struct ctl_reply r;
	struct conf *c;
	bool spawned = false;
	int rc;

	rc = agent_conf_load(a, AGENT_ERR, &c, &cr);
	if (rc != AGENT_POLICY_OCF_SUCCESS) {
		agent_fail("cannot start %s: %s (see above)", a->res,
			   rc == AGENT_POLICY_OCF_ERR_INSTALLED
				   ? "the configuration is missing here or has no section for this node"
				   : "the configuration is invalid");
		conf_free(c);
		return rc;
	}
	if (!ctl_daemon_alive(a)) {
		if ((rc = spawn_tandemd(a)) != AGENT_POLICY_OCF_SUCCESS) {
			conf_free(c);
			return rc;
		}
		spawned = true;
	}
	/* a tandemd that ran before may hold an older configuration */
	if (!spawned && (rc = adjust(a)) != AGENT_POLICY_OCF_SUCCESS)
		goto out;
	ctl_status(a, &st);
	if (running(&st) && st.config_pending && st.view.role == ROLE_SECONDARY &&
	    !agent_policy_clients(&st.view)) {
		/* up with volumes the file no longer has: down, re-read, up */
		agent_log(AGENT_INFO, "%s is up with volumes that changed in %s: taking it down to "
				      "apply them",
			  a->res, a->config);
		if (ctl_command(a, "down", false, &r) < 0 || !r.ok || adjust(a)) {
			agent_fail("cannot apply the changed volumes of %s: %s", a->res, r.error);
			rc = AGENT_POLICY_OCF_ERR_GENERIC;
			goto out;
		}
		refresh(a, &st);
	}
	rc = AGENT_POLICY_OCF_ERR_GENERIC;
	switch (st.view.presence) {
	case AGENT_POLICY_UNKNOWN_RES:
		agent_fail("the running tandemd does not have %s (%s): is it running with another "
			   "configuration than %s?",
			   a->res, st.error, a->config);
		rc = AGENT_POLICY_OCF_ERR_INSTALLED;
		goto out;
	case AGENT_POLICY_NO_DAEMON:
	case AGENT_POLICY_BAD_ANSWER:
		agent_fail("cannot start %s: %s", a->res, st.error);
		goto out;
	case AGENT_POLICY_DOWN:
		if (ctl_command(a, "up", false, &r) < 0 || !r.ok) {
			agent_fail("cannot bring %s up: %s%s%s", a->res, r.error, r.hint[0] ? "; " : "",
				   r.hint);
			goto out;
		}
		refresh(a, &st);
		break;
	case AGENT_POLICY_UP:
		agent_log(AGENT_INFO, "%s is already up", a->res);
		if (st.config_pending)
			agent_log(AGENT_WARN, "%s keeps the volumes it has: their change in %s applies "
					      "at the next stop and start",
				  a->res, a->config);
		break;
	}
	if (!running(&st)) {
		agent_fail("%s is not up after 'up': %s", a->res, st.error);
		goto out;
	}
	if (st.view.role == ROLE_PRIMARY) {
		/* a successful start leaves the instance unpromoted */
		agent_log(AGENT_WARN, "%s is Primary at start: demoting", a->res);
		if (ctl_command(a, "secondary", false, &r) < 0 || !r.ok) {
			agent_fail("%s is Primary and cannot be demoted: %s%s%s", a->res, r.error,
				   r.hint[0] ? "; " : "", r.hint);
			goto out;
		}
		refresh(a, &st);
	}
	if (running(&st) && st.view.conn == CONN_STANDALONE && cr->peer && cr->peer->addr.ip) {
		if (ctl_command(a, "connect", false, &r) == 0 && !r.ok)
			agent_log(AGENT_INFO, "connect: %s", r.error);
		refresh(a, &st);
	}
	wait_connect(a, c, cr, &st);
	if (!running(&st)) {
		agent_fail("%s went down while starting: %s", a->res, st.error);
		goto out;
	}
	publish(a, &st);
	rc = AGENT_POLICY_OCF_SUCCESS;
out:
	ctl_status_free(&st);
	conf_free(c);
	return rc;
}

/* ---------------------------------------------------------------- stop */

/* tandemadm outdate, on the metadata of the resource that is down. */
static void outdate_self(const struct agent *a)
{
	char adm[4096], *dir, *argv[8];
	int n = 0, rc;

	snprintf(adm, sizeof(adm), "%s", a->tandemd);
	dir = dirname(adm);
	memmove(adm, dir, strlen(dir) + 1);
	strncat(adm, "/tandemadm", sizeof(adm) - strlen(adm) - 1);
	argv[n++] = adm;
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)a->config;
	if (a->node) {
		argv[n++] = (char *)"--node";
		argv[n++] = (char *)a->node;
	}
	argv[n++] = (char *)"outdate";
	argv[n++] = (char *)a->res;
	argv[n] = NULL;
	rc = spawn_run(argv, NULL, agent_ms_left(a) > 2000 ? agent_ms_left(a) : 2000, AGENT_WARN,
		       NULL);
	if (rc == 0)
		agent_log(AGENT_INFO, "%s: the local data is now Outdated", a->res);
	else
		agent_log(AGENT_WARN, "%s: tandemadm outdate failed (%s %d)", a->res,
			  rc < 0 ? "error" : "exit", rc);
}

static const char *promoted_list(void)
{
	return meta_env("notify_promoted_uname") ? meta_env("notify_promoted_uname")
						 : meta_env("notify_master_uname");
}

int action_stop(struct agent *a)
{
	enum agent_policy_outdate od = AGENT_POLICY_OUTDATE_NO;
	struct ctl_status st;
	struct ctl_reply r;
	char other[256];
	bool force = false;
	int rc = AGENT_POLICY_OCF_SUCCESS;

	ctl_status(a, &st);
	if (st.view.presence == AGENT_POLICY_NO_DAEMON || st.view.presence == AGENT_POLICY_DOWN ||
	    st.view.presence == AGENT_POLICY_UNKNOWN_RES) {
		agent_log(AGENT_INFO, "%s is not running: %s", a->res,
			  st.error[0] ? st.error : "down");
		goto done;
	}
	if (a->stop_outdates_secondary)
		od = agent_policy_outdate_self(&st.view, a->uname, promoted_list(),
					       meta_env("notify_stop_uname"),
					       meta_env("notify_demote_uname"), true, other,
					       sizeof(other));
	if (running(&st) && st.view.role == ROLE_PRIMARY && agent_policy_clients(&st.view)) {
		/* the users of the export should be stopping: give them half the time */
		long until = agent_ms_spent(a) + agent_ms_left(a) / 2;

		while (agent_policy_clients(&st.view) && agent_ms_spent(a) < until) {
			agent_sleep_ms(a, POLL_MS);
			refresh(a, &st);
		}
		if (running(&st) && agent_policy_clients(&st.view)) {
			agent_log(AGENT_WARN, "%s: %u NBD client(s) still connected to %s: "
					      "disconnecting them to stop",
				  a->res, agent_policy_clients(&st.view), st.export_path);
			force = true;
		}
	}
	if (ctl_command(a, "down", force, &r) < 0 || !r.ok) {
		if (r.ss == SS_DEVICE_IN_USE && !force &&
		    ctl_command(a, "down", true, &r) == 0 && r.ok) {
			agent_log(AGENT_WARN, "%s: stopped with clients still connected", a->res);
		} else {
			agent_fail("cannot take %s down: %s%s%s", a->res, r.error,
				   r.hint[0] ? "; " : "", r.hint);
			rc = AGENT_POLICY_OCF_ERR_GENERIC;
			goto done;
		}
	}
	agent_log(AGENT_INFO, "%s is down", a->res);
	if (od == AGENT_POLICY_OUTDATE_YES) {
		agent_log(AGENT_INFO, "stop_outdates_secondary: %s is promoted on %s", a->res,
			  other);
		outdate_self(a);
	} else if (od == AGENT_POLICY_OUTDATE_SPLIT_BRAIN) {
		agent_log(AGENT_CRIT, "%s was Primary here while Pacemaker has it promoted on %s",
			  a->res, other);
	}
done:
	remove_score(a, "stopped");
	ctl_status_free(&st);
	return rc;
}

/* ---------------------------------------------------------------- promote */

static int promote_refused(const struct agent *a, enum agent_policy_promote why,
			   const char *detail, unsigned int attempts)
{
	bool d = detail && *detail;
	struct ctl_status st;

	agent_fail("promote of %s refused%s: %s%s%s%s; %s", a->res,
		   attempts > 1 ? " after every retry" : "", agent_policy_promote_text(why),
		   d ? " (" : "", d ? detail : "", d ? ")" : "", agent_policy_promote_hint(why));
	ctl_status(a, &st);
	if (running(&st))
		publish(a, &st); /* bad data loses its score */
	ctl_status_free(&st);
	return AGENT_POLICY_OCF_ERR_GENERIC;
}

static void state_detail(const struct ctl_status *st, char *buf, size_t len)
{
	snprintf(buf, len, "disk %s, peer %s, peer disk %s, %s%s",
		 st->view.n_vols ? state_disk_name(st->view.vols[0].disk) : "-",
		 state_role_name(st->view.peer),
		 st->view.n_vols ? state_disk_name(st->view.vols[0].pdsk) : "-",
		 state_conn_name(st->view.conn), st->view.fence_running ? ", fence-peer running" : "");
}

/* What a retry waits for: one of these changed. */
static bool same_facts(const struct agent_policy_view *x, const struct agent_policy_view *y)
{
	unsigned int i;

	if (x->role != y->role || x->peer != y->peer || x->conn != y->conn ||
	    x->fence_running != y->fence_running || x->n_vols != y->n_vols)
		return false;
	for (i = 0; i < x->n_vols; i++)
		if (x->vols[i].disk != y->vols[i].disk || x->vols[i].pdsk != y->vols[i].pdsk)
			return false;
	return true;
}

static bool told_no_veto;

/* One try: 1 promoted, 0 refused (*p, detail say why), or an OCF code < 0. */
static int promote_once(struct agent *a, const struct res_facts *rf, struct ctl_status *st,
			enum agent_policy_promote *p, char *detail, size_t dlen)
{
	enum agent_policy_block blk;
	struct ctl_reply r;
	char id[256] = "";

	*p = agent_policy_promote_check(&st->view, rf->two_primaries);
	if (*p == AGENT_POLICY_PROMOTE_ALREADY)
		return 1;
	if (*p != AGENT_POLICY_PROMOTE_OK) {
		state_detail(st, detail, dlen);
		return 0;
	}
	/* tandem-arbiterd's veto (doc/arbiter.md §6.4); without an answer
	 * there is none, as without an arbiter (said once per promote) */
	switch (ctl_arbiter_may_promote(a, detail, dlen)) {
	case ARBC_PROMOTE_REFUSE:
		*p = AGENT_POLICY_PROMOTE_VETO;
		return 0;
	case ARBC_PROMOTE_NO_VETO:
		if (!told_no_veto)
			agent_log(AGENT_INFO, "no promotion veto: %s (%s/" CTLC_ARBITER_SOCK_NAME ")",
				  detail, a->run_dir);
		told_no_veto = true;
		break;
	case ARBC_PROMOTE_ALLOW:
		break;
	}
	detail[0] = 0;
	blk = cluster_promote_blocker(a, id, sizeof(id));
	if (blk != AGENT_POLICY_BLOCK_NONE) {
		*p = blk == AGENT_POLICY_BLOCK_BAN     ? AGENT_POLICY_PROMOTE_BANNED
		     : blk == AGENT_POLICY_BLOCK_FENCE ? AGENT_POLICY_PROMOTE_FENCE_CONSTRAINT
						       : AGENT_POLICY_PROMOTE_CONSTRAINT;
		snprintf(detail, dlen, "%s", id);
		return 0;
	}
	if (ctl_command(a, "primary", false, &r) == 0 && r.ok)
		return 1;
	refresh(a, st);
	st->view.fence_handler = rf->fence_handler;
	*p = agent_policy_promote_refused(&st->view, r.ss);
	snprintf(detail, dlen, "tandemd: %s%s%s", r.error, r.hint[0] ? "; " : "", r.hint);
	return 0;
}

/*
 * Promote asks tandemd for `primary` until it succeeds, the refusal is
 * not transient (agent_policy_promote_transient()), or the timeout runs
 * out, as drbd.ocf loops on `drbdadm primary`. Between tries it polls
 * the state every PROMOTE_POLL_MS and tries again as soon as it changed
 * (fence-peer's verdict, the peer seen gone), at the latest after
 * PROMOTE_RETRY_MS.
 */
int action_promote(struct agent *a)
{
	struct res_facts rf = res_facts(a);
	enum agent_policy_promote p;
	struct ctl_status st, now;
	unsigned int attempt = 0;
	char detail[1100], last_veto[1100] = "";
	const char *why;
	long tried, veto_logged = 0;
	int rc;

	ctl_status(a, &st);
	for (;;) {
		st.view.fence_handler = rf.fence_handler;
		if (st.view.presence != AGENT_POLICY_UP) {
			agent_fail("cannot promote %s: not running (%s)", a->res,
				   st.error[0] ? st.error : "down");
			ctl_status_free(&st);
			return AGENT_POLICY_OCF_ERR_GENERIC;
		}
		attempt++;
		rc = promote_once(a, &rf, &st, &p, detail, sizeof(detail));
		if (rc > 0)
			break;
		why = agent_policy_promote_transient(p, &st.view, a->fail_promote_early);
		if (!why || agent_ms_left(a) < 2 * PROMOTE_POLL_MS) {
			ctl_status_free(&st);
			return promote_refused(a, p, detail, attempt);
		}
		/* a veto lasts while the peer's node is unknown: its line is
		 * logged when its reason changes, and every VETO_LOG_MS */
		if (p != AGENT_POLICY_PROMOTE_VETO || strcmp(detail, last_veto) ||
		    agent_ms_spent(a) - veto_logged >= VETO_LOG_MS) {
			agent_log(AGENT_INFO,
				  "promote of %s: try %u refused: %s (%s); retrying while %s", a->res,
				  attempt, agent_policy_promote_text(p), detail, why);
			if (p == AGENT_POLICY_PROMOTE_VETO) {
				snprintf(last_veto, sizeof(last_veto), "%s", detail);
				veto_logged = agent_ms_spent(a);
			}
		}
		tried = agent_ms_spent(a);
		for (;;) {
			agent_sleep_ms(a, PROMOTE_POLL_MS);
			ctl_status(a, &now);
			if (!same_facts(&now.view, &st.view) ||
			    agent_ms_spent(a) - tried >= PROMOTE_RETRY_MS ||
			    agent_ms_left(a) < 2 * PROMOTE_POLL_MS)
				break;
			ctl_status_free(&now);
		}
		ctl_status_free(&st);
		st = now;
		st.view.vols = st.vols;
	}
	refresh(a, &st);
	rc = agent_policy_monitor(&st.view);
	if (rc != AGENT_POLICY_OCF_RUNNING_PROMOTED) {
		agent_fail("%s: tandemd accepted the promotion but reports %s", a->res,
			   state_role_name(st.view.role));
		ctl_status_free(&st);
		return AGENT_POLICY_OCF_ERR_GENERIC;
	}
	if (p == AGENT_POLICY_PROMOTE_ALREADY && attempt == 1)
		agent_log(AGENT_INFO, "%s is already Primary", a->res);
	else
		agent_log(AGENT_INFO, "%s is Primary after %u tr%s in %ld ms; export %s", a->res,
			  attempt, attempt == 1 ? "y" : "ies", agent_ms_spent(a), st.export_path);
	publish(a, &st);
	ctl_status_free(&st);
	return AGENT_POLICY_OCF_SUCCESS;
}

/* ---------------------------------------------------------------- demote */

static int demote_in_use(const struct agent *a, unsigned int clients, const char *export_path,
			 const char *why)
{
	agent_fail("demote of %s refused: the export %s is in use (%u NBD client%s connected)%s%s; "
		   "stop what uses it first (a Filesystem ordered after the promotion?)",
		   a->res, export_path[0] ? export_path : "-", clients, clients == 1 ? "" : "s",
		   why ? ": " : "", why ? why : "");
	return AGENT_POLICY_OCF_ERR_GENERIC;
}

int action_demote(struct agent *a)
{
	struct ctl_status st;
	struct ctl_reply r;
	long until;
	int rc = AGENT_POLICY_OCF_SUCCESS;

	ctl_status(a, &st);
	if (!running(&st)) {
		agent_fail("cannot demote %s: not running (%s)", a->res,
			   st.error[0] ? st.error : "down");
		rc = st.view.presence == AGENT_POLICY_BAD_ANSWER ? AGENT_POLICY_OCF_ERR_GENERIC
								 : AGENT_POLICY_OCF_NOT_RUNNING;
		goto out;
	}
	if (st.view.role != ROLE_PRIMARY) {
		agent_log(AGENT_INFO, "%s is already Secondary", a->res);
		goto score;
	}
	until = agent_ms_spent(a) + (agent_ms_left(a) / 2 < DEMOTE_CLIENT_WAIT_MS
					     ? agent_ms_left(a) / 2
					     : DEMOTE_CLIENT_WAIT_MS);
	while (agent_policy_clients(&st.view) && agent_ms_spent(a) < until) {
		agent_sleep_ms(a, POLL_MS);
		refresh(a, &st);
	}
	if (agent_policy_clients(&st.view)) {
		rc = demote_in_use(a, agent_policy_clients(&st.view), st.export_path, NULL);
		goto out;
	}
	if (ctl_command(a, "secondary", false, &r) < 0 || !r.ok) {
		if (r.ss == SS_DEVICE_IN_USE)
			rc = demote_in_use(a, agent_policy_clients(&st.view), st.export_path, r.hint);
		else {
			agent_fail("cannot demote %s: %s%s%s", a->res, r.error, r.hint[0] ? "; " : "",
				   r.hint);
			rc = AGENT_POLICY_OCF_ERR_GENERIC;
		}
		goto out;
	}
	agent_log(AGENT_INFO, "%s is Secondary", a->res);
	refresh(a, &st);
score:
	if (running(&st))
		publish(a, &st);
out:
	ctl_status_free(&st);
	return rc;
}

/* ---------------------------------------------------------------- notify */

/*
 * The nodes promoted once this transition is done: those promoted before
 * it and those it promotes (agent_policy_outdate_self() takes out the
 * ones that stop or demote).
 */
static void promoted_after(char *buf, size_t len)
{
	const char *before = promoted_list(), *promote = meta_env("notify_promote_uname");

	snprintf(buf, len, "%s %s", before ? before : "", promote ? promote : "");
}

/* A disconnected Secondary while another node is promoted: outdate the
 * local data (online, tandemd's `outdate`) after any post notification
 * with stop_outdates_secondary, as drbd.ocf's notify does, and after a
 * post-promote or post-demote when fencing is configured; no score then.
 * A Primary that finds another Primary logs the split brain. */
static bool notify_outdate(const struct agent *a, const struct res_facts *rf,
			   const struct ctl_status *st, const char *op)
{
	bool role_op = !strcmp(op, "promote") || !strcmp(op, "demote");
	enum agent_policy_outdate od;
	struct ctl_reply r;
	char other[256], promoted[1024];

	if (!a->stop_outdates_secondary && !(rf->fencing && role_op))
		return false;
	promoted_after(promoted, sizeof(promoted));
	od = agent_policy_outdate_self(&st->view, a->uname, promoted, meta_env("notify_stop_uname"),
				       meta_env("notify_demote_uname"), false, other, sizeof(other));
	if (od == AGENT_POLICY_OUTDATE_SPLIT_BRAIN) {
		agent_log(AGENT_CRIT, "split brain: %s is Primary here and on %s, and replication "
				      "is down",
			  a->res, other);
		return false;
	}
	if (od != AGENT_POLICY_OUTDATE_YES)
		return false;
	if (ctl_command(a, "outdate", false, &r) == 0 && r.ok)
		agent_log(AGENT_INFO, "%s is promoted on %s and this Secondary is disconnected: "
				      "the local data is now Outdated (%s)",
			  a->res, other,
			  a->stop_outdates_secondary ? "stop_outdates_secondary" : "fencing");
	else
		agent_log(AGENT_WARN, "%s is promoted on %s and this Secondary is disconnected, "
				      "but tandemd did not outdate it: %s%s%s",
			  a->res, other, r.error, r.hint[0] ? "; " : "", r.hint);
	remove_score(a, "another node is promoted and this one is disconnected");
	return true;
}

int action_notify(struct agent *a)
{
	const char *type = meta_env("notify_type"), *op = meta_env("notify_operation");
	int what = agent_policy_notify(type, op);
	struct res_facts rf;
	struct ctl_status st;
	struct ctl_reply r;
	bool rescore;

	if (what < 0) {
		agent_log(AGENT_DEBUG, "notify without usable notify_type/notify_operation (%s-%s)",
			  type ? type : "-", op ? op : "-");
		return AGENT_POLICY_OCF_SUCCESS;
	}
	agent_log(AGENT_DEBUG, "notify %s-%s", type, op);
	if (!what)
		return AGENT_POLICY_OCF_SUCCESS;
	ctl_status(a, &st);
	if (!running(&st))
		goto out;
	if (what & AGENT_POLICY_NOTIFY_ADJUST) {
		/* a failure is logged; notify itself never fails */
		if (adjust(a) == AGENT_POLICY_OCF_SUCCESS)
			agent_log(AGENT_INFO, "%s-start: tandemd re-read %s", type, a->config);
		refresh(a, &st);
	}
	if ((what & AGENT_POLICY_NOTIFY_RECONNECT) && running(&st) &&
	    st.view.conn == CONN_STANDALONE) {
		agent_log(AGENT_INFO, "the peer started: connecting %s", a->res);
		if (ctl_command(a, "connect", false, &r) == 0 && !r.ok)
			agent_log(AGENT_INFO, "connect: %s", r.error);
		refresh(a, &st);
	}
	rescore = what & AGENT_POLICY_NOTIFY_RESCORE;
	if ((what & AGENT_POLICY_NOTIFY_OUTDATE_CHECK) && running(&st)) {
		rf = res_facts(a);
		if (notify_outdate(a, &rf, &st, op))
			rescore = false;
	}
	if (rescore && running(&st))
		publish(a, &st);
out:
	ctl_status_free(&st);
	return AGENT_POLICY_OCF_SUCCESS;
}

/* ---------------------------------------------------------------- reload-agent */

/* The reloadable parameters are the agent's own (scores, waits, flags):
 * main.c has read them again; the score follows at once. */
int action_reload_agent(struct agent *a)
{
	struct ctl_status st;

	ctl_status(a, &st);
	if (running(&st))
		publish(a, &st);
	agent_log(AGENT_INFO, "parameters reloaded (promotion_scores %d %d %d %d)",
		  a->scores.only_consistent, a->scores.only_remote, a->scores.local_ok,
		  a->scores.best);
	ctl_status_free(&st);
	return AGENT_POLICY_OCF_SUCCESS;
}
