/* Unit tests for arb-policy, the arbiter's decision tables
 * (doc/arbiter.md §6). Every row of the doc's tables is a row here, named
 * "§6.N row K: ..." after its table (K counts from the table's first row);
 * the edge cases the tables leave open follow, named "edge: ...". The
 * split-brain verdict is also checked for symmetry: both orders of the
 * two records give one verdict, over every policy and a grid of facts. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "arb-policy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ §2 freshness */

static void test_fresh(void **state)
{
	static const struct {
		uint64_t age;
		uint32_t token;
		bool member, want;
	} rows[] = {
		{0, 1000, false, true},       {1999, 1000, false, true}, /* < 2 x token */
		{2000, 1000, false, false},   {60000, 1000, true, true}, /* a member's */
		{1999, 0, false, true},       {2000, 0, false, false},   /* 0: the default */
		{9999, 5000, false, true},    {10000, 5000, false, false},
		{UINT64_MAX, UINT32_MAX, false, false},
		{(uint64_t)UINT32_MAX * 2 - 1, UINT32_MAX, false, true}, /* no overflow */
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++)
		if (arb_policy_fresh(rows[i].age, rows[i].token, rows[i].member) != rows[i].want)
			fail_msg("row %zu: age %llu token %u member %d", i,
				 (unsigned long long)rows[i].age, rows[i].token, rows[i].member);
	assert_int_equal(arb_policy_rec_of(false, 0, 1000, true), ARB_POLICY_REC_NONE);
	assert_int_equal(arb_policy_rec_of(true, 5000, 1000, true), ARB_POLICY_REC_FRESH);
	assert_int_equal(arb_policy_rec_of(true, 500, 1000, false), ARB_POLICY_REC_FRESH);
	assert_int_equal(arb_policy_rec_of(true, 5000, 1000, false), ARB_POLICY_REC_STALE);
}

/* ------------------------------------------------------------ §6.1 fence-peer */

#define Q true
#define NOQ false
#define MEM ARB_POLICY_NODE_MEMBER
#define DOWN ARB_POLICY_NODE_DOWN
#define ABSENT ARB_POLICY_NODE_ABSENT
#define NOCMAP ARB_POLICY_NODE_UNKNOWN
#define P_MEM ARB_POLICY_PROC_MEMBER
#define P_LEAVE ARB_POLICY_PROC_LEAVE
#define P_DIED ARB_POLICY_PROC_PROCDOWN
#define P_NEVER ARB_POLICY_PROC_NEVER
#define A_NOT ARB_POLICY_ASK_NOT_SENT
#define A_SENT ARB_POLICY_ASK_SENT
#define A_ANS ARB_POLICY_ASK_ANSWERED
#define A_DL ARB_POLICY_ASK_DEADLINE
#define DC ARB_POLICY_DONT_CARE
#define RO ARB_POLICY_RESOURCE_ONLY
#define RS ARB_POLICY_RESOURCE_AND_STONITH
#define S_NOT ARB_POLICY_STONITH_NOT_KICKED
#define S_KICK ARB_POLICY_STONITH_KICKED
#define S_OK ARB_POLICY_STONITH_CONFIRMED
#define S_DL ARB_POLICY_STONITH_DEADLINE
#define FAIL ARB_POLICY_FENCE_FAIL
#define ASK ARB_POLICY_FENCE_ASK
#define WAIT ARB_POLICY_FENCE_WAIT
#define FB ARB_POLICY_FENCE_FALLBACK
#define CONSTR ARB_POLICY_FENCE_CONSTRAINT
#define STONITH ARB_POLICY_FENCE_STONITH
#define DONE ARB_POLICY_FENCE_DONE
#define X_FB ARB_POLICY_EXIT_FALLBACK
#define X_PEND ARB_POLICY_EXIT_PENDING
#define HOW_S ARB_POLICY_HOW_STONITH
#define HOW_C ARB_POLICY_HOW_CONSTRAINT

struct fence_row {
	const char *name;
	struct arb_policy_fence_in in;
	enum arb_policy_fence_action act;
	int exit;
	unsigned int fenced;
};

static void run_fence_rows(const struct fence_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct arb_policy_fence_out out = {0};
		int rc = arb_policy_fence(&rows[i].in, &out);

		if (rc != 0)
			fail_msg("%s: rc %d", rows[i].name, rc);
		assert_non_null(out.why);
		if (out.action != rows[i].act || out.exit != rows[i].exit ||
		    out.fenced != rows[i].fenced)
			fail_msg("%s: got action %d exit %d fenced %u (%s), want %d %d %u",
				 rows[i].name, out.action, out.exit, out.fenced, out.why,
				 rows[i].act, rows[i].exit, rows[i].fenced);
	}
}

static void test_fence(void **state)
{
	/* in: quorate, node, proc, ask, answer, fencing, stonith */
	static const struct fence_row rows[] = {
		/* the table, row by row; "any" expanded where it is cheap */
		{"§6.1 row 1: no quorum", {NOQ, MEM, P_MEM, A_NOT, 0, RO, S_NOT}, FAIL, 1, 0},
		{"§6.1 row 1: no quorum, NODEDOWN, stonith",
		 {NOQ, DOWN, P_NEVER, A_NOT, 0, RS, S_NOT},
		 FAIL, 1, 0},
		{"§6.1 row 1: no quorum, answered", {NOQ, MEM, P_MEM, A_ANS, 4, DC, S_NOT}, FAIL, 1,
		 0},
		{"§6.1 row 1: no quorum, unknown to cmap",
		 {NOQ, NOCMAP, P_NEVER, A_NOT, 0, RO, S_NOT},
		 FAIL, 1, 0},
		{"§6.1 row 2: ask", {Q, MEM, P_MEM, A_NOT, 0, RO, S_NOT}, ASK, X_PEND, 0},
		{"§6.1 row 2: ask, dont-care", {Q, MEM, P_MEM, A_NOT, 0, DC, S_NOT}, ASK, X_PEND,
		 0},
		{"§6.1 row 2: ask, stonith", {Q, MEM, P_MEM, A_NOT, 0, RS, S_NOT}, ASK, X_PEND, 0},
		{"§6.1 row 2: waiting", {Q, MEM, P_MEM, A_SENT, 0, RO, S_NOT}, WAIT, X_PEND, 0},
		{"§6.1 row 2: answer 4 Outdated", {Q, MEM, P_MEM, A_ANS, 4, RO, S_NOT}, DONE, 4, 0},
		{"§6.1 row 2: answer 3 Inconsistent", {Q, MEM, P_MEM, A_ANS, 3, RS, S_NOT}, DONE, 3,
		 0},
		{"§6.1 row 2: answer 6 Primary", {Q, MEM, P_MEM, A_ANS, 6, DC, S_NOT}, DONE, 6, 0},
		{"§6.1 row 3: no answer by the deadline", {Q, MEM, P_MEM, A_DL, 0, RO, S_NOT}, FB,
		 X_FB, 0},
		{"§6.1 row 3: deadline, stonith", {Q, MEM, P_MEM, A_DL, 0, RS, S_NOT}, FB, X_FB, 0},
		{"§6.1 row 4: arbiter LEAVE", {Q, MEM, P_LEAVE, A_NOT, 0, RO, S_NOT}, FB, X_FB, 0},
		{"§6.1 row 4: arbiter PROCDOWN", {Q, MEM, P_DIED, A_NOT, 0, RS, S_NOT}, FB, X_FB,
		 0},
		{"§6.1 row 4: arbiter never joined", {Q, MEM, P_NEVER, A_NOT, 0, DC, S_NOT}, FB,
		 X_FB, 0},
		{"§6.1 row 5: NODEDOWN, resource-only", {Q, DOWN, P_NEVER, A_NOT, 0, RO, S_NOT},
		 CONSTR, 4, HOW_C},
		{"§6.1 row 6: NODEDOWN, stonith: kick", {Q, DOWN, P_NEVER, A_NOT, 0, RS, S_NOT},
		 STONITH, X_PEND, 0},
		{"§6.1 row 6: NODEDOWN, stonith: waiting", {Q, DOWN, P_NEVER, A_NOT, 0, RS, S_KICK},
		 WAIT, X_PEND, 0},
		{"§6.1 row 6: NODEDOWN, stonith confirmed", {Q, DOWN, P_NEVER, A_NOT, 0, RS, S_OK},
		 DONE, 7, HOW_S},
		{"§6.1 row 6: NODEDOWN, stonith not confirmed",
		 {Q, DOWN, P_NEVER, A_NOT, 0, RS, S_DL}, DONE, 5, 0},
		{"§6.1 row 7: unknown to cmap", {Q, NOCMAP, P_NEVER, A_NOT, 0, RO, S_NOT}, FB, X_FB,
		 0},
		{"§6.1 row 7: unknown to cmap, stonith", {Q, NOCMAP, P_MEM, A_NOT, 0, RS, S_NOT},
		 FB, X_FB, 0},
		/* the target left before it answered: decided again by the rows */
		{"edge: asked, then NODEDOWN", {Q, DOWN, P_NEVER, A_SENT, 0, RO, S_NOT}, CONSTR, 4,
		 HOW_C},
		{"edge: asked, then NODEDOWN, stonith", {Q, DOWN, P_NEVER, A_SENT, 0, RS, S_NOT},
		 STONITH, X_PEND, 0},
		{"edge: asked, then PROCDOWN", {Q, MEM, P_DIED, A_SENT, 0, RO, S_NOT}, FB, X_FB, 0},
		{"edge: deadline after NODEDOWN", {Q, DOWN, P_NEVER, A_DL, 0, RO, S_NOT}, CONSTR, 4,
		 HOW_C},
		/* an answer delivered before the target left stands */
		{"edge: answered, then NODEDOWN", {Q, DOWN, P_NEVER, A_ANS, 4, RS, S_NOT}, DONE, 4,
		 0},
		{"edge: answered, then LEAVE", {Q, MEM, P_LEAVE, A_ANS, 6, RO, S_NOT}, DONE, 6, 0},
		/* no row in §6.1: fall back */
		{"edge: NODEDOWN, dont-care", {Q, DOWN, P_NEVER, A_NOT, 0, DC, S_NOT}, FB, X_FB, 0},
		{"edge: in cmap, never in the ring", {Q, ABSENT, P_NEVER, A_NOT, 0, RS, S_NOT}, FB,
		 X_FB, 0},
		/* resource-only ignores the fencer's state */
		{"edge: NODEDOWN, resource-only, stray stonith state",
		 {Q, DOWN, P_NEVER, A_NOT, 0, RO, S_OK}, CONSTR, 4, HOW_C},
	};

	(void)state;
	run_fence_rows(rows, N(rows));
}

static void test_fence_bad(void **state)
{
	static const struct arb_policy_fence_in bad[] = {
		{Q, (enum arb_policy_node)4, P_MEM, A_NOT, 0, RO, S_NOT},
		{Q, MEM, (enum arb_policy_proc)4, A_NOT, 0, RO, S_NOT},
		{Q, MEM, P_MEM, (enum arb_policy_ask)4, 0, RO, S_NOT},
		{Q, MEM, P_MEM, A_NOT, 0, (enum arb_policy_fencing)3, S_NOT},
		{Q, MEM, P_MEM, A_NOT, 0, RO, (enum arb_policy_stonith)4},
		{Q, MEM, P_MEM, A_ANS, 5, RO, S_NOT}, /* 5 is not an OUTDATE_ACK result */
		{Q, MEM, P_MEM, A_ANS, 0, RO, S_NOT},
		{Q, MEM, P_MEM, A_ANS, 7, RO, S_NOT},
	};
	struct arb_policy_fence_out out = {0};
	size_t i;

	(void)state;
	for (i = 0; i < N(bad); i++) {
		out.why = "untouched";
		assert_int_equal(arb_policy_fence(&bad[i], &out), -EINVAL);
		assert_string_equal(out.why, "untouched");
	}
	assert_int_equal(arb_policy_fence(NULL, &out), -EINVAL);
	assert_int_equal(arb_policy_fence(&bad[0], NULL), -EINVAL);
}

#define PRI ROLE_PRIMARY
#define SEC ROLE_SECONDARY
#define UNK ROLE_UNKNOWN
#define R_NOT ARB_POLICY_RUN_NOT_YET
#define R_DONE ARB_POLICY_RUN_DONE
#define R_REF ARB_POLICY_RUN_REFUSED
#define R_FAIL ARB_POLICY_RUN_FAILED
#define SEND ARB_POLICY_ACK_SEND
#define OUTDATE ARB_POLICY_ACK_OUTDATE
#define SILENT ARB_POLICY_ACK_NONE

static void test_outdate(void **state)
{
	static const struct {
		const char *name;
		struct arb_policy_outdate_in in;
		enum arb_policy_ack act;
		int result;
	} rows[] = {
		{"§6.1 target: Primary", {PRI, DISK_UPTODATE, R_NOT}, SEND, 6},
		{"§6.1 target: Primary, Diskless (Primary first)", {PRI, DISK_DISKLESS, R_NOT},
		 SEND, 6},
		{"§6.1 target: Inconsistent", {SEC, DISK_INCONSISTENT, R_NOT}, SEND, 3},
		{"§6.1 target: Diskless", {SEC, DISK_DISKLESS, R_NOT}, SEND, 3},
		{"§6.1 target: Failed", {SEC, DISK_FAILED, R_NOT}, SEND, 3},
		{"§6.1 target: Negotiating", {UNK, DISK_NEGOTIATING, R_NOT}, SEND, 3},
		{"§6.1 target: UpToDate: outdate", {SEC, DISK_UPTODATE, R_NOT}, OUTDATE, 0},
		{"§6.1 target: Consistent: outdate", {SEC, DISK_CONSISTENT, R_NOT}, OUTDATE, 0},
		{"§6.1 target: Outdated already: outdate", {SEC, DISK_OUTDATED, R_NOT}, OUTDATE, 0},
		{"§6.1 target: role unknown: outdate", {UNK, DISK_UPTODATE, R_NOT}, OUTDATE, 0},
		{"§6.1 target: then Outdated", {SEC, DISK_OUTDATED, R_DONE}, SEND, 4},
		{"§6.1 target: tandemd refused", {PRI, DISK_UPTODATE, R_REF}, SEND, 6},
		{"edge: refused, role not known", {UNK, DISK_UPTODATE, R_REF}, SEND, 6},
		{"edge: done, then Inconsistent", {SEC, DISK_INCONSISTENT, R_DONE}, SEND, 3},
		{"edge: done, still UpToDate", {SEC, DISK_UPTODATE, R_DONE}, SILENT, 0},
		{"edge: outdate failed", {SEC, DISK_UPTODATE, R_FAIL}, SILENT, 0},
	};
	static const struct arb_policy_outdate_in bad[] = {
		{(enum state_role)3, DISK_UPTODATE, R_NOT},
		{SEC, (enum state_disk)9, R_NOT},
		{SEC, DISK_UPTODATE, (enum arb_policy_run)4},
	};
	struct arb_policy_outdate_out out;
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		memset(&out, 0, sizeof(out));
		assert_int_equal(arb_policy_outdate(&rows[i].in, &out), 0);
		assert_non_null(out.why);
		if (out.action != rows[i].act || out.result != rows[i].result)
			fail_msg("%s: got %d result %d (%s)", rows[i].name, out.action, out.result,
				 out.why);
	}
	for (i = 0; i < N(bad); i++)
		assert_int_equal(arb_policy_outdate(&bad[i], &out), -EINVAL);
	assert_int_equal(arb_policy_outdate(NULL, &out), -EINVAL);
}

/* The whole exchange: the requester asks, the target answers from its
 * facts, the requester decides on the delivered answer. */
static void test_fence_exchange(void **state)
{
	static const struct {
		struct arb_policy_outdate_in target; /* before its outdate */
		enum state_disk after;               /* its disk after outdate, if run */
		enum arb_policy_run run;
		int exit;
	} rows[] = {
		{{SEC, DISK_UPTODATE, R_NOT}, DISK_OUTDATED, R_DONE, 4},
		{{SEC, DISK_UPTODATE, R_NOT}, DISK_UPTODATE, R_REF, 6},
		{{SEC, DISK_INCONSISTENT, R_NOT}, DISK_INCONSISTENT, R_NOT, 3},
		{{PRI, DISK_UPTODATE, R_NOT}, DISK_UPTODATE, R_NOT, 6},
		{{SEC, DISK_UPTODATE, R_NOT}, DISK_UPTODATE, R_FAIL, X_FB},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		struct arb_policy_fence_in req = {Q, MEM, P_MEM, A_NOT, 0, RO, S_NOT};
		struct arb_policy_fence_out fo;
		struct arb_policy_outdate_in t = rows[i].target;
		struct arb_policy_outdate_out ao;

		assert_int_equal(arb_policy_fence(&req, &fo), 0);
		assert_int_equal(fo.action, ASK);
		assert_int_equal(arb_policy_outdate(&t, &ao), 0);
		if (ao.action == OUTDATE) {
			t.disk = rows[i].after;
			t.run = rows[i].run;
			assert_int_equal(arb_policy_outdate(&t, &ao), 0);
		}
		if (ao.action == SEND) {
			req.ask = A_ANS;
			req.answer = ao.result;
		} else {
			req.ask = A_DL; /* nothing came */
		}
		assert_int_equal(arb_policy_fence(&req, &fo), 0);
		if (fo.exit != rows[i].exit)
			fail_msg("row %zu: exit %d (%s), want %d", i, fo.exit, fo.why,
				 rows[i].exit);
	}
}

/* ------------------------------------------------------------ §6.2 wfc */

#define FRESH ARB_POLICY_REC_FRESH
#define STALE ARB_POLICY_REC_STALE
#define NOREC ARB_POLICY_REC_NONE
#define W_UNK ARB_POLICY_WFC_UNKNOWN
#define W_DEF ARB_POLICY_WFC_DEFAULT
#define W_DEGR ARB_POLICY_WFC_DEGRADED
#define W_OUTD ARB_POLICY_WFC_OUTDATED

static void test_wfc(void **state)
{
	/* in: node, fenced, rec, disk, up */
	static const struct {
		const char *name;
		struct arb_policy_wfc_in in;
		enum arb_policy_wfc want;
	} rows[] = {
		{"§6.2 row 1: known fenced", {DOWN, true, STALE, DISK_UPTODATE, true}, W_DEGR},
		{"§6.2 row 1: known fenced, member again", {MEM, true, FRESH, DISK_UPTODATE, true},
		 W_DEGR},
		{"§6.2 row 2: NODEDOWN", {DOWN, false, STALE, DISK_UPTODATE, true}, W_DEGR},
		{"§6.2 row 2: NODEDOWN, record fresh still",
		 {DOWN, false, FRESH, DISK_OUTDATED, true},
		 W_DEGR},
		{"§6.2 row 2: never in the ring", {ABSENT, false, NOREC, DISK_DISKLESS, false},
		 W_DEGR},
		{"§6.2 row 3: Outdated", {MEM, false, FRESH, DISK_OUTDATED, true}, W_OUTD},
		{"§6.2 row 3: Outdated, not up", {MEM, false, FRESH, DISK_OUTDATED, false}, W_OUTD},
		{"§6.2 row 4: up", {MEM, false, FRESH, DISK_UPTODATE, true}, W_DEF},
		{"§6.2 row 4: up, Inconsistent", {MEM, false, FRESH, DISK_INCONSISTENT, true},
		 W_DEF},
		{"§6.2 row 5: no record", {MEM, false, NOREC, DISK_DISKLESS, false}, W_DEF},
		{"§6.2 row 5: not up yet", {MEM, false, FRESH, DISK_DISKLESS, false}, W_DEF},
		{"edge: stale record of a member node", {MEM, false, STALE, DISK_OUTDATED, true},
		 W_DEF},
		{"edge: not in cmap", {NOCMAP, false, NOREC, DISK_DISKLESS, false}, W_UNK},
		{"edge: not in cmap, fenced", {NOCMAP, true, FRESH, DISK_OUTDATED, true}, W_UNK},
	};
	static const struct arb_policy_wfc_in bad[] = {
		{(enum arb_policy_node)4, false, NOREC, DISK_DISKLESS, false},
		{MEM, false, (enum arb_policy_rec)3, DISK_DISKLESS, false},
		{MEM, false, FRESH, (enum state_disk)9, false},
	};
	struct arb_policy_wfc_out out;
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		assert_int_equal(arb_policy_wfc(&rows[i].in, &out), 0);
		assert_non_null(out.why);
		if (out.wfc != rows[i].want)
			fail_msg("%s: got %d (%s)", rows[i].name, out.wfc, out.why);
	}
	for (i = 0; i < N(bad); i++)
		assert_int_equal(arb_policy_wfc(&bad[i], &out), -EINVAL);
	assert_string_equal(arb_policy_wfc_name(W_DEF), "default");
	assert_string_equal(arb_policy_wfc_name(W_DEGR), "degraded");
	assert_string_equal(arb_policy_wfc_name(W_OUTD), "outdated");
	assert_null(arb_policy_wfc_name(W_UNK));
}

/* ------------------------------------------------------------ §6.3 split brain */

#define DIS SBPOLICY_DISCONNECT
#define YNG SBPOLICY_DISCARD_YOUNGER_PRI
#define OLD SBPOLICY_DISCARD_OLDER_PRI
#define ZERO SBPOLICY_DISCARD_ZERO_CHG
#define LEAST SBPOLICY_DISCARD_LEAST_CHG
#define LOCAL SBPOLICY_DISCARD_LOCAL
#define REMOTE SBPOLICY_DISCARD_REMOTE
#define CONS SBPOLICY_CONSENSUS
#define DSEC SBPOLICY_DISCARD_SECONDARY
#define CALL SBPOLICY_CALL_HELPER
#define VIOL SBPOLICY_VIOLENTLY
#define NODE SBPOLICY_DISCARD_NODE

#define POS(ring, s) {(ring), (s)}
#define P0 POS(0, 0)

/* node: id, role, since, changes, current */
struct sb_row {
	const char *name;
	struct arb_policy_sb_node a, b;
	enum sbpolicy p0, p1, p2;
	uint32_t discard_node, self;
	uint32_t loser;
	enum sbpolicy policy; /* the one that decided */
	bool pri_lost, config_error;
};

static void check_sb(const struct sb_row *r, bool swapped, const struct arb_policy_sb_out *o)
{
	if (o->loser != r->loser || o->policy != r->policy || o->pri_lost != r->pri_lost ||
	    o->config_error != r->config_error)
		fail_msg("%s%s: got loser %u policy %d pri_lost %d config_error %d (%s), "
			 "want %u %d %d %d",
			 r->name, swapped ? " (swapped)" : "", o->loser, o->policy, o->pri_lost,
			 o->config_error, o->why, r->loser, r->policy, r->pri_lost,
			 r->config_error);
}

static void run_sb_rows(const struct sb_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sb_row *r = &rows[i];
		struct arb_policy_sb_in in = {{r->a, r->b}, r->p0, r->p1, r->p2, r->discard_node,
					      r->self ? r->self : r->a.id};
		struct arb_policy_sb_out o1, o2;
		int rc;

		rc = arb_policy_sb(&in, &o1);
		if (rc)
			fail_msg("%s: rc %d", r->name, rc);
		check_sb(r, false, &o1);
		assert_true(strlen(o1.why) > 0);
		assert_null(strchr(o1.why, '\n'));
		/* the DRBD wording of one node's view is gone */
		if (strstr(o1.why, "this node") || strstr(o1.why, "the peer") ||
		    strstr(o1.why, "at the split"))
			fail_msg("%s: reason speaks as one node: %s", r->name, o1.why);
		in.node[0] = r->b;
		in.node[1] = r->a;
		assert_int_equal(arb_policy_sb(&in, &o2), 0);
		check_sb(r, true, &o2);
		assert_string_equal(o1.why, o2.why);
		assert_int_equal(o1.id_a, o2.id_a);
		assert_int_equal(o1.uuid_b, o2.uuid_b);
	}
}

static void test_sb(void **state)
{
	/* node: id, role, primary_since (ring, s), changes, current UUID */
	static const struct sb_row rows[] = {
		/* row 1: disconnect, in each option */
		{"§6.3 row 1: disconnect, 0pri", {1, SEC, P0, 5, 0x100}, {2, SEC, P0, 3, 0x200},
		 DIS, DIS, DIS, 0, 0, 0, DIS, false, false},
		{"§6.3 row 1: disconnect, 1pri", {1, PRI, POS(7, 2), 5, 0x100},
		 {2, SEC, P0, 3, 0x200},
		 LEAST, DIS, DIS, 0, 0, 0, DIS, false, false},
		{"§6.3 row 1: disconnect, 2pri", {1, PRI, POS(7, 2), 5, 0x100},
		 {2, PRI, POS(7, 9), 3, 0x200}, LEAST, DIS, DIS, 0, 0, 0, DIS, false, false},
		/* row 2: discard-younger-primary */
		{"§6.3 row 2: younger: the later Primary loses", {1, PRI, POS(7, 2), 0, 0x100},
		 {2, PRI, POS(7, 9), 9, 0x200}, YNG, DIS, VIOL, 0, 0, 2, VIOL, false, false},
		{"§6.3 row 2: younger: ring before n", {1, PRI, POS(8, 1), 0, 0x100},
		 {2, PRI, POS(7, 100), 9, 0x200}, YNG, DIS, VIOL, 0, 0, 1, VIOL, false, false},
		{"§6.3 row 2: younger: neither Primary -> least-changes", {1, SEC, P0, 5, 0x100},
		 {2, SEC, P0, 3, 0x200}, YNG, DIS, DIS, 0, 0, 2, YNG, false, false},
		/* row 3: discard-older-primary */
		{"§6.3 row 3: older: the earlier Primary loses", {1, PRI, POS(7, 2), 0, 0x100},
		 {2, PRI, POS(7, 9), 9, 0x200}, OLD, DIS, VIOL, 0, 0, 1, VIOL, false, false},
		{"§6.3 row 3: older: neither -> least-changes", {1, SEC, P0, 3, 0x100},
		 {2, SEC, P0, 5, 0x200}, OLD, DIS, DIS, 0, 0, 1, OLD, false, false},
		/* row 4: discard-zero-changes */
		{"§6.3 row 4: zero: the one with 0 changes", {1, SEC, P0, 5, 0x100},
		 {2, SEC, P0, 0, 0x200}, ZERO, DIS, DIS, 0, 0, 2, ZERO, false, false},
		{"§6.3 row 4: zero: both 0 -> lower id", {1, SEC, P0, 0, 0x100},
		 {2, SEC, P0, 0, 0x200}, ZERO, DIS, DIS, 0, 0, 1, ZERO, false, false},
		{"§6.3 row 4: zero: neither -> none", {1, SEC, P0, 5, 0x100},
		 {2, SEC, P0, 3, 0x200},
		 ZERO, DIS, DIS, 0, 0, 0, ZERO, false, false},
		/* row 5: discard-least-changes */
		{"§6.3 row 5: least: fewer changes loses", {1, SEC, P0, 5, 0x100},
		 {2, SEC, P0, 3, 0x200}, LEAST, DIS, DIS, 0, 0, 2, LEAST, false, false},
		{"§6.3 row 5: least: equal -> lower id", {1, SEC, P0, 4, 0x100},
		 {2, SEC, P0, 4, 0x200}, LEAST, DIS, DIS, 0, 0, 1, LEAST, false, false},
		/* row 6: discard-node-NAME */
		{"§6.3 row 6: discard-node-2", {1, SEC, P0, 0, 0x100}, {2, SEC, P0, 9, 0x200}, NODE,
		 DIS, DIS, 2, 0, 2, NODE, false, false},
		{"§6.3 row 6: discard-node-1", {1, SEC, P0, 9, 0x100}, {2, SEC, P0, 0, 0x200}, NODE,
		 DIS, DIS, 1, 0, 1, NODE, false, false},
		/* row 7: discard-secondary */
		{"§6.3 row 7: discard-secondary", {1, PRI, POS(7, 2), 0, 0x100},
		 {2, SEC, P0, 9, 0x200}, LEAST, DSEC, DIS, 0, 0, 2, DSEC, false, false},
		{"§6.3 row 7: discard-secondary, the other way", {1, SEC, P0, 9, 0x100},
		 {2, PRI, POS(7, 2), 0, 0x200}, LEAST, DSEC, DIS, 0, 0, 1, DSEC, false, false},
		/* row 8: consensus */
		{"§6.3 row 8: consensus: 0pri names the Secondary", {1, PRI, POS(7, 2), 9, 0x100},
		 {2, SEC, P0, 3, 0x200}, LEAST, CONS, DIS, 0, 0, 2, CONS, false, false},
		{"§6.3 row 8: consensus: 0pri names the Primary -> none",
		 {1, PRI, POS(7, 2), 3, 0x100}, {2, SEC, P0, 9, 0x200}, LEAST, CONS, DIS, 0, 0, 0,
		 CONS, false, false},
		{"§6.3 row 8: consensus: 0pri gives none", {1, PRI, POS(7, 2), 3, 0x100},
		 {2, SEC, P0, 9, 0x200}, ZERO, CONS, DIS, 0, 0, 0, CONS, false, false},
		/* row 9: call-pri-lost-after-sb */
		{"§6.3 row 9: call-pri-lost, 1pri: the Primary loses",
		 {1, PRI, POS(7, 2), 3, 0x100}, {2, SEC, P0, 9, 0x200}, LEAST, CALL, DIS, 0, 0, 1,
		 CALL, true, false},
		{"§6.3 row 9: call-pri-lost, 1pri: the Secondary loses",
		 {1, PRI, POS(7, 2), 9, 0x100}, {2, SEC, P0, 3, 0x200}, LEAST, CALL, DIS, 0, 0, 2,
		 CALL, false, false},
		{"§6.3 row 9: call-pri-lost, 2pri: the higher id Primary loses",
		 {1, PRI, POS(7, 2), 9, 0x100}, {2, PRI, POS(7, 3), 3, 0x200}, LEAST, DIS, CALL, 0,
		 0, 2, CALL, true, false},
		{"§6.3 row 9: call-pri-lost, 2pri, 0pri none", {1, PRI, POS(7, 2), 9, 0x100},
		 {2, PRI, POS(7, 3), 3, 0x200}, DIS, DIS, CALL, 0, 0, 0, CALL, false, false},
		/* row 10: violently-as0p */
		{"§6.3 row 10: violently, 1pri: a Primary included", {1, PRI, POS(7, 2), 3, 0x100},
		 {2, SEC, P0, 9, 0x200}, LEAST, VIOL, DIS, 0, 0, 1, VIOL, false, false},
		{"§6.3 row 10: violently, 2pri", {1, PRI, POS(7, 2), 9, 0x100},
		 {2, PRI, POS(7, 3), 3, 0x200}, LEAST, DIS, VIOL, 0, 0, 2, VIOL, false, false},

		/* the clock skew. primary_since is (ring, wall clock s).
		 * Node 2 became Primary 3 s after node 1, but its clock runs 5 s
		 * behind: within one ring the clocks decide, and they name node 1
		 * as the younger. DRBD's two sides could each read it their own
		 * way; here the one verdict is the same in both orders of the
		 * records, so both nodes apply the same (if mistaken) loser. */
		{"edge: clock skew, same ring, younger", {1, PRI, POS(12, 1000005), 100, 0x100},
		 {2, PRI, POS(12, 1000003), 1, 0x200}, YNG, DIS, VIOL, 0, 0, 1, VIOL, false, false},
		{"edge: clock skew, same ring, older", {1, PRI, POS(12, 1000005), 100, 0x100},
		 {2, PRI, POS(12, 1000003), 1, 0x200}, OLD, DIS, VIOL, 0, 0, 2, VIOL, false, false},
		{"edge: clock skew, same ring, call-pri-lost", {1, PRI, POS(12, 1000005), 1, 0x100},
		 {2, PRI, POS(12, 1000003), 100, 0x200}, YNG, DIS, CALL, 0, 0, 1, CALL, true,
		 false},
		/* a later ring is younger whatever the clocks say */
		{"edge: clock skew, later ring, earlier clock",
		 {1, PRI, POS(13, 1000000), 100, 0x100},
		 {2, PRI, POS(12, 1999999), 1, 0x200}, YNG, DIS, VIOL, 0, 0, 1, VIOL, false, false},
		{"edge: clock skew, later ring, older-primary",
		 {1, PRI, POS(13, 1000000), 100, 0x100},
		 {2, PRI, POS(12, 1999999), 1, 0x200}, OLD, DIS, VIOL, 0, 0, 2, VIOL, false, false},
		/* (0, 0) compares smallest: one Primary is the younger */
		{"edge: younger, one Primary (the doc's literal order)",
		 {1, PRI, POS(7, 2), 0, 0x100}, {2, SEC, P0, 9, 0x200}, YNG, VIOL, DIS, 0, 0, 1,
		 VIOL, false, false},
		{"edge: older, one Primary", {1, PRI, POS(7, 2), 0, 0x100}, {2, SEC, P0, 9, 0x200},
		 OLD, VIOL, DIS, 0, 0, 2, VIOL, false, false},
		/* equal primary_since (one ring number, one second): no decision */
		{"edge: equal primary_since -> least-changes", {1, PRI, POS(7, 2), 3, 0x100},
		 {2, PRI, POS(7, 2), 9, 0x200}, YNG, DIS, VIOL, 0, 0, 1, VIOL, false, false},
		/* node ids far apart, the lower one loses ties */
		{"edge: large ids, tie", {0xfffffffe, SEC, P0, 7, 0x100}, {3, SEC, P0, 7, 0x200},
		 LEAST, DIS, DIS, 0, 0, 3, LEAST, false, false},
		/* discard-local and -remote are the decider's words */
		{"edge: discard-local on node 2", {1, SEC, P0, 0, 0x100}, {2, SEC, P0, 9, 0x200},
		 LOCAL, DIS, DIS, 0, 2, 2, LOCAL, false, false},
		{"edge: discard-local on node 1", {1, SEC, P0, 0, 0x100}, {2, SEC, P0, 9, 0x200},
		 LOCAL, DIS, DIS, 0, 1, 1, LOCAL, false, false},
		{"edge: discard-remote on node 1", {1, SEC, P0, 0, 0x100}, {2, SEC, P0, 9, 0x200},
		 REMOTE, DIS, DIS, 0, 1, 2, REMOTE, false, false},
		{"edge: discard-node under violently, 2pri", {1, PRI, POS(7, 2), 0, 0x100},
		 {2, PRI, POS(7, 3), 9, 0x200}, NODE, DIS, VIOL, 1, 0, 1, VIOL, false, false},
		/* configuration errors: none, flagged */
		{"edge: discard-node of a third node", {1, SEC, P0, 0, 0x100},
		 {2, SEC, P0, 9, 0x200},
		 NODE, DIS, DIS, 7, 0, 0, NODE, false, true},
		{"edge: a 1pri word in after-sb-0pri", {1, SEC, P0, 0, 0x100},
		 {2, SEC, P0, 9, 0x200},
		 CONS, DIS, DIS, 0, 0, 0, CONS, false, true},
		{"edge: a 0pri word in after-sb-2pri", {1, PRI, POS(7, 2), 0, 0x100},
		 {2, PRI, POS(7, 3), 9, 0x200}, LEAST, DIS, LEAST, 0, 0, 0, LEAST, false, true},
		{"edge: discard-secondary in after-sb-2pri", {1, PRI, POS(7, 2), 0, 0x100},
		 {2, PRI, POS(7, 3), 9, 0x200}, LEAST, DIS, DSEC, 0, 0, 0, DSEC, false, true},
		/* a role not known counts as not Primary */
		{"edge: Unknown role is not Primary", {1, UNK, P0, 5, 0x100},
		 {2, SEC, P0, 3, 0x200},
		 LEAST, DSEC, DIS, 0, 0, 2, LEAST, false, false},
		/* bit 0 of the UUIDs differs, the rest too */
		{"edge: UUIDs differ beyond bit 0", {1, SEC, P0, 5, 0x101}, {2, SEC, P0, 3, 0x200},
		 LEAST, DIS, DIS, 0, 0, 2, LEAST, false, false},
	};

	(void)state;
	run_sb_rows(rows, N(rows));
}

static void test_sb_reason(void **state)
{
	struct arb_policy_sb_in in = {
	    {{1, PRI, POS(7, 2), 0, 0x100}, {2, PRI, POS(7, 9), 9, 0x200}}, YNG, DIS, VIOL, 0, 1};
	struct arb_policy_sb_out o;

	(void)state;
	assert_int_equal(arb_policy_sb(&in, &o), 0);
	assert_int_equal(o.primaries, 2);
	assert_int_equal(o.id_a, 1);
	assert_int_equal(o.id_b, 2);
	assert_int_equal(o.uuid_a, 0x100);
	assert_int_equal(o.uuid_b, 0x200);
	assert_non_null(strstr(o.why, "node 1 has the smaller primary_since, node 2 the larger"));
	assert_non_null(strstr(o.why, "node 2's changes are discarded"));

	in.after_sb_0pri = LEAST;
	in.node[0].changes = in.node[1].changes = 4;
	assert_int_equal(arb_policy_sb(&in, &o), 0);
	assert_non_null(strstr(o.why, "tie broken by the lower node id"));

	in.after_sb_0pri = ZERO;
	in.after_sb_2pri = CALL;
	in.node[1].changes = 9;
	assert_int_equal(arb_policy_sb(&in, &o), 0);
	assert_int_equal(o.loser, 0);
	assert_non_null(strstr(o.why, "(4 on node 1, 9 on node 2)"));

	in.after_sb_0pri = LOCAL;
	in.self = 2;
	assert_int_equal(arb_policy_sb(&in, &o), 0);
	assert_int_equal(o.loser, 2);
	assert_true(o.pri_lost);
	assert_non_null(strstr(o.why, "discard-local of node 2"));
	assert_non_null(strstr(o.why, "node 2 is Primary: it gives up the role"));
	assert_null(strstr(o.why, "2 is 2"));

	in.after_sb_0pri = NODE;
	in.discard_node = 5;
	assert_int_equal(arb_policy_sb(&in, &o), 0);
	assert_true(o.config_error);
	assert_non_null(strstr(o.why, "discard-node-5: not one of the two nodes"));
}

static void test_sb_bad(void **state)
{
	static const struct arb_policy_sb_in bad[] = {
		/* equal ids, an id 0 */
		{{{1, SEC, P0, 0, 0x100}, {1, SEC, P0, 0, 0x200}}, LEAST, DIS, DIS, 0, 1},
		{{{0, SEC, P0, 0, 0x100}, {1, SEC, P0, 0, 0x200}}, LEAST, DIS, DIS, 0, 1},
		/* self not one of the two */
		{{{1, SEC, P0, 0, 0x100}, {2, SEC, P0, 0, 0x200}}, LEAST, DIS, DIS, 0, 3},
		{{{1, SEC, P0, 0, 0x100}, {2, SEC, P0, 0, 0x200}}, LEAST, DIS, DIS, 0, 0},
		/* one generation: not a split brain */
		{{{1, SEC, P0, 0, 0x100}, {2, SEC, P0, 0, 0x100}}, LEAST, DIS, DIS, 0, 1},
		{{{1, PRI, POS(1, 1), 0, 0x101}, {2, SEC, P0, 0, 0x100}}, LEAST, DIS, DIS, 0, 1},
		/* enums out of range */
		{{{1, SEC, P0, 0, 0x100}, {2, SEC, P0, 0, 0x200}}, (enum sbpolicy)12, DIS, DIS, 0,
		 1},
		{{{1, SEC, P0, 0, 0x100}, {2, SEC, P0, 0, 0x200}}, LEAST, (enum sbpolicy)99, DIS, 0,
		 1},
		{{{1, SEC, P0, 0, 0x100}, {2, SEC, P0, 0, 0x200}}, LEAST, DIS, (enum sbpolicy)-1, 0,
		 1},
		{{{1, (enum state_role)3, P0, 0, 0x100}, {2, SEC, P0, 0, 0x200}}, LEAST, DIS, DIS,
		 0, 1},
	};
	struct arb_policy_sb_out out;
	size_t i;

	(void)state;
	for (i = 0; i < N(bad); i++) {
		out.loser = 12345;
		if (arb_policy_sb(&bad[i], &out) != -EINVAL)
			fail_msg("row %zu: accepted", i);
		assert_int_equal(out.loser, 12345);
	}
	assert_int_equal(arb_policy_sb(NULL, &out), -EINVAL);
	assert_int_equal(arb_policy_sb(&bad[0], NULL), -EINVAL);
}

/* Both orders of the records give one verdict, over every policy in every
 * option and a grid of roles, primary_since and change counts. The 1pri and
 * 2pri options get the same value: the roles choose which one applies. */
static void test_sb_symmetry(void **state)
{
	static const enum state_role roles[] = {UNK, PRI, SEC};
	static const struct arb_policy_since sinces[] = {P0, POS(3, 1), POS(3, 2), POS(4, 1)};
	static const uint64_t changes[] = {0, 7, UINT64_MAX};
	static const uint32_t ids[][2] = {{1, 2}, {9, 4}};
	static const uint32_t discard[] = {0, 1, 2, 4, 9};
	unsigned int p0, px, k, d, f, checked = 0, decided = 0;

	(void)state;
	for (p0 = 0; p0 <= NODE; p0++)
	for (px = 0; px <= NODE; px++)
	for (k = 0; k < N(ids); k++)
	for (d = 0; d < (p0 == NODE ? N(discard) : 1); d++)
	for (f = 0; f < 3 * 3 * 4 * 4 * 3 * 3; f++) {
		unsigned int ri = f % 3, rj = f / 3 % 3, si = f / 9 % 4, sj = f / 36 % 4;
		unsigned int ci = f / 144 % 3, cj = f / 432 % 3;
		struct arb_policy_sb_node a = {ids[k][0], roles[ri], sinces[si], changes[ci], 0x10};
		struct arb_policy_sb_node b = {ids[k][1], roles[rj], sinces[sj], changes[cj], 0x20};
		struct arb_policy_sb_in in = {{a, b}, p0, px, px, discard[d], ids[k][1]};
		struct arb_policy_sb_out o1, o2;

		/* a Primary has a primary_since; a Secondary's is (0, 0) or left over */
		if ((roles[ri] == PRI && !sinces[si].ring) ||
		    (roles[rj] == PRI && !sinces[sj].ring))
			continue;
		assert_int_equal(arb_policy_sb(&in, &o1), 0);
		in.node[0] = b;
		in.node[1] = a;
		assert_int_equal(arb_policy_sb(&in, &o2), 0);
		if (o1.loser != o2.loser || o1.policy != o2.policy || o1.pri_lost != o2.pri_lost ||
		    o1.config_error != o2.config_error || strcmp(o1.why, o2.why))
			fail_msg("asymmetric: p %u/%u ids %u,%u: %u (%s) vs %u (%s)", p0, px, a.id,
				 b.id, o1.loser, o1.why, o2.loser, o2.why);
		if (o1.loser != 0 && o1.loser != a.id && o1.loser != b.id)
			fail_msg("loser %u is neither node", o1.loser);
		if (o1.pri_lost && (o1.loser == a.id ? a : b).role != PRI)
			fail_msg("pri_lost for a non-Primary loser");
		checked++;
		decided += o1.loser != 0;
	}
	/* the grid ran, and not everything was "disconnect" */
	assert_true(checked > 100000);
	assert_true(decided > checked / 10);
}

static void test_sb_decider(void **state)
{
	(void)state;
	assert_int_equal(arb_policy_sb_decider(1, true, 2, true), 1);
	assert_int_equal(arb_policy_sb_decider(2, true, 1, true), 1);
	assert_int_equal(arb_policy_sb_decider(1, false, 2, true), 2);
	assert_int_equal(arb_policy_sb_decider(1, true, 2, false), 1);
	assert_int_equal(arb_policy_sb_decider(1, false, 2, false), 0);
}

static int since_cmp(uint64_t ra, uint32_t sa, uint64_t rb, uint32_t sb)
{
	struct arb_policy_since a = {ra, sa}, b = {rb, sb};

	return arb_policy_since_cmp(a, b);
}

static void test_since_cmp(void **state)
{
	(void)state;
	assert_int_equal(since_cmp(7, 9, 8, 1), -1); /* the ring first */
	assert_int_equal(since_cmp(8, 1, 7, 9), 1);
	assert_int_equal(since_cmp(7, 2, 7, 3), -1); /* then the clock */
	assert_int_equal(since_cmp(7, 3, 7, 2), 1);
	assert_int_equal(since_cmp(7, 3, 7, 3), 0);
	assert_int_equal(since_cmp(0, 0, 0, 1), -1);
	assert_int_equal(since_cmp(0, 0, 0, 0), 0);
	assert_int_equal(since_cmp(UINT64_MAX, 0, 1, UINT32_MAX), 1);
}

/* ------------------------------------------------------------ §6.4 veto */

static void test_promote(void **state)
{
	/* in: peer, member, fenced, rec, role */
	static const struct {
		const char *name;
		struct arb_policy_promote_in in;
		bool ok;
		const char *why; /* exact, where the doc gives the text */
	} rows[] = {
		{"§6.4 row 1: member, fresh Primary", {"bob", true, false, FRESH, PRI}, false,
		 "peer bob is still Primary"},
		{"§6.4 row 1: member, fresh Primary, a stray fenced",
		 {"bob", true, true, FRESH, PRI},
		 false, "peer bob is still Primary"},
		{"§6.4 row 2: gone, stale, was Primary", {"bob", false, false, STALE, PRI}, false,
		 "peer bob's state is unknown and it was not fenced"},
		{"§6.4 row 2: gone, stale, role unknown", {"bob", false, false, STALE, UNK}, false,
		 "peer bob's state is unknown and it was not fenced"},
		{"§6.4 row 2: gone, no record", {"bob", false, false, NOREC, SEC}, false,
		 "peer bob's state is unknown and it was not fenced"},
		{"§6.4 row 3: known fenced, stale Primary", {"bob", false, true, STALE, PRI}, true,
		 NULL},
		{"§6.4 row 3: known fenced, no record", {"bob", false, true, NOREC, UNK}, true,
		 NULL},
		{"§6.4 row 3: known fenced, fresh Primary (left < 2 x token ago)",
		 {"bob", false, true, FRESH, PRI}, true, NULL},
		{"§6.4 row 4: member, fresh Secondary", {"bob", true, false, FRESH, SEC}, true,
		 NULL},
		{"§6.4 row 4: member, fresh Unknown role", {"bob", true, false, FRESH, UNK}, true,
		 NULL},
		/* open in the doc */
		{"edge: gone, record still fresh, Primary", {"bob", false, false, FRESH, PRI},
		 false, "peer bob is still Primary"},
		{"edge: gone, record still fresh, Secondary", {"bob", false, false, FRESH, SEC},
		 true, NULL},
		{"edge: gone, stale, was Secondary", {"bob", false, false, STALE, SEC}, true, NULL},
		{"edge: member, no record yet", {"bob", true, false, NOREC, UNK}, false,
		 "peer bob's state is unknown and it was not fenced"},
		{"edge: no name", {NULL, true, false, FRESH, PRI}, false,
		 "peer ? is still Primary"},
	};
	static const struct arb_policy_promote_in bad[] = {
		{"bob", true, false, (enum arb_policy_rec)3, PRI},
		{"bob", true, false, FRESH, (enum state_role)7},
	};
	struct arb_policy_promote_out out;
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		assert_int_equal(arb_policy_promote(&rows[i].in, &out), 0);
		if (out.ok != rows[i].ok || (rows[i].why && strcmp(out.why, rows[i].why)))
			fail_msg("%s: got %s (%s)", rows[i].name, out.ok ? "allowed" : "refused",
				 out.why);
		assert_true(strlen(out.why) > 0);
	}
	for (i = 0; i < N(bad); i++)
		assert_int_equal(arb_policy_promote(&bad[i], &out), -EINVAL);
	assert_int_equal(arb_policy_promote(NULL, &out), -EINVAL);
}

/* ------------------------------------------------------------ §6.5 quorum */

#define QOFF ARB_POLICY_QUORUM_OFF
#define QMAJ ARB_POLICY_QUORUM_MAJORITY
#define SUSP ARB_POLICY_ONQ_SUSPEND_IO
#define IOERR ARB_POLICY_ONQ_IO_ERROR

static void test_quorum_promote(void **state)
{
	static const struct {
		const char *name;
		enum arb_policy_quorum q;
		bool quorate, force, ok, forced;
		int exit;
	} rows[] = {
		{"§6.5 item 1: no quorum refuses primary", QMAJ, false, false, false, false, 11},
		{"§6.5 item 1: primary --force still works", QMAJ, false, true, true, true, 0},
		{"§6.5 item 1: quorate", QMAJ, true, false, true, false, 0},
		{"edge: quorate, --force is not needed", QMAJ, true, true, true, false, 0},
		{"edge: quorum off", QOFF, false, false, true, false, 0},
		{"edge: quorum off, --force", QOFF, false, true, true, false, 0},
	};
	struct arb_policy_qpromote_out out;
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		assert_int_equal(
		    arb_policy_quorum_promote(rows[i].q, rows[i].quorate, rows[i].force, &out), 0);
		assert_non_null(out.why);
		if (out.ok != rows[i].ok || out.forced != rows[i].forced ||
		    out.exit != rows[i].exit)
			fail_msg("%s: got ok %d forced %d exit %d (%s)", rows[i].name, out.ok,
				 out.forced, out.exit, out.why);
	}
	assert_int_equal(arb_policy_quorum_promote(QMAJ, false, false, &out), 0);
	assert_string_equal(out.why, "no quorum");
	assert_int_equal(arb_policy_quorum_promote((enum arb_policy_quorum)2, true, false, &out),
			 -EINVAL);
	assert_int_equal(arb_policy_quorum_promote(QMAJ, true, false, NULL), -EINVAL);
}

static void test_quorum_io(void **state)
{
	static const struct {
		const char *name;
		enum arb_policy_quorum q;
		enum arb_policy_onq onq;
		bool quorate;
		enum state_role role;
		enum arb_policy_io want;
	} rows[] = {
		{"§6.5 item 2: Primary loses quorum, suspend-io", QMAJ, SUSP, false, PRI,
		 ARB_POLICY_IO_SUSPEND},
		{"§6.5 item 2: Primary loses quorum, io-error", QMAJ, IOERR, false, PRI,
		 ARB_POLICY_IO_ERROR},
		{"§6.5 item 2: quorum returns: writes go on", QMAJ, SUSP, true, PRI,
		 ARB_POLICY_IO_ON},
		{"edge: quorum returns, io-error", QMAJ, IOERR, true, PRI, ARB_POLICY_IO_ON},
		{"edge: a Secondary without quorum", QMAJ, IOERR, false, SEC, ARB_POLICY_IO_ON},
		{"edge: role unknown without quorum", QMAJ, SUSP, false, UNK, ARB_POLICY_IO_ON},
		{"edge: quorum off", QOFF, IOERR, false, PRI, ARB_POLICY_IO_ON},
	};
	struct arb_policy_io_out out;
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		assert_int_equal(arb_policy_quorum_io(rows[i].q, rows[i].onq, rows[i].quorate,
						      rows[i].role, &out),
				 0);
		assert_non_null(out.why);
		if (out.io != rows[i].want)
			fail_msg("%s: got %d (%s)", rows[i].name, out.io, out.why);
	}
	assert_int_equal(arb_policy_quorum_io((enum arb_policy_quorum)2, SUSP, true, PRI, &out),
			 -EINVAL);
	assert_int_equal(arb_policy_quorum_io(QMAJ, (enum arb_policy_onq)2, true, PRI, &out),
			 -EINVAL);
	assert_int_equal(arb_policy_quorum_io(QMAJ, SUSP, true, (enum state_role)3, &out),
			 -EINVAL);
	assert_int_equal(arb_policy_quorum_io(QMAJ, SUSP, true, PRI, NULL), -EINVAL);
}

static void test_score(void **state)
{
	static const struct {
		const char *name;
		enum arb_policy_quorum q;
		bool quorate;
		int score, want;
	} rows[] = {
		{"§6.5 item 3: no quorum: 0", QMAJ, false, 10000, 0},
		{"§6.5 item 3: quorate: unchanged", QMAJ, true, 10000, 10000},
		{"edge: quorum off: unchanged", QOFF, false, 1000, 1000},
		{"edge: 0 stays 0", QMAJ, true, 0, 0},
	};
	size_t i;
	int got;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		got = -1;
		assert_int_equal(arb_policy_score(rows[i].q, rows[i].quorate, rows[i].score, &got),
				 0);
		if (got != rows[i].want)
			fail_msg("%s: got %d", rows[i].name, got);
	}
	assert_int_equal(arb_policy_score(QMAJ, true, -1, &got), -EINVAL);
	assert_int_equal(arb_policy_score((enum arb_policy_quorum)5, true, 1, &got), -EINVAL);
	assert_int_equal(arb_policy_score(QMAJ, true, 1, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh),	      cmocka_unit_test(test_fence),
		cmocka_unit_test(test_fence_bad),     cmocka_unit_test(test_outdate),
		cmocka_unit_test(test_fence_exchange), cmocka_unit_test(test_wfc),
		cmocka_unit_test(test_sb),	      cmocka_unit_test(test_sb_reason),
		cmocka_unit_test(test_sb_bad),	      cmocka_unit_test(test_sb_symmetry),
		cmocka_unit_test(test_sb_decider),    cmocka_unit_test(test_since_cmp),
		cmocka_unit_test(test_promote),	      cmocka_unit_test(test_quorum_promote),
		cmocka_unit_test(test_quorum_io),     cmocka_unit_test(test_score),
	};

	return cmocka_run_group_tests_name("arb-policy", tests, NULL, NULL);
}
