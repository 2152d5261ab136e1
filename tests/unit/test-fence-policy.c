/* Unit tests for fence-policy, the decisions of tandem-fence-peer and
 * tandem-unfence-peer (ref/drbd-semantics.md section 7): one table per
 * decision. The main one runs the whole chain the handler runs: the
 * peer's node_state entry is classified, a peer still "about to be
 * fenced" when the timeout runs out is judged as then, and the result,
 * this node's and the peer's disks, quorum and an existing constraint
 * give the action and the exit code 3, 4, 5, 7 (or 1). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fence-policy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* node_state entries as Pacemaker 2.1.5 writes them (in_ccm, crmd, join,
 * expected), and as 2.1.7+ does (timestamps) */
static const struct fence_node_state ST_ONLINE = {true, "true", "online", "member", "member"};
static const struct fence_node_state ST_ONLINE_TS = {true, "1733200000", "1733200001", "member",
						     "member"};
static const struct fence_node_state ST_FENCED = {true, "false", "offline", "down", "down"};
static const struct fence_node_state ST_FENCED_TS = {true, "0", "0", "down", "down"};
static const struct fence_node_state ST_LOST = {true, "false", "offline", "down", "member"};
static const struct fence_node_state ST_CCM_ONLY = {true, "true", "offline", "down", "member"};
static const struct fence_node_state ST_BANNED = {true, "true", "online", "banned", "member"};
static const struct fence_node_state ST_NONE = {false, "", "", "", ""};
static const struct fence_node_state ST_NO_CRMD = {true, "", "", "", ""};

/* ------------------------------------------------------------ classify */

static void test_classify(void **state)
{
	static const struct {
		const char *name;
		const struct fence_node_state *n;
		bool stonith, startup;
		enum fence_peer want;
	} rows[] = {
		{"online", &ST_ONLINE, true, true, FENCE_PEER_REACHABLE},
		{"online, timestamps", &ST_ONLINE_TS, true, true, FENCE_PEER_REACHABLE},
		{"online, no stonith", &ST_ONLINE, false, true, FENCE_PEER_REACHABLE},
		{"fenced", &ST_FENCED, true, true, FENCE_PEER_FENCED},
		{"fenced, timestamps", &ST_FENCED_TS, true, true, FENCE_PEER_FENCED},
		{"fenced, no stonith", &ST_FENCED, false, true, FENCE_PEER_FENCED},
		{"lost: stonith will act", &ST_LOST, true, true, FENCE_PEER_WAIT},
		{"lost, no stonith: nobody acts", &ST_LOST, false, true, FENCE_PEER_UNREACHABLE},
		{"member, controller gone", &ST_CCM_ONLY, true, true, FENCE_PEER_WAIT},
		{"member, controller gone, no stonith", &ST_CCM_ONLY, false, true,
		 FENCE_PEER_UNREACHABLE},
		{"banned but online", &ST_BANNED, true, true, FENCE_PEER_REACHABLE},
		{"never seen, startup-fencing", &ST_NONE, true, true, FENCE_PEER_WAIT},
		{"never seen, no startup-fencing", &ST_NONE, true, false, FENCE_PEER_UNREACHABLE},
		{"never seen, no stonith", &ST_NONE, false, true, FENCE_PEER_UNREACHABLE},
		{"entry without attributes", &ST_NO_CRMD, true, true, FENCE_PEER_WAIT},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		enum fence_peer got = fence_policy_classify(rows[i].n, rows[i].stonith,
							    rows[i].startup);

		if (got != rows[i].want)
			fail_msg("row %zu (%s): got %s, want %s", i, rows[i].name,
				 fence_policy_peer_name(got), fence_policy_peer_name(rows[i].want));
	}
}

static void test_timed_out(void **state)
{
	(void)state;
	/* its controller is recorded offline: not known to be clean */
	assert_int_equal(fence_policy_timed_out(&ST_LOST), FENCE_PEER_UNREACHABLE);
	assert_int_equal(fence_policy_timed_out(&ST_CCM_ONLY), FENCE_PEER_UNREACHABLE);
	/* online but not answering, or nothing recorded: unknown */
	assert_int_equal(fence_policy_timed_out(&ST_ONLINE), FENCE_PEER_UNKNOWN);
	assert_int_equal(fence_policy_timed_out(&ST_NONE), FENCE_PEER_UNKNOWN);
	assert_int_equal(fence_policy_timed_out(&ST_NO_CRMD), FENCE_PEER_UNKNOWN);
}

/* ------------------------------------------------------------ exit codes */

#define NONE FENCE_DISK_NONE
#define WORSE FENCE_DISK_WORSE
#define OUTD FENCE_DISK_OUTDATED
#define DUNK FENCE_DISK_DUNKNOWN
#define CONS FENCE_DISK_CONSISTENT
#define UTD FENCE_DISK_UPTODATE
#define H_NONE FENCE_HAVE_NONE
#define H_SAME FENCE_HAVE_SAME
#define H_WIDER FENCE_HAVE_WIDER
#define H_OTHER FENCE_HAVE_OTHER
#define PLACE FENCE_ACT_PLACE
#define NOTHING FENCE_ACT_NOTHING
#define REMOVE FENCE_ACT_REMOVE

/* How the poll of the peer ended. */
enum poll_end {
	DEFINITE,  /* classify() gave a definite answer in time */
	TIMED_OUT, /* it was still WAIT when --timeout ran out */
	NO_DC,     /* no DC within --dc-timeout */
};

struct decide_row {
	const char *name;
	const struct fence_node_state *n;
	bool stonith;
	enum poll_end end;
	enum fence_disk disk, pdisk;
	bool quorum, unreachable_is_outdated;
	enum fence_have have;
	enum fence_action act;
	int exit;
};

/* The handler's chain: classify, time out, decide. */
static void run_decide(const struct decide_row *r, size_t i)
{
	struct fence_in in = {0};
	struct fence_out out = {0};

	in.peer = fence_policy_classify(r->n, r->stonith, true);
	if (r->end == TIMED_OUT) {
		if (in.peer != FENCE_PEER_WAIT && in.peer != FENCE_PEER_REACHABLE)
			fail_msg("row %zu (%s): timed out, but %s is definite", i, r->name,
				 fence_policy_peer_name(in.peer));
		in.peer = fence_policy_timed_out(r->n);
	} else if (r->end == NO_DC) {
		in.peer = FENCE_PEER_NO_DC;
	} else if (in.peer == FENCE_PEER_WAIT) {
		fail_msg("row %zu (%s): the peer is not definite, say TIMED_OUT", i, r->name);
	}
	in.disk = r->disk;
	in.pdisk = r->pdisk;
	in.quorum = r->quorum;
	in.unreachable_is_outdated = r->unreachable_is_outdated;
	in.have = r->have;
	fence_policy_decide(&in, &out);
	assert_non_null(out.why);
	if (out.action != r->act || out.exit != r->exit)
		fail_msg("row %zu (%s): got action %d exit %d (%s), want action %d exit %d", i,
			 r->name, out.action, out.exit, out.why, r->act, r->exit);
}

static void test_decide(void **state)
{
	static const struct decide_row rows[] = {
		/* reachable: 4, from Consistent up; and an existing one is 4 */
		{"reachable, UpToDate", &ST_ONLINE, true, DEFINITE, UTD, DUNK, true, false, H_NONE,
		 PLACE, 4},
		{"reachable, timestamps", &ST_ONLINE_TS, true, DEFINITE, UTD, DUNK, true, false,
		 H_NONE, PLACE, 4},
		{"reachable, Consistent", &ST_ONLINE, true, DEFINITE, CONS, DUNK, true, false, H_NONE,
		 PLACE, 4},
		{"reachable, Outdated here", &ST_ONLINE, true, DEFINITE, OUTD, DUNK, true, false,
		 H_NONE, NOTHING, 5},
		{"reachable, Inconsistent here", &ST_ONLINE, true, DEFINITE, WORSE, DUNK, true, false,
		 H_NONE, NOTHING, 5},
		{"reachable, wider one there", &ST_ONLINE, true, DEFINITE, UTD, DUNK, true, false,
		 H_WIDER, PLACE, 4},
		{"same one there", &ST_ONLINE, true, DEFINITE, UTD, DUNK, true, false, H_SAME,
		 NOTHING, 4},
		{"same one there, no quorum", &ST_LOST, true, TIMED_OUT, UTD, DUNK, false, false,
		 H_SAME, NOTHING, 4},
		/* the peer's disk known bad already: 3 and 4 without asking */
		{"peer Inconsistent", &ST_LOST, true, TIMED_OUT, UTD, WORSE, true, false, H_NONE,
		 PLACE, 3},
		{"peer Inconsistent, Consistent here", &ST_ONLINE, true, DEFINITE, CONS, WORSE, true,
		 false, H_NONE, PLACE, 3},
		{"peer Outdated", &ST_LOST, true, TIMED_OUT, UTD, OUTD, true, false, H_NONE, PLACE,
		 4},
		/* fenced: 7, only when UpToDate here */
		{"fenced, UpToDate", &ST_FENCED, true, DEFINITE, UTD, DUNK, true, false, H_NONE,
		 PLACE, 7},
		{"fenced, timestamps", &ST_FENCED_TS, true, DEFINITE, UTD, DUNK, true, false, H_NONE,
		 PLACE, 7},
		{"fenced, Consistent here", &ST_FENCED, true, DEFINITE, CONS, DUNK, true, false,
		 H_NONE, NOTHING, 5},
		/* unreachable, unknown, timeouts: 5 */
		{"unreachable, no stonith", &ST_LOST, false, DEFINITE, UTD, DUNK, true, false, H_NONE,
		 PLACE, 5},
		{"timed out waiting for stonith", &ST_LOST, true, TIMED_OUT, UTD, DUNK, true, false,
		 H_NONE, PLACE, 5},
		{"timed out, controller silent", &ST_ONLINE, true, TIMED_OUT, UTD, DUNK, true, false,
		 H_NONE, PLACE, 5},
		{"timed out, never seen", &ST_NONE, true, TIMED_OUT, UTD, DUNK, true, false, H_NONE,
		 PLACE, 5},
		{"no DC", &ST_ONLINE, true, NO_DC, UTD, DUNK, true, false, H_NONE, PLACE, 5},
		{"timed out, Consistent here", &ST_LOST, true, TIMED_OUT, CONS, DUNK, true, false,
		 H_NONE, NOTHING, 5},
		{"timed out, Consistent, operator says outdated", &ST_LOST, true, TIMED_OUT, CONS,
		 DUNK, true, true, H_NONE, PLACE, 5},
		{"timed out, Outdated, operator says outdated", &ST_LOST, true, TIMED_OUT, OUTD, DUNK,
		 true, true, H_NONE, NOTHING, 5},
		/* failures: 1 */
		{"no quorum", &ST_LOST, true, TIMED_OUT, UTD, DUNK, false, false, H_NONE, NOTHING, 1},
		{"no quorum, reachable", &ST_ONLINE, true, DEFINITE, UTD, DUNK, false, false, H_NONE,
		 NOTHING, 1},
		{"lost the race: the peer's one", &ST_ONLINE, true, DEFINITE, UTD, DUNK, true, false,
		 H_OTHER, NOTHING, 1},
		{"disk state not known", &ST_ONLINE, true, DEFINITE, NONE, DUNK, true, false, H_NONE,
		 NOTHING, 1},
		/* the connection came back meanwhile */
		{"peer UpToDate again", &ST_ONLINE, true, DEFINITE, UTD, UTD, true, false, H_NONE,
		 NOTHING, 1},
		{"peer UpToDate again, ours there", &ST_ONLINE, true, DEFINITE, UTD, UTD, true, false,
		 H_SAME, REMOVE, 1},
		{"peer UpToDate, Consistent here", &ST_ONLINE, true, DEFINITE, CONS, UTD, true, false,
		 H_SAME, NOTHING, 1},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++)
		run_decide(&rows[i], i);
}

/* ------------------------------------------------------------ unfence, stale */

static void test_unfence(void **state)
{
	static const struct {
		enum fence_disk disk, pdisk;
		enum fence_action act;
		int exit;
	} rows[] = {
		{UTD, UTD, REMOVE, 0},	{UTD, OUTD, NOTHING, 2}, {UTD, DUNK, NOTHING, 2},
		{UTD, WORSE, NOTHING, 2}, {CONS, UTD, NOTHING, 2}, {OUTD, UTD, NOTHING, 2},
		{UTD, NONE, NOTHING, 2},  {NONE, UTD, NOTHING, 1}, {NONE, NONE, NOTHING, 1},
	};
	struct fence_out out;
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		fence_policy_unfence(rows[i].disk, rows[i].pdisk, &out);
		if (out.action != rows[i].act || out.exit != rows[i].exit)
			fail_msg("row %zu: got action %d exit %d (%s)", i, out.action, out.exit,
				 out.why);
	}
}

static void test_stale(void **state)
{
	static const struct {
		struct fence_res_state s;
		enum fence_stale want;
	} rows[] = {
		{{true, true, true, true, UTD, UTD}, FENCE_STALE_SYNCED},
		{{true, true, true, false, UTD, UTD}, FENCE_STALE_NO},
		{{true, true, true, true, UTD, OUTD}, FENCE_STALE_NO},
		{{true, true, true, true, CONS, UTD}, FENCE_STALE_NO},
		{{true, true, false, false, NONE, NONE}, FENCE_STALE_NO_RESOURCE},
		{{true, false, false, false, NONE, NONE}, FENCE_STALE_UNKNOWN},
		{{false, false, false, false, NONE, NONE}, FENCE_STALE_NO_CLONE},
		{{false, true, true, false, UTD, DUNK}, FENCE_STALE_NO_CLONE},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		enum fence_stale got = fence_policy_stale(&rows[i].s);

		if (got != rows[i].want)
			fail_msg("row %zu: got %s", i, fence_policy_stale_text(got));
		assert_int_equal(fence_policy_is_stale(got),
				 got == FENCE_STALE_SYNCED || got == FENCE_STALE_NO_RESOURCE ||
					 got == FENCE_STALE_NO_CLONE);
	}
}

/* ------------------------------------------------------------ names, ids */

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(fence_policy_disk("UpToDate"), UTD);
	assert_int_equal(fence_policy_disk("Consistent"), CONS);
	assert_int_equal(fence_policy_disk("DUnknown"), DUNK);
	assert_int_equal(fence_policy_disk("Outdated"), OUTD);
	assert_int_equal(fence_policy_disk("Inconsistent"), WORSE);
	assert_int_equal(fence_policy_disk("Diskless"), WORSE);
	assert_int_equal(fence_policy_disk("uptodate"), NONE);
	assert_int_equal(fence_policy_disk(""), NONE);
	assert_int_equal(fence_policy_disk(NULL), NONE);
	assert_int_equal(fence_policy_worse(UTD, OUTD), OUTD);
	assert_int_equal(fence_policy_worse(NONE, UTD), NONE);
	assert_true(fence_policy_connected("Connected"));
	assert_true(fence_policy_connected("SyncSource"));
	assert_true(fence_policy_connected("Ahead"));
	assert_false(fence_policy_connected("WFConnection"));
	assert_false(fence_policy_connected("StandAlone"));
	assert_false(fence_policy_connected(NULL));
	assert_string_equal(fence_policy_role("pacemaker-3.9"), "Promoted");
	assert_string_equal(fence_policy_role("pacemaker-3.7"), "Promoted");
	assert_string_equal(fence_policy_role("pacemaker-3.6"), "Master");
	assert_string_equal(fence_policy_role("pacemaker-2.10"), "Master");
	assert_string_equal(fence_policy_role("pacemaker-next"), "Promoted");
	assert_string_equal(fence_policy_role(NULL), "Promoted");
	assert_true(fence_policy_same_role("Master", "Promoted"));
	assert_true(fence_policy_same_role("Slave", "Unpromoted"));
	assert_false(fence_policy_same_role("Promoted", "Started"));
}

static void test_ids(void **state)
{
	char buf[64], big[600];

	(void)state;
	assert_int_equal(fence_policy_id("mysql", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "tandem-fence-mysql");
	assert_int_equal(fence_policy_id("r 0/x:y", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "tandem-fence-r_0_x_y");
	assert_int_equal(fence_policy_id("", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fence_policy_id(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fence_policy_id("a-rather-long-resource-name-that-does-not-fit-in-64-bytes",
					 buf, sizeof(buf)),
			 -ENAMETOOLONG);
	/* cib-examples/fencing.xml's expression id */
	assert_int_equal(fence_policy_expr_id("tandem-fence-mysql", "alice", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "tandem-fence-mysql-expr-alice");
	assert_int_equal(fence_policy_expr_id("tandem-fence-r0", "node1.example.com", big,
					      sizeof(big)),
			 0);
	assert_string_equal(big, "tandem-fence-r0-expr-node1.example.com");
	assert_int_equal(fence_policy_expr_id("tandem-fence-r0", "", buf, sizeof(buf)), -EINVAL);
}

/* ------------------------------------------------------------ compare */

static struct fence_constraint fc(const char *rsc, const char *role, bool forbids,
				  const char *a, const char *b)
{
	struct fence_constraint c = {0};

	snprintf(c.rsc, sizeof(c.rsc), "%s", rsc);
	snprintf(c.role, sizeof(c.role), "%s", role);
	c.forbids = forbids;
	if (a)
		snprintf(c.allowed[c.n_allowed++], sizeof(c.allowed[0]), "%s", a);
	if (b)
		snprintf(c.allowed[c.n_allowed++], sizeof(c.allowed[0]), "%s", b);
	return c;
}

static void test_compare(void **state)
{
	struct fence_constraint want = fc("mysql-data-clone", "Promoted", true, "alice", NULL);
	static const struct {
		const char *rsc, *role;
		bool forbids;
		const char *a, *b;
		enum fence_have have;
	} rows[] = {
		{"mysql-data-clone", "Promoted", true, "alice", NULL, H_SAME},
		{"mysql-data-clone", "Master", true, "ALICE", NULL, H_SAME},
		{"mysql-data-clone", "Promoted", true, "bob", "alice", H_WIDER},
		{"mysql-data-clone", "Promoted", true, "bob", NULL, H_OTHER},
		{"mysql-data-clone", "Promoted", true, NULL, NULL, H_OTHER},
		{"mysql-data-clone", "Promoted", false, "alice", NULL, H_OTHER},
		{"mysql-data-clone", "Started", true, "alice", NULL, H_OTHER},
		{"other-clone", "Promoted", true, "alice", NULL, H_OTHER},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		struct fence_constraint have =
			fc(rows[i].rsc, rows[i].role, rows[i].forbids, rows[i].a, rows[i].b);

		if (fence_policy_compare(&have, &want, "alice") != rows[i].have)
			fail_msg("row %zu: got %d", i, fence_policy_compare(&have, &want, "alice"));
	}
	assert_true(fence_policy_allows(&want, "alice"));
	assert_false(fence_policy_allows(&want, "bob"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify), cmocka_unit_test(test_timed_out),
		cmocka_unit_test(test_decide),	 cmocka_unit_test(test_unfence),
		cmocka_unit_test(test_stale),	 cmocka_unit_test(test_names),
		cmocka_unit_test(test_ids),	 cmocka_unit_test(test_compare),
	};

	return cmocka_run_group_tests_name("fence-policy", tests, NULL, NULL);
}
