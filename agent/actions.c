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

/* A refused promote returns no sooner than this after it began, so that
 * Pacemaker's recovery cannot spin (drbd.ocf waits as long). */
#define PROMOTE_FAIL_MIN_MS 15000
/* How long demote waits for the export's clients to go away. */
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

bool action_two_primaries(const struct agent *a)
{
	const struct conf_res *cr;
	struct conf *c;
	bool two = false;

	if (agent_conf_load(a, AGENT_DEBUG, &c, &cr) == AGENT_POLICY_OCF_SUCCESS)
		two = conf_res_bool(c, cr, CONF_SECT_NET, "allow-two-primaries");
	conf_free(c);
	return two;
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

/* Wait for the connection as the wfc timeouts say (never a failure). */
static void wait_connect(struct agent *a, const struct conf *c, const struct conf_res *cr,
			 struct ctl_status *st)
{
	long secs, limit;
	bool after_sb = conf_res_bool(c, cr, CONF_SECT_STARTUP, "wait-after-sb");

	if (agent_policy_wfc(a->wfc, st->wfc_class,
			     conf_res_num(c, cr, CONF_SECT_STARTUP, "wfc-timeout"),
			     conf_res_num(c, cr, CONF_SECT_STARTUP, "degr-wfc-timeout"),
			     conf_res_num(c, cr, CONF_SECT_STARTUP, "outdated-wfc-timeout"),
			     &secs) < 0 ||
	    secs < 0 || !cr->peer)
		return;
	/* leave a second of the budget for the score */
	limit = agent_ms_left(a) - 1000;
	if (secs > 0 && secs * 1000 < limit)
		limit = secs * 1000;
	agent_log(AGENT_INFO, "waiting up to %ld s for the peer (%s timeout class)", limit / 1000,
		  st->wfc_class[0] ? st->wfc_class : "default");
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

int action_start(struct agent *a)
{
	const struct conf_res *cr;
	struct ctl_status st;
	struct ctl_reply r;
	struct conf *c;
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
	if (!ctl_daemon_alive(a) && (rc = spawn_tandemd(a)) != AGENT_POLICY_OCF_SUCCESS) {
		conf_free(c);
		return rc;
	}
	ctl_status(a, &st);
	if (st.view.presence == AGENT_POLICY_UNKNOWN_RES) {
		/* tandemd may predate the resource: let it re-read its configuration */
		agent_log(AGENT_INFO, "%s; asking tandemd to re-read its configuration", st.error);
		ctl_command(a, "adjust", false, &r);
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
			   const char *detail)
{
	bool d = detail && *detail;
	struct ctl_status st;
	long wait;

	agent_fail("promote of %s refused: %s%s%s%s; %s", a->res, agent_policy_promote_text(why),
		   d ? " (" : "", d ? detail : "", d ? ")" : "", agent_policy_promote_hint(why));
	ctl_status(a, &st);
	if (running(&st))
		publish(a, &st); /* bad data loses its score */
	ctl_status_free(&st);
	wait = PROMOTE_FAIL_MIN_MS - agent_ms_spent(a);
	if (wait > 0) {
		agent_log(AGENT_DEBUG, "waiting %ld ms before failing (no tight retry loop)", wait);
		agent_sleep_ms(a, wait);
	}
	return AGENT_POLICY_OCF_ERR_GENERIC;
}

int action_promote(struct agent *a)
{
	enum agent_policy_promote p;
	enum agent_policy_block blk;
	struct ctl_status st;
	struct ctl_reply r;
	char id[256], detail[1100];
	int rc;

	ctl_status(a, &st);
	p = agent_policy_promote_check(&st.view, action_two_primaries(a));
	if (p == AGENT_POLICY_PROMOTE_ALREADY) {
		agent_log(AGENT_INFO, "%s is already Primary", a->res);
		publish(a, &st);
		ctl_status_free(&st);
		return AGENT_POLICY_OCF_SUCCESS;
	}
	if (p == AGENT_POLICY_PROMOTE_NOT_RUNNING) {
		agent_fail("cannot promote %s: not running (%s)", a->res,
			   st.error[0] ? st.error : "down");
		ctl_status_free(&st);
		return AGENT_POLICY_OCF_ERR_GENERIC;
	}
	if (p != AGENT_POLICY_PROMOTE_OK) {
		snprintf(detail, sizeof(detail), "disk %s, peer %s, peer disk %s, %s",
			 st.view.n_vols ? state_disk_name(st.view.vols[0].disk) : "-",
			 state_role_name(st.view.peer),
			 st.view.n_vols ? state_disk_name(st.view.vols[0].pdsk) : "-",
			 state_conn_name(st.view.conn));
		ctl_status_free(&st);
		return promote_refused(a, p, detail);
	}
	ctl_status_free(&st);
	id[0] = '\0';
	blk = cluster_promote_blocker(a, id, sizeof(id));
	if (blk != AGENT_POLICY_BLOCK_NONE) {
		snprintf(detail, sizeof(detail), "%s", id);
		return promote_refused(a,
				       blk == AGENT_POLICY_BLOCK_BAN ? AGENT_POLICY_PROMOTE_BANNED
				       : blk == AGENT_POLICY_BLOCK_FENCE
					       ? AGENT_POLICY_PROMOTE_FENCE_CONSTRAINT
					       : AGENT_POLICY_PROMOTE_CONSTRAINT,
				       detail);
	}
	if (ctl_command(a, "primary", false, &r) < 0 || !r.ok) {
		ctl_status(a, &st);
		p = agent_policy_promote_refused(&st.view, r.ss);
		ctl_status_free(&st);
		snprintf(detail, sizeof(detail), "tandemd: %s%s%s", r.error, r.hint[0] ? "; " : "",
			 r.hint);
		return promote_refused(a, p, detail);
	}
	ctl_status(a, &st);
	rc = agent_policy_monitor(&st.view);
	if (rc != AGENT_POLICY_OCF_RUNNING_PROMOTED) {
		agent_fail("%s: tandemd accepted the promotion but reports %s", a->res,
			   state_role_name(st.view.role));
		ctl_status_free(&st);
		return AGENT_POLICY_OCF_ERR_GENERIC;
	}
	agent_log(AGENT_INFO, "%s is Primary; export %s", a->res, st.export_path);
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

int action_notify(struct agent *a)
{
	const char *type = meta_env("notify_type"), *op = meta_env("notify_operation");
	int what = agent_policy_notify(type, op);
	enum agent_policy_outdate od;
	struct ctl_status st;
	struct ctl_reply r;
	char other[256];
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
	if ((what & AGENT_POLICY_NOTIFY_RECONNECT) && st.view.conn == CONN_STANDALONE) {
		agent_log(AGENT_INFO, "the peer started: connecting %s", a->res);
		if (ctl_command(a, "connect", false, &r) == 0 && !r.ok)
			agent_log(AGENT_INFO, "connect: %s", r.error);
		refresh(a, &st);
	}
	rescore = what & AGENT_POLICY_NOTIFY_RESCORE;
	if ((what & AGENT_POLICY_NOTIFY_OUTDATE_CHECK) && a->stop_outdates_secondary) {
		od = agent_policy_outdate_self(&st.view, a->uname, promoted_list(),
					       meta_env("notify_stop_uname"),
					       meta_env("notify_demote_uname"), false, other,
					       sizeof(other));
		if (od == AGENT_POLICY_OUTDATE_YES) {
			/* tandemd has no online outdate: no score now, Outdated at stop */
			agent_log(AGENT_INFO, "%s is promoted on %s and this Secondary is "
					      "disconnected: no promotion score here",
				  a->res, other);
			remove_score(a, "another node is promoted (stop_outdates_secondary)");
			rescore = false;
		} else if (od == AGENT_POLICY_OUTDATE_SPLIT_BRAIN) {
			agent_log(AGENT_CRIT, "split brain: %s is Primary here and on %s, and "
					      "replication is down",
				  a->res, other);
		}
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
