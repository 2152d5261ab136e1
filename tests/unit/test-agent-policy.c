/* Unit tests for agent-policy, the OCF agent's decisions: one table per
 * decision (scores, monitor results, promotion refusals, constraints,
 * clone meta attributes, notifications, self-outdating, start waits,
 * parameter parsing), each row a situation and the expected answer. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent-policy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A resource of up to two volumes, written compactly in the tables. */
struct fact {
	enum agent_policy_presence presence;
	enum state_role role, peer;
	enum state_conn conn;
	unsigned int n_vols;
	enum state_disk disk[2], pdsk[2];
	unsigned int clients;
};

struct view_buf {
	struct agent_policy_vol vols[2];
	struct agent_policy_view v;
};

static const struct agent_policy_view *view_of(const struct fact *f, struct view_buf *b)
{
	unsigned int i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < f->n_vols; i++) {
		b->vols[i].disk = f->disk[i];
		b->vols[i].pdsk = f->pdsk[i];
		b->vols[i].clients = i == 0 ? f->clients : 0;
	}
	b->v.presence = f->presence;
	b->v.role = f->role;
	b->v.peer = f->peer;
	b->v.conn = f->conn;
	b->v.vols = b->vols;
	b->v.n_vols = f->n_vols;
	return &b->v;
}

#define UP AGENT_POLICY_UP
#define PRI ROLE_PRIMARY
#define SEC ROLE_SECONDARY
#define UNK ROLE_UNKNOWN
#define UTD DISK_UPTODATE
#define OUT DISK_OUTDATED
#define INC DISK_INCONSISTENT
#define CON DISK_CONSISTENT
#define DUN DISK_DUNKNOWN
#define DSK DISK_DISKLESS
#define ATT DISK_ATTACHING
/* one volume / two volumes */
#define V1(p, r, pr, c, d, pd) {p, r, pr, c, 1, {d, 0}, {pd, 0}, 0}
#define V2(p, r, pr, c, d0, d1, pd0, pd1) {p, r, pr, c, 2, {d0, d1}, {pd0, pd1}, 0}

/* ---------------------------------------------------------------- scores */

static const struct agent_policy_scores drbd_scores = {0, 10, 1000, 10000};
static const struct agent_policy_scores custom_scores = {5, 10, 1000, 10000};

struct score_row {
	const char *what;
	struct fact f;
	const struct agent_policy_scores *s;
	bool remove_if_peer_primary;
	enum agent_policy_score_op op;
	int value;
};

static const struct score_row score_rows[] = {
	{"Primary UpToDate", V1(UP, PRI, UNK, CONN_WFCONNECTION, UTD, DUN), &drbd_scores, false,
	 AGENT_POLICY_SCORE_SET, 10000},
	{"Secondary UpToDate, peer known", V1(UP, SEC, SEC, CONN_CONNECTED, UTD, UTD), &drbd_scores,
	 false, AGENT_POLICY_SCORE_SET, 10000},
	{"Secondary UpToDate, peer Outdated (known)", V1(UP, SEC, UNK, CONN_STANDALONE, UTD, OUT),
	 &drbd_scores, false, AGENT_POLICY_SCORE_SET, 10000},
	{"Secondary UpToDate, peer unknown", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN),
	 &drbd_scores, false, AGENT_POLICY_SCORE_SET, 1000},
	{"SyncSource", V1(UP, SEC, SEC, CONN_SYNCSOURCE, UTD, INC), &drbd_scores, false,
	 AGENT_POLICY_SCORE_SET, 10000},
	{"SyncTarget: only the peer UpToDate", V1(UP, SEC, SEC, CONN_SYNCTARGET, INC, UTD),
	 &drbd_scores, false, AGENT_POLICY_SCORE_SET, 10},
	{"diskless with an UpToDate peer", V1(UP, SEC, SEC, CONN_CONNECTED, DSK, UTD), &drbd_scores,
	 false, AGENT_POLICY_SCORE_SET, 10},
	{"Consistent only: 0 means deleted", V1(UP, SEC, UNK, CONN_WFCONNECTION, CON, DUN),
	 &drbd_scores, false, AGENT_POLICY_SCORE_DELETE, 0},
	{"Consistent only, custom 5", V1(UP, SEC, UNK, CONN_WFCONNECTION, CON, DUN), &custom_scores,
	 false, AGENT_POLICY_SCORE_SET, 5},
	{"Outdated", V1(UP, SEC, UNK, CONN_WFCONNECTION, OUT, DUN), &custom_scores, false,
	 AGENT_POLICY_SCORE_DELETE, 0},
	{"Inconsistent alone", V1(UP, SEC, UNK, CONN_WFCONNECTION, INC, DUN), &drbd_scores, false,
	 AGENT_POLICY_SCORE_DELETE, 0},
	{"both Inconsistent", V1(UP, SEC, SEC, CONN_CONNECTED, INC, INC), &drbd_scores, false,
	 AGENT_POLICY_SCORE_DELETE, 0},
	{"attaching: keep", V1(UP, SEC, UNK, CONN_STANDALONE, ATT, DUN), &drbd_scores, false,
	 AGENT_POLICY_SCORE_KEEP, 0},
	{"negotiating: keep", V1(UP, SEC, UNK, CONN_STANDALONE, DISK_NEGOTIATING, DUN),
	 &drbd_scores, false, AGENT_POLICY_SCORE_KEEP, 0},
	{"down", V1(AGENT_POLICY_DOWN, SEC, UNK, CONN_STANDALONE, DSK, DUN), &drbd_scores, false,
	 AGENT_POLICY_SCORE_DELETE, 0},
	{"no daemon", V1(AGENT_POLICY_NO_DAEMON, UNK, UNK, CONN_STANDALONE, DSK, DUN), &drbd_scores,
	 false, AGENT_POLICY_SCORE_DELETE, 0},
	{"peer Primary, option off", V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), &drbd_scores, false,
	 AGENT_POLICY_SCORE_SET, 10000},
	{"peer Primary, option on", V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), &drbd_scores, true,
	 AGENT_POLICY_SCORE_DELETE, 0},
	{"peer Primary but not UpToDate, option on: normal", V1(UP, SEC, PRI, CONN_SYNCSOURCE, UTD, INC),
	 &drbd_scores, true, AGENT_POLICY_SCORE_SET, 10000},
	{"both Primary, option on: ours counts", V1(UP, PRI, PRI, CONN_CONNECTED, UTD, UTD),
	 &drbd_scores, true, AGENT_POLICY_SCORE_SET, 10000},
	{"two volumes UpToDate", V2(UP, SEC, SEC, CONN_CONNECTED, UTD, UTD, UTD, UTD), &drbd_scores,
	 false, AGENT_POLICY_SCORE_SET, 10000},
	{"two volumes, one Inconsistent, peer UpToDate",
	 V2(UP, SEC, SEC, CONN_SYNCTARGET, UTD, INC, UTD, UTD), &drbd_scores, false,
	 AGENT_POLICY_SCORE_SET, 10},
	{"two volumes, one Outdated, peer unknown", V2(UP, SEC, UNK, CONN_WFCONNECTION, UTD, OUT, DUN, DUN),
	 &drbd_scores, false, AGENT_POLICY_SCORE_DELETE, 0},
	{"two volumes UpToDate + Consistent", V2(UP, SEC, UNK, CONN_WFCONNECTION, UTD, CON, DUN, DUN),
	 &custom_scores, false, AGENT_POLICY_SCORE_SET, 5},
	{"no volumes", {UP, SEC, UNK, CONN_STANDALONE, 0, {0, 0}, {0, 0}, 0}, &drbd_scores, false,
	 AGENT_POLICY_SCORE_DELETE, 0},
};

static void test_scores(void **state)
{
	struct view_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < N(score_rows); i++) {
		const struct score_row *r = &score_rows[i];
		struct agent_policy_score s =
			agent_policy_score(view_of(&r->f, &b), r->s, r->remove_if_peer_primary);

		if (s.op != r->op || (s.op == AGENT_POLICY_SCORE_SET && s.value != r->value))
			fail_msg("%s: op %d value %d (%s), expected op %d value %d", r->what, s.op,
				 s.value, s.why, r->op, r->value);
		assert_non_null(s.why);
	}
}

/* quorum majority without quorum (doc/arbiter.md §6.5): the score is 0
 * (deleted) whatever the data, Primary included; with quorum, or without
 * a quorum policy, the data decides as above. */
static void test_scores_no_quorum(void **state)
{
	static const struct fact facts[] = {
		V1(UP, SEC, SEC, CONN_CONNECTED, UTD, UTD),
		V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN),
		V1(UP, PRI, UNK, CONN_WFCONNECTION, UTD, DUN),
		V1(UP, SEC, SEC, CONN_SYNCTARGET, INC, UTD),
	};
	struct view_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < N(facts); i++) {
		struct agent_policy_view v = *view_of(&facts[i], &b);
		struct agent_policy_score s;

		s = agent_policy_score(&v, &drbd_scores, false);
		assert_int_equal(s.op, AGENT_POLICY_SCORE_SET);
		v.no_quorum = true;
		s = agent_policy_score(&v, &drbd_scores, false);
		if (s.op != AGENT_POLICY_SCORE_DELETE || !strstr(s.why, "no quorum"))
			fail_msg("fact %zu without quorum: op %d (%s), expected deleted", i, s.op,
				 s.why);
	}
	/* attaching: the score is kept, as with quorum */
	{
		static const struct fact att = V1(UP, SEC, UNK, CONN_STANDALONE, ATT, DUN);
		struct agent_policy_view v = *view_of(&att, &b);

		v.no_quorum = true;
		assert_int_equal(agent_policy_score(&v, &drbd_scores, false).op,
				 AGENT_POLICY_SCORE_KEEP);
	}
}

/* ---------------------------------------------------------------- monitor */

struct monitor_row {
	const char *what;
	struct fact f;
	enum agent_policy_ocf rc;
};

static const struct monitor_row monitor_rows[] = {
	{"no daemon", V1(AGENT_POLICY_NO_DAEMON, UNK, UNK, CONN_STANDALONE, DSK, DUN),
	 AGENT_POLICY_OCF_NOT_RUNNING},
	{"unknown to tandemd", V1(AGENT_POLICY_UNKNOWN_RES, UNK, UNK, CONN_STANDALONE, DSK, DUN),
	 AGENT_POLICY_OCF_NOT_RUNNING},
	{"down", V1(AGENT_POLICY_DOWN, SEC, UNK, CONN_STANDALONE, DSK, DUN),
	 AGENT_POLICY_OCF_NOT_RUNNING},
	{"bad answer", V1(AGENT_POLICY_BAD_ANSWER, UNK, UNK, CONN_STANDALONE, DSK, DUN),
	 AGENT_POLICY_OCF_ERR_GENERIC},
	{"Secondary", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), AGENT_POLICY_OCF_SUCCESS},
	{"Secondary Inconsistent", V1(UP, SEC, SEC, CONN_SYNCTARGET, INC, UTD),
	 AGENT_POLICY_OCF_SUCCESS},
	{"Primary", V1(UP, PRI, UNK, CONN_WFCONNECTION, UTD, DUN),
	 AGENT_POLICY_OCF_RUNNING_PROMOTED},
	{"diskless Primary with UpToDate peer", V1(UP, PRI, SEC, CONN_CONNECTED, DSK, UTD),
	 AGENT_POLICY_OCF_RUNNING_PROMOTED},
	{"Primary lost its disk, no peer", V1(UP, PRI, UNK, CONN_WFCONNECTION, DSK, DUN),
	 AGENT_POLICY_OCF_FAILED_PROMOTED},
	{"Primary, one of two volumes failed, no peer",
	 V2(UP, PRI, UNK, CONN_WFCONNECTION, UTD, DISK_FAILED, DUN, DUN),
	 AGENT_POLICY_OCF_FAILED_PROMOTED},
	{"role Unknown", V1(UP, UNK, UNK, CONN_STANDALONE, UTD, DUN), AGENT_POLICY_OCF_ERR_GENERIC},
};

static void test_monitor(void **state)
{
	struct view_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < N(monitor_rows); i++) {
		enum agent_policy_ocf rc = agent_policy_monitor(view_of(&monitor_rows[i].f, &b));

		if (rc != monitor_rows[i].rc)
			fail_msg("%s: rc %d, expected %d", monitor_rows[i].what, rc,
				 monitor_rows[i].rc);
	}
}

/* ---------------------------------------------------------------- promote */

struct promote_row {
	const char *what;
	struct fact f;
	bool two_primaries;
	enum agent_policy_promote want;
};

static const struct promote_row promote_rows[] = {
	{"UpToDate alone", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), false,
	 AGENT_POLICY_PROMOTE_OK},
	{"already Primary", V1(UP, PRI, UNK, CONN_WFCONNECTION, UTD, DUN), false,
	 AGENT_POLICY_PROMOTE_ALREADY},
	{"not running", V1(AGENT_POLICY_DOWN, SEC, UNK, CONN_STANDALONE, DSK, DUN), false,
	 AGENT_POLICY_PROMOTE_NOT_RUNNING},
	{"no daemon", V1(AGENT_POLICY_NO_DAEMON, UNK, UNK, CONN_STANDALONE, DSK, DUN), false,
	 AGENT_POLICY_PROMOTE_NOT_RUNNING},
	{"peer Primary", V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), false,
	 AGENT_POLICY_PROMOTE_PEER_PRIMARY},
	{"peer Primary, allow-two-primaries", V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), true,
	 AGENT_POLICY_PROMOTE_OK},
	{"Outdated alone", V1(UP, SEC, UNK, CONN_WFCONNECTION, OUT, DUN), false,
	 AGENT_POLICY_PROMOTE_OUTDATED},
	{"Outdated, connected to an UpToDate peer", V1(UP, SEC, SEC, CONN_CONNECTED, OUT, UTD), false,
	 AGENT_POLICY_PROMOTE_OK},
	{"Inconsistent alone", V1(UP, SEC, UNK, CONN_WFCONNECTION, INC, DUN), false,
	 AGENT_POLICY_PROMOTE_NO_DATA},
	{"SyncTarget", V1(UP, SEC, SEC, CONN_SYNCTARGET, INC, UTD), false, AGENT_POLICY_PROMOTE_OK},
	{"Consistent: tandemd decides", V1(UP, SEC, UNK, CONN_WFCONNECTION, CON, DUN), false,
	 AGENT_POLICY_PROMOTE_OK},
	{"diskless, no peer", V1(UP, SEC, UNK, CONN_WFCONNECTION, DSK, DUN), false,
	 AGENT_POLICY_PROMOTE_NO_DATA},
	{"two volumes, one Outdated", V2(UP, SEC, UNK, CONN_WFCONNECTION, UTD, OUT, DUN, DUN), false,
	 AGENT_POLICY_PROMOTE_OUTDATED},
	{"both Inconsistent, connected", V1(UP, SEC, SEC, CONN_CONNECTED, INC, INC), false,
	 AGENT_POLICY_PROMOTE_NO_DATA},
};

/* Which refusals promote retries within its timeout, and which fail at once. */
struct transient_row {
	const char *what;
	enum agent_policy_promote p;
	struct fact f;
	bool fence_handler, fence_running, fail_early;
	const char *why; /* a part of the reason, NULL: not transient */
};

static const struct transient_row transient_rows[] = {
	{"peer still Primary, connected", AGENT_POLICY_PROMOTE_PEER_PRIMARY,
	 V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), false, false, false, "still Primary"},
	{"peer believed Primary, link gone", AGENT_POLICY_PROMOTE_PEER_PRIMARY,
	 V1(UP, SEC, PRI, CONN_NETWORKFAILURE, UTD, DUN), false, false, false, "believed Primary"},
	{"peer Primary, fail early", AGENT_POLICY_PROMOTE_PEER_PRIMARY,
	 V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), false, false, true, NULL},
	{"fence-peer running", AGENT_POLICY_PROMOTE_FENCING,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), true, true, false, "fence-peer is running"},
	{"fencing with a handler, not running", AGENT_POLICY_PROMOTE_FENCING,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), true, false, false, "runs again"},
	{"fencing without a handler", AGENT_POLICY_PROMOTE_FENCING,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), false, false, false, NULL},
	{"refused while tearing down", AGENT_POLICY_PROMOTE_REFUSED,
	 V1(UP, SEC, UNK, CONN_TEARDOWN, UTD, DUN), false, false, false, "torn down"},
	{"refused while disconnecting", AGENT_POLICY_PROMOTE_REFUSED,
	 V1(UP, SEC, UNK, CONN_DISCONNECTING, UTD, DUN), false, false, false, "torn down"},
	{"refused, waiting for the peer", AGENT_POLICY_PROMOTE_REFUSED,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), false, false, false, NULL},
	{"refused, StandAlone", AGENT_POLICY_PROMOTE_REFUSED,
	 V1(UP, SEC, UNK, CONN_STANDALONE, UTD, DUN), false, false, false, NULL},
	{"Outdated", AGENT_POLICY_PROMOTE_OUTDATED, V1(UP, SEC, UNK, CONN_WFCONNECTION, OUT, DUN),
	 true, true, false, NULL},
	{"no UpToDate data", AGENT_POLICY_PROMOTE_NO_DATA,
	 V1(UP, SEC, UNK, CONN_TEARDOWN, INC, DUN), true, false, false, NULL},
	{"not running", AGENT_POLICY_PROMOTE_NOT_RUNNING,
	 V1(AGENT_POLICY_DOWN, SEC, UNK, CONN_STANDALONE, DSK, DUN), false, false, false, NULL},
	{"banned", AGENT_POLICY_PROMOTE_BANNED, V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN),
	 false, false, false, NULL},
	{"fence constraint", AGENT_POLICY_PROMOTE_FENCE_CONSTRAINT,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), true, true, false, NULL},
	{"other constraint", AGENT_POLICY_PROMOTE_CONSTRAINT,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), false, false, false, NULL},
	{"arbiter veto: retried within the timeout", AGENT_POLICY_PROMOTE_VETO,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), false, false, false, "tandem-arbiterd"},
	{"arbiter veto, fail early: still retried", AGENT_POLICY_PROMOTE_VETO,
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), false, false, true, "vetoes"},
};

static void test_promote_transient(void **state)
{
	struct view_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < N(transient_rows); i++) {
		const struct transient_row *r = &transient_rows[i];
		struct agent_policy_view v = *view_of(&r->f, &b);
		const char *why;

		v.fence_handler = r->fence_handler;
		v.fence_running = r->fence_running;
		why = agent_policy_promote_transient(r->p, &v, r->fail_early);
		if (!r->why && why)
			fail_msg("%s: transient (%s), expected to fail at once", r->what, why);
		if (r->why && (!why || !strstr(why, r->why)))
			fail_msg("%s: '%s', expected a reason with '%s'", r->what, why ? why : "NULL",
				 r->why);
	}
}

static void test_promote_check(void **state)
{
	struct view_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < N(promote_rows); i++) {
		const struct promote_row *r = &promote_rows[i];
		enum agent_policy_promote p =
			agent_policy_promote_check(view_of(&r->f, &b), r->two_primaries);

		if (p != r->want)
			fail_msg("%s: %d (%s), expected %d (%s)", r->what, p,
				 agent_policy_promote_text(p), r->want,
				 agent_policy_promote_text(r->want));
	}
}

struct refused_row {
	const char *what;
	struct fact f;
	int ss;
	enum agent_policy_promote want;
	const char *text; /* a part of agent_policy_promote_text() */
};

static const struct refused_row refused_rows[] = {
	{"two primaries", V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), SS_TWO_PRIMARIES,
	 AGENT_POLICY_PROMOTE_PEER_PRIMARY, "peer is Primary"},
	{"peer not outdated", V1(UP, SEC, UNK, CONN_STANDALONE, UTD, DUN), SS_PRIMARY_NOP,
	 AGENT_POLICY_PROMOTE_FENCING, "fencing failed"},
	{"Consistent, no UpToDate data", V1(UP, SEC, UNK, CONN_STANDALONE, CON, DUN),
	 SS_NO_UP_TO_DATE_DISK, AGENT_POLICY_PROMOTE_FENCING, "fencing failed"},
	{"Outdated, no UpToDate data", V1(UP, SEC, UNK, CONN_STANDALONE, OUT, DUN),
	 SS_NO_UP_TO_DATE_DISK, AGENT_POLICY_PROMOTE_OUTDATED, "Outdated"},
	{"Inconsistent, no UpToDate data", V1(UP, SEC, UNK, CONN_STANDALONE, INC, DUN),
	 SS_NO_UP_TO_DATE_DISK, AGENT_POLICY_PROMOTE_NO_DATA, "UpToDate data"},
	{"other refusal", V1(UP, SEC, UNK, CONN_STANDALONE, UTD, DUN), SS_IN_TRANSIENT_STATE,
	 AGENT_POLICY_PROMOTE_REFUSED, "tandemd refused"},
	{"no ss at all", V1(UP, SEC, UNK, CONN_STANDALONE, UTD, DUN), 0,
	 AGENT_POLICY_PROMOTE_REFUSED, "tandemd refused"},
};

static void test_promote_refused(void **state)
{
	struct view_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < N(refused_rows); i++) {
		const struct refused_row *r = &refused_rows[i];
		enum agent_policy_promote p = agent_policy_promote_refused(view_of(&r->f, &b), r->ss);

		if (p != r->want)
			fail_msg("%s: %d, expected %d", r->what, p, r->want);
		if (!strstr(agent_policy_promote_text(p), r->text))
			fail_msg("%s: text '%s' lacks '%s'", r->what, agent_policy_promote_text(p),
				 r->text);
	}
}

/* Every refusal has a text naming the cause and a hint saying what to do. */
static void test_promote_texts(void **state)
{
	static const struct {
		enum agent_policy_promote p;
		const char *text, *hint;
	} rows[] = {
		{AGENT_POLICY_PROMOTE_NOT_RUNNING, "not running", "start"},
		{AGENT_POLICY_PROMOTE_PEER_PRIMARY, "the peer is Primary", "demote the peer"},
		{AGENT_POLICY_PROMOTE_OUTDATED, "the disk is Outdated", "resyncs"},
		{AGENT_POLICY_PROMOTE_NO_DATA, "no access to UpToDate data", "resync"},
		{AGENT_POLICY_PROMOTE_FENCING, "fencing failed", "fence-peer handler"},
		{AGENT_POLICY_PROMOTE_BANNED, "cli-ban", "crm_resource --clear"},
		{AGENT_POLICY_PROMOTE_FENCE_CONSTRAINT, "fence constraint", "tandem-unfence-peer"},
		{AGENT_POLICY_PROMOTE_CONSTRAINT, "location constraint", "remove"},
		{AGENT_POLICY_PROMOTE_REFUSED, "tandemd refused", "tandemd's message"},
		{AGENT_POLICY_PROMOTE_VETO, "tandem-arbiterd refused", "tandemadm arbiter"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		if (!strstr(agent_policy_promote_text(rows[i].p), rows[i].text))
			fail_msg("%d: text '%s' lacks '%s'", rows[i].p,
				 agent_policy_promote_text(rows[i].p), rows[i].text);
		if (!strstr(agent_policy_promote_hint(rows[i].p), rows[i].hint))
			fail_msg("%d: hint '%s' lacks '%s'", rows[i].p,
				 agent_policy_promote_hint(rows[i].p), rows[i].hint);
	}
	assert_string_equal(agent_policy_promote_hint(AGENT_POLICY_PROMOTE_OK), "");
}

/* ---------------------------------------------------------------- constraints */

static const struct agent_policy_expr not_alice[] = {{true, "alice"}};
static const struct agent_policy_expr not_bob[] = {{true, "bob"}};
static const struct agent_policy_expr is_alice[] = {{false, "alice"}};
static const struct agent_policy_expr neither[] = {{true, "bob"}, {true, "carol"}};
static const struct agent_policy_rule fence_keep_bob[] = {
	{"Promoted", "-INFINITY", false, false, not_bob, 1}};
static const struct agent_policy_rule fence_keep_alice[] = {
	{"Master", "-INFINITY", false, false, not_alice, 1}};
static const struct agent_policy_rule fence_keep_bob_carol[] = {
	{"Promoted", "-INFINITY", false, false, neither, 2}};
static const struct agent_policy_rule ban_timed[] = {
	{"Promoted", "-INFINITY", false, true, is_alice, 1}};
static const struct agent_policy_rule ban_rule_alice[] = {
	{NULL, NULL, false, false, is_alice, 1}};
static const struct agent_policy_rule prefer_alice[] = {
	{"Promoted", "100", false, false, is_alice, 1}};
static const struct agent_policy_rule or_rule[] = {
	{"Promoted", "-INFINITY", true, false, neither, 2}};

struct location_row {
	const char *what;
	struct agent_policy_location l;
	enum agent_policy_block want;
	bool uncertain;
};

static const struct location_row location_rows[] = {
	{"cli-ban of the promoted role here",
	 {"cli-ban-r0-clone-on-alice", "r0-clone", "Promoted", "-INFINITY", "alice", NULL, 0},
	 AGENT_POLICY_BLOCK_BAN, false},
	{"cli-ban elsewhere",
	 {"cli-ban-r0-clone-on-bob", "r0-clone", "Promoted", "-INFINITY", "bob", NULL, 0},
	 AGENT_POLICY_BLOCK_NONE, false},
	{"cli-ban of every role here, on the primitive",
	 {"cli-ban-r0-on-alice", "r0", NULL, "-INFINITY", "alice", NULL, 0},
	 AGENT_POLICY_BLOCK_BAN, false},
	{"cli-ban, Started role, -inf spelling",
	 {"cli-ban-r0-clone-on-alice", "r0-clone", "Started", "-inf", "ALICE", NULL, 0},
	 AGENT_POLICY_BLOCK_BAN, false},
	{"Unpromoted role only",
	 {"cli-ban-r0-clone-on-alice", "r0-clone", "Unpromoted", "-INFINITY", "alice", NULL, 0},
	 AGENT_POLICY_BLOCK_NONE, false},
	{"another resource",
	 {"cli-ban-r1-clone-on-alice", "r1-clone", "Promoted", "-INFINITY", "alice", NULL, 0},
	 AGENT_POLICY_BLOCK_NONE, false},
	{"cli-prefer elsewhere",
	 {"cli-prefer-r0-clone", "r0-clone", "Promoted", "INFINITY", "bob", NULL, 0},
	 AGENT_POLICY_BLOCK_NONE, false},
	{"a finite negative score",
	 {"avoid", "r0-clone", "Promoted", "-1000", "alice", NULL, 0}, AGENT_POLICY_BLOCK_NONE,
	 false},
	{"drbd fence constraint keeping bob",
	 {"drbd-fence-by-handler-r0-r0-clone", "r0-clone", NULL, NULL, NULL, fence_keep_bob, 1},
	 AGENT_POLICY_BLOCK_FENCE, false},
	{"tandem fence constraint keeping alice (Master spelling)",
	 {"tandem-fence-r0", "r0-clone", NULL, NULL, NULL, fence_keep_alice, 1},
	 AGENT_POLICY_BLOCK_NONE, false},
	{"fence constraint keeping bob and carol",
	 {"tandem-fence-r0", "r0-clone", NULL, NULL, NULL, fence_keep_bob_carol, 1},
	 AGENT_POLICY_BLOCK_FENCE, false},
	{"or-rule: not bob or not carol matches alice",
	 {"my-rule", "r0-clone", NULL, NULL, NULL, or_rule, 1}, AGENT_POLICY_BLOCK_OTHER, false},
	{"ban with a lifetime: cannot tell",
	 {"cli-ban-r0-clone-on-alice", "r0-clone", NULL, NULL, NULL, ban_timed, 1},
	 AGENT_POLICY_BLOCK_NONE, true},
	{"rule taking role and score from the constraint",
	 {"user-avoid", "r0-clone", "Promoted", "-INFINITY", NULL, ban_rule_alice, 1},
	 AGENT_POLICY_BLOCK_OTHER, false},
	{"rule with a positive score",
	 {"user-prefer", "r0-clone", NULL, NULL, NULL, prefer_alice, 1}, AGENT_POLICY_BLOCK_NONE,
	 false},
};

static void test_location(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N(location_rows); i++) {
		const struct location_row *r = &location_rows[i];
		bool uncertain = false;
		enum agent_policy_block b =
			agent_policy_location_blocks(&r->l, "alice", "r0", "r0-clone", &uncertain);

		if (b != r->want || uncertain != r->uncertain)
			fail_msg("%s: block %d uncertain %d, expected %d %d", r->what, b, uncertain,
				 r->want, r->uncertain);
	}
}

/* ---------------------------------------------------------------- meta */

struct meta_row {
	const char *what;
	struct agent_policy_meta m;
	bool two_primaries;
	enum agent_policy_ocf rc;
	const char *text; /* in some finding; NULL = no finding at all */
};

#define GOOD_META(pmax) {"true", "true", "2", "1", pmax, "1"}

static const struct meta_row meta_rows[] = {
	{"a proper promotable clone", GOOD_META("1"), false, AGENT_POLICY_OCF_SUCCESS, NULL},
	{"no clone at all", {NULL, NULL, NULL, NULL, NULL, NULL}, false, AGENT_POLICY_OCF_SUCCESS,
	 "not run as a clone"},
	{"not promotable", {"false", "true", "2", "1", NULL, NULL}, false,
	 AGENT_POLICY_OCF_ERR_CONFIGURED, "set promotable=true"},
	{"old style: master-max without promotable", {NULL, "true", "2", "1", "1", "1"}, false,
	 AGENT_POLICY_OCF_SUCCESS, NULL},
	{"notify off", {"true", "false", "2", "1", "1", "1"}, false,
	 AGENT_POLICY_OCF_ERR_CONFIGURED, "set notify=true"},
	{"notify absent", {"true", NULL, "2", "1", "1", "1"}, false,
	 AGENT_POLICY_OCF_ERR_CONFIGURED, "set notify=true"},
	{"promoted-max 2 without allow-two-primaries", GOOD_META("2"), false,
	 AGENT_POLICY_OCF_ERR_CONFIGURED, "allow-two-primaries"},
	{"promoted-max 2 with allow-two-primaries", GOOD_META("2"), true, AGENT_POLICY_OCF_SUCCESS,
	 NULL},
	{"promoted-max 3", GOOD_META("3"), true, AGENT_POLICY_OCF_ERR_CONFIGURED,
	 "set promoted-max=1"},
	{"promoted-max not a number", GOOD_META("one"), false, AGENT_POLICY_OCF_ERR_CONFIGURED,
	 "is not a number"},
	{"clone-max 3", {"true", "true", "3", "1", "1", "1"}, false,
	 AGENT_POLICY_OCF_ERR_CONFIGURED, "set clone-max=2"},
	{"clone-max 1: a warning", {"true", "true", "1", "1", "1", "1"}, false,
	 AGENT_POLICY_OCF_SUCCESS, "clone-max=1"},
	{"clone-node-max 2", {"true", "true", "2", "2", "1", "1"}, false,
	 AGENT_POLICY_OCF_ERR_CONFIGURED, "set clone-node-max=1"},
	{"promoted-node-max 2", {"true", "true", "2", "1", "1", "2"}, false,
	 AGENT_POLICY_OCF_ERR_CONFIGURED, "set promoted-node-max=1"},
};

static void test_meta(void **state)
{
	struct agent_policy_finding f[AGENT_POLICY_MAX_FINDINGS];
	unsigned int n, j;
	size_t i;

	(void)state;
	for (i = 0; i < N(meta_rows); i++) {
		const struct meta_row *r = &meta_rows[i];
		enum agent_policy_ocf rc = agent_policy_check_meta(&r->m, r->two_primaries, false, "r0", f,
								   AGENT_POLICY_MAX_FINDINGS, &n);
		bool found = false;

		if (rc != r->rc)
			fail_msg("%s: rc %d, expected %d (first finding: %s)", r->what, rc, r->rc,
				 n ? f[0].text : "none");
		for (j = 0; j < n; j++)
			found |= r->text && strstr(f[j].text, r->text);
		if (r->text ? !found : n != 0)
			fail_msg("%s: %u findings, expected '%s' (first: %s)", r->what, n,
				 r->text ? r->text : "none", n ? f[0].text : "none");
	}
}

/* ignore_missing_notifications: notify off is a warning, not an error. */
static void test_meta_notify_optional(void **state)
{
	const struct agent_policy_meta m = {"true", "false", "2", "1", "1", "1"};
	struct agent_policy_finding f[AGENT_POLICY_MAX_FINDINGS];
	unsigned int n;

	(void)state;
	assert_int_equal(agent_policy_check_meta(&m, false, true, "r0", f, AGENT_POLICY_MAX_FINDINGS,
						 &n),
			 AGENT_POLICY_OCF_SUCCESS);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].rc, AGENT_POLICY_OCF_SUCCESS);
	assert_non_null(strstr(f[0].text, "ignore_missing_notifications"));
}

/* Several problems at once: every one reported, and max respected. */
static void test_meta_all_findings(void **state)
{
	const struct agent_policy_meta m = {"false", "false", "4", "2", "3", "2"};
	struct agent_policy_finding f[AGENT_POLICY_MAX_FINDINGS];
	unsigned int n;

	(void)state;
	assert_int_equal(agent_policy_check_meta(&m, false, false, "r0", f, AGENT_POLICY_MAX_FINDINGS, &n),
			 AGENT_POLICY_OCF_ERR_CONFIGURED);
	assert_int_equal(n, 5); /* promotable is implied by promoted-max=3 */
	assert_int_equal(agent_policy_check_meta(&m, false, false, "r0", f, 2, &n),
			 AGENT_POLICY_OCF_ERR_CONFIGURED);
	assert_int_equal(n, 2);
}

/* ---------------------------------------------------------------- notify */

struct notify_row {
	const char *type, *op;
	int want;
};

#define RC AGENT_POLICY_NOTIFY_RECONNECT
#define RS AGENT_POLICY_NOTIFY_RESCORE
#define OC AGENT_POLICY_NOTIFY_OUTDATE_CHECK
#define AJ AGENT_POLICY_NOTIFY_ADJUST

static const struct notify_row notify_rows[] = {
	{"pre", "start", AJ},		{"post", "start", AJ | RC | RS | OC},
	{"pre", "stop", 0},		{"post", "stop", RS | OC},
	{"pre", "promote", 0},		{"post", "promote", RS | OC},
	{"pre", "demote", 0},		{"post", "demote", RS | OC},
	{"post", "migrate", -EINVAL},	{"during", "start", -EINVAL},
	{NULL, "start", -EINVAL},	{"post", NULL, -EINVAL},
};

static void test_notify(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N(notify_rows); i++) {
		int got = agent_policy_notify(notify_rows[i].type, notify_rows[i].op);

		if (got != notify_rows[i].want)
			fail_msg("%s-%s: %d, expected %d", notify_rows[i].type ? notify_rows[i].type : "NULL",
				 notify_rows[i].op ? notify_rows[i].op : "NULL", got, notify_rows[i].want);
	}
}

struct outdate_row {
	const char *what;
	struct fact f;
	const char *promoted, *stopping, *demoting;
	bool at_stop;
	enum agent_policy_outdate want;
	const char *other;
};

static const struct outdate_row outdate_rows[] = {
	{"bob promoted, we are a disconnected Secondary",
	 V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), "bob", " ", " ", false,
	 AGENT_POLICY_OUTDATE_YES, "bob"},
	{"connected: bob knows our state", V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), "bob", " ",
	 " ", false, AGENT_POLICY_OUTDATE_NO, NULL},
	{"connected, at stop", V1(UP, SEC, PRI, CONN_CONNECTED, UTD, UTD), "bob", " ", " ", true,
	 AGENT_POLICY_OUTDATE_YES, "bob"},
	{"nobody promoted (empty list is a space)", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN),
	 " ", " ", " ", false, AGENT_POLICY_OUTDATE_NO, NULL},
	{"only we are promoted", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), "alice", " ", " ",
	 false, AGENT_POLICY_OUTDATE_NO, NULL},
	{"the promoted node stops", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), "bob", "bob", " ",
	 false, AGENT_POLICY_OUTDATE_NO, NULL},
	{"the promoted node demotes", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), " bob ", " ",
	 "bob", true, AGENT_POLICY_OUTDATE_NO, NULL},
	{"we and bob promoted, disconnected", V1(UP, PRI, UNK, CONN_WFCONNECTION, UTD, DUN),
	 "alice bob", " ", " ", false, AGENT_POLICY_OUTDATE_SPLIT_BRAIN, "bob"},
	{"case of names", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), "ALICE Bob", " ", " ",
	 false, AGENT_POLICY_OUTDATE_YES, "Bob"},
	{"no lists", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN), NULL, NULL, NULL, true,
	 AGENT_POLICY_OUTDATE_NO, NULL},
	{"not running", V1(AGENT_POLICY_DOWN, SEC, UNK, CONN_STANDALONE, DSK, DUN), "bob", " ", " ",
	 true, AGENT_POLICY_OUTDATE_NO, NULL},
	{"a name that only starts like ours", V1(UP, SEC, UNK, CONN_WFCONNECTION, UTD, DUN),
	 "alice2", " ", " ", false, AGENT_POLICY_OUTDATE_YES, "alice2"},
};

static void test_outdate_self(void **state)
{
	struct view_buf b;
	char other[64];
	size_t i;

	(void)state;
	for (i = 0; i < N(outdate_rows); i++) {
		const struct outdate_row *r = &outdate_rows[i];
		enum agent_policy_outdate o;

		other[0] = '\0';
		o = agent_policy_outdate_self(view_of(&r->f, &b), "alice", r->promoted, r->stopping,
					      r->demoting, r->at_stop, other, sizeof(other));
		if (o != r->want)
			fail_msg("%s: %d, expected %d", r->what, o, r->want);
		if (r->other && strcmp(other, r->other))
			fail_msg("%s: other '%s', expected '%s'", r->what, other, r->other);
	}
}

/* ---------------------------------------------------------------- start waits */

struct wfc_row {
	const char *param, *cls;
	uint64_t wfc, degr, outd;
	int rc;
	long secs;
};

static const struct wfc_row wfc_rows[] = {
	{"config", "default", 30, 10, 5, 0, 30},
	{"config", "degraded", 30, 10, 5, 0, 10},
	{"config", "peer-outdated", 30, 10, 5, 0, 5},
	{NULL, "default", 0, 0, 0, 0, 0},            /* forever */
	{"config", "degraded", 30, 0, 0, 0, 30},     /* degr 0 := wfc */
	{"config", "degraded", 30, 60, 0, 0, 30},    /* degr > wfc := wfc */
	{"config", "peer-outdated", 30, 20, 40, 0, 20}, /* outd > degr := degr */
	{"config", "peer-outdated", 0, 0, 7, 0, 7},  /* forever elsewhere */
	{"5", "degraded", 30, 10, 5, 0, 5},
	{"0", "default", 30, 10, 5, 0, 0},
	{"none", "default", 30, 10, 5, 0, -1},
	{"", "default", 30, 10, 5, 0, -1},
	{"-3", "default", 30, 10, 5, -EINVAL, 0},
	{"5s", "default", 30, 10, 5, -EINVAL, 0},
	{"forever", "default", 30, 10, 5, -EINVAL, 0},
};

static void test_wfc(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N(wfc_rows); i++) {
		const struct wfc_row *r = &wfc_rows[i];
		long secs = 12345;
		int rc = agent_policy_wfc(r->param, r->cls, r->wfc, r->degr, r->outd, &secs);

		if (rc != r->rc || (rc == 0 && secs != r->secs))
			fail_msg("wfc_timeout '%s' class %s: rc %d secs %ld, expected %d %ld",
				 r->param ? r->param : "NULL", r->cls, rc, secs, r->rc, r->secs);
	}
}

/* ---------------------------------------------------------------- parameters */

struct scores_row {
	const char *text;
	int rc;
	struct agent_policy_scores want;
	const char *err;
};

static const struct scores_row scores_rows[] = {
	{"0 10 1000 10000", 0, {0, 10, 1000, 10000}, NULL},
	{NULL, 0, {0, 10, 1000, 10000}, NULL},
	{"  5\t10 10 20  ", 0, {5, 10, 10, 20}, NULL},
	{"-5 0 1 2", 0, {-5, 0, 1, 2}, NULL},
	{"0 10 1000", -EINVAL, {0}, "has 3 values"},
	{"", -EINVAL, {0}, "has 0 values"},
	{"0 10 1000 10000 5", -EINVAL, {0}, "more than four"},
	{"0 100 10 1000", -EINVAL, {0}, "must not decrease"},
	{"0 10 1k 10000", -EINVAL, {0}, "not an integer"},
	{"0 10 1000 99999999", -EINVAL, {0}, "not an integer"},
};

static void test_parse_scores(void **state)
{
	struct agent_policy_scores s;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < N(scores_rows); i++) {
		const struct scores_row *r = &scores_rows[i];
		int rc;

		err[0] = '\0';
		rc = agent_policy_parse_scores(r->text, &s, err, sizeof(err));
		if (rc != r->rc)
			fail_msg("'%s': rc %d (%s), expected %d", r->text ? r->text : "NULL", rc, err,
				 r->rc);
		if (rc == 0 && memcmp(&s, &r->want, sizeof(s)))
			fail_msg("'%s': %d %d %d %d", r->text ? r->text : "NULL", s.only_consistent,
				 s.only_remote, s.local_ok, s.best);
		if (r->err && !strstr(err, r->err))
			fail_msg("'%s': message '%s' lacks '%s'", r->text, err, r->err);
	}
}

static void test_parse_bool(void **state)
{
	static const struct {
		const char *text;
		bool def;
		int rc;
		bool want;
	} rows[] = {
		{"true", false, 0, true},   {"YES", false, 0, true},    {"on", false, 0, true},
		{"1", false, 0, true},      {"false", true, 0, false},  {"No", true, 0, false},
		{"off", true, 0, false},    {"0", true, 0, false},      {NULL, true, 0, true},
		{"", false, 0, false},      {"maybe", false, -EINVAL, false},
		{"unexpected", false, -EINVAL, false},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		bool b = !rows[i].want;
		int rc = agent_policy_parse_bool(rows[i].text, rows[i].def, &b);

		if (rc != rows[i].rc || (rc == 0 && b != rows[i].want))
			fail_msg("'%s': rc %d value %d", rows[i].text ? rows[i].text : "NULL", rc, b);
	}
}

static void test_valid_name(void **state)
{
	(void)state;
	assert_true(agent_policy_valid_name("r0"));
	assert_true(agent_policy_valid_name("data-01.web_x:y=z@a+b%c"));
	assert_false(agent_policy_valid_name(""));
	assert_false(agent_policy_valid_name(NULL));
	assert_false(agent_policy_valid_name("r 0"));
	assert_false(agent_policy_valid_name("r0;rm"));
	assert_false(agent_policy_valid_name("$(x)"));
	assert_false(agent_policy_valid_name("r0\n"));
}

/* The view helpers the agent's actions use directly. */
static void test_helpers(void **state)
{
	const struct fact two = V2(UP, SEC, SEC, CONN_CONNECTED, UTD, INC, UTD, UTD);
	const struct fact alone = V2(UP, SEC, UNK, CONN_WFCONNECTION, UTD, INC, DUN, DUN);
	struct fact busy = V1(UP, PRI, UNK, CONN_WFCONNECTION, UTD, DUN);
	struct view_buf b;

	(void)state;
	busy.clients = 3;
	assert_false(agent_policy_all_disks(view_of(&two, &b), DISK_UPTODATE));
	assert_true(agent_policy_uptodate_access(view_of(&two, &b)));
	assert_false(agent_policy_uptodate_access(view_of(&alone, &b)));
	assert_int_equal(agent_policy_clients(view_of(&busy, &b)), 3);
	assert_true(agent_policy_all_disks(view_of(&busy, &b), DISK_UPTODATE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scores),
		cmocka_unit_test(test_scores_no_quorum),
		cmocka_unit_test(test_monitor),
		cmocka_unit_test(test_promote_check),
		cmocka_unit_test(test_promote_refused),
		cmocka_unit_test(test_promote_texts),
		cmocka_unit_test(test_promote_transient),
		cmocka_unit_test(test_location),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_meta_all_findings),
		cmocka_unit_test(test_meta_notify_optional),
		cmocka_unit_test(test_notify),
		cmocka_unit_test(test_outdate_self),
		cmocka_unit_test(test_wfc),
		cmocka_unit_test(test_parse_scores),
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_valid_name),
		cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
