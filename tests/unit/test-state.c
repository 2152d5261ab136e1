/* Unit tests for state: names, implicit adjustments and the rule table,
 * one row per rule with a change it refuses and one it allows. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "state.h"

static const struct state standalone_secondary = {
	.role = ROLE_SECONDARY, .peer = ROLE_UNKNOWN, .disk = DISK_UPTODATE,
	.pdsk = DISK_DUNKNOWN, .conn = CONN_STANDALONE,
};

struct row {
	const char *what;
	struct state os, ns;
	struct state_ctx ctx;
	enum state_result want;
};

#define S(r, p, d, pd, c) {.role = r, .peer = p, .disk = d, .pdsk = pd, .conn = c}
#define P ROLE_PRIMARY
#define SEC ROLE_SECONDARY
#define UNK ROLE_UNKNOWN

static const struct row rows[] = {
	{"promote UpToDate StandAlone", S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(P, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE), {0}, SS_SUCCESS},
	{"promote Inconsistent", S(SEC, UNK, DISK_INCONSISTENT, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(P, UNK, DISK_INCONSISTENT, DISK_DUNKNOWN, CONN_STANDALONE), {0},
	 SS_NO_UP_TO_DATE_DISK},
	{"promote Outdated", S(SEC, UNK, DISK_OUTDATED, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(P, UNK, DISK_OUTDATED, DISK_DUNKNOWN, CONN_STANDALONE), {0}, SS_NO_UP_TO_DATE_DISK},
	{"promote Inconsistent with UpToDate peer",
	 S(SEC, SEC, DISK_INCONSISTENT, DISK_UPTODATE, CONN_CONNECTED),
	 S(P, SEC, DISK_INCONSISTENT, DISK_UPTODATE, CONN_CONNECTED), {0}, SS_SUCCESS},
	{"two primaries", S(SEC, P, DISK_UPTODATE, DISK_UPTODATE, CONN_CONNECTED),
	 S(P, P, DISK_UPTODATE, DISK_UPTODATE, CONN_CONNECTED), {0}, SS_TWO_PRIMARIES},
	{"two primaries allowed", S(SEC, P, DISK_UPTODATE, DISK_UPTODATE, CONN_CONNECTED),
	 S(P, P, DISK_UPTODATE, DISK_UPTODATE, CONN_CONNECTED), {.allow_two_primaries = true},
	 SS_SUCCESS},
	{"demote while open", S(P, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE), {.device_open = true},
	 SS_DEVICE_IN_USE},
	{"demote while open, forced", S(P, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 {.device_open = true, .force = true}, SS_SUCCESS},
	{"fencing: peer not outdated", S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(P, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 {.fencing = FENCING_RESOURCE_ONLY}, SS_PRIMARY_NOP},
	{"fencing: peer outdated", S(SEC, UNK, DISK_UPTODATE, DISK_OUTDATED, CONN_STANDALONE),
	 S(P, UNK, DISK_UPTODATE, DISK_OUTDATED, CONN_STANDALONE),
	 {.fencing = FENCING_RESOURCE_ONLY}, SS_SUCCESS},
	{"outdate while connected", S(SEC, SEC, DISK_UPTODATE, DISK_UPTODATE, CONN_CONNECTED),
	 S(SEC, SEC, DISK_OUTDATED, DISK_UPTODATE, CONN_CONNECTED), {0}, SS_CONNECTED_OUTDATES},
	{"outdate Inconsistent", S(SEC, UNK, DISK_INCONSISTENT, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(SEC, UNK, DISK_OUTDATED, DISK_DUNKNOWN, CONN_STANDALONE), {0},
	 SS_LOWER_THAN_OUTDATED},
	{"outdate a Primary", S(P, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(P, UNK, DISK_OUTDATED, DISK_DUNKNOWN, CONN_STANDALONE), {0}, SS_NO_UP_TO_DATE_DISK},
	{"outdate StandAlone Secondary", S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(SEC, UNK, DISK_OUTDATED, DISK_DUNKNOWN, CONN_STANDALONE), {0}, SS_SUCCESS},
	{"StandAlone to WFConnection", S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_WFCONNECTION), {0},
	 SS_IN_TRANSIENT_STATE},
	{"StandAlone to Unconnected", S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_STANDALONE),
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_UNCONNECTED), {0}, SS_SUCCESS},
	{"Disconnecting to Unconnected",
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_DISCONNECTING),
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_UNCONNECTED), {0},
	 SS_IN_TRANSIENT_STATE},
	{"WFConnection to Connected directly",
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_WFCONNECTION),
	 S(SEC, SEC, DISK_UPTODATE, DISK_UPTODATE, CONN_CONNECTED), {0}, SS_IN_TRANSIENT_STATE},
	{"network failure to WFConnection",
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_NETWORKFAILURE),
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_WFCONNECTION), {0},
	 SS_IN_TRANSIENT_STATE},
	{"network failure to Unconnected",
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_NETWORKFAILURE),
	 S(SEC, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_UNCONNECTED), {0}, SS_SUCCESS},
	{"detach during resync", S(SEC, P, DISK_INCONSISTENT, DISK_UPTODATE, CONN_SYNCTARGET),
	 S(SEC, P, DISK_DISKLESS, DISK_UPTODATE, CONN_SYNCTARGET), {0}, SS_RESYNC_RUNNING},
};

static void test_rules(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum state_result got = state_check(&rows[i].os, &rows[i].ns, &rows[i].ctx);

		if (got != rows[i].want)
			fail_msg("%s: got %d (%s), want %d (%s)", rows[i].what, got,
				 state_result_text(got), rows[i].want,
				 state_result_text(rows[i].want));
	}
}

static void test_exit_codes(void **state)
{
	assert_int_equal(state_result_exit(SS_SUCCESS), 0);
	assert_int_equal(state_result_exit(SS_NO_UP_TO_DATE_DISK), 17);
	assert_int_equal(state_result_exit(SS_LOWER_THAN_OUTDATED), 5);
	assert_int_equal(state_result_exit(SS_NO_LOCAL_DISK), 16);
	assert_int_equal(state_result_exit(SS_DEVICE_IN_USE), 11);
	assert_string_equal(state_result_text(SS_DEVICE_IN_USE), "Device is held open by someone");
	assert_string_equal(state_result_text(SS_NO_UP_TO_DATE_DISK),
			    "Need access to UpToDate data");
}

static void test_names(void **state)
{
	assert_string_equal(state_role_name(ROLE_PRIMARY), "Primary");
	assert_string_equal(state_disk_name(DISK_UPTODATE), "UpToDate");
	assert_string_equal(state_disk_name(DISK_DUNKNOWN), "DUnknown");
	assert_string_equal(state_conn_name(CONN_WFREPORTPARAMS), "WFReportParams");
	assert_string_equal(state_conn_name(CONN_BEHIND), "Behind");
	assert_string_equal(state_conn_name((enum state_conn)99), "?");
	assert_int_equal(state_disk_from_name("Outdated"), DISK_OUTDATED);
	assert_int_equal(state_disk_from_name("nope"), -1);
}

static void test_sanitize(void **state)
{
	struct state s = standalone_secondary;

	s.peer = ROLE_PRIMARY;
	s.pdsk = DISK_UPTODATE;
	state_sanitize(&s);
	assert_int_equal(s.peer, ROLE_UNKNOWN);
	assert_int_equal(s.pdsk, DISK_DUNKNOWN);
	s.pdsk = DISK_OUTDATED; /* a known-Outdated peer stays Outdated */
	state_sanitize(&s);
	assert_int_equal(s.pdsk, DISK_OUTDATED);
	s.conn = CONN_SYNCTARGET;
	state_sanitize(&s);
	assert_int_equal(s.disk, DISK_INCONSISTENT);
	assert_int_equal(s.pdsk, DISK_UPTODATE);
}

/* ---------------------------------------------------------------- the transition table */

static void test_conn_table(void **state)
{
	const struct state_ctx ctx = {0};
	struct state os = standalone_secondary, ns;
	unsigned int from, to;

	(void)state;
	/* StandAlone leaves only through Unconnected; failures only through
	 * Unconnected, Disconnecting or StandAlone; Connected and above only
	 * from WFReportParams or each other */
	for (from = 0; from < STATE_N_CONN; from++) {
		for (to = 0; to < STATE_N_CONN; to++) {
			bool ok = state_conn_next(from) & (1u << to);

			if (to == from && !ok)
				fail_msg("%s may not stay", state_conn_name(from));
			if (from == CONN_STANDALONE && to != from && to != CONN_UNCONNECTED && ok)
				fail_msg("StandAlone -> %s allowed", state_conn_name(to));
			if (from >= CONN_TIMEOUT && from <= CONN_TEARDOWN && to != from && ok &&
			    to != CONN_UNCONNECTED && to != CONN_DISCONNECTING && to != CONN_STANDALONE)
				fail_msg("%s -> %s allowed", state_conn_name(from), state_conn_name(to));
			if (to >= CONN_CONNECTED && from < CONN_WFREPORTPARAMS && ok)
				fail_msg("%s -> %s allowed", state_conn_name(from), state_conn_name(to));
			/* the table is what state_check_how applies, soft and hard */
			os.conn = (enum state_conn)from;
			ns = os;
			ns.conn = (enum state_conn)to;
			if ((state_check_how(&os, &ns, &ctx, STATE_HARD) == SS_SUCCESS) != ok)
				fail_msg("%s -> %s: the check and the table disagree",
					 state_conn_name(from), state_conn_name(to));
		}
	}
	assert_int_equal(state_conn_next((enum state_conn)99), 0);
}

static void test_disk_table(void **state)
{
	unsigned int from, to;

	(void)state;
	for (from = 0; from < STATE_N_DISK; from++) {
		uint32_t next = state_disk_next(from);

		if (next & (1u << DISK_DUNKNOWN) && from != DISK_DUNKNOWN)
			fail_msg("%s -> DUnknown allowed", state_disk_name(from));
		if (from != DISK_DISKLESS && from != DISK_DUNKNOWN && from != DISK_FAILED &&
		    !(next & (1u << DISK_FAILED)))
			fail_msg("%s cannot fail", state_disk_name(from));
		for (to = 0; to < STATE_N_DISK; to++)
			/* Attaching and Negotiating may find Outdated metadata */
			if ((from == DISK_INCONSISTENT || from == DISK_FAILED ||
			     from == DISK_DISKLESS) &&
			    to == DISK_OUTDATED && (next & (1u << to)))
				fail_msg("%s -> Outdated allowed", state_disk_name(from));
	}
	assert_int_equal(state_disk_next(DISK_DISKLESS),
			 (1u << DISK_DISKLESS) | (1u << DISK_ATTACHING));
	assert_int_equal(state_disk_next(DISK_FAILED), (1u << DISK_FAILED) | (1u << DISK_DISKLESS));
}

/* Hard changes skip the rules an event may break, never the others. */
static void test_hard(void **state)
{
	const struct state_ctx ctx = {0};
	struct state os = S(SEC, P, DISK_INCONSISTENT, DISK_UPTODATE, CONN_SYNCTARGET), ns = os;

	(void)state;
	ns.disk = DISK_FAILED; /* the disk fails during a resync */
	assert_int_equal(state_check_how(&os, &ns, &ctx, STATE_SOFT), SS_RESYNC_RUNNING);
	assert_int_equal(state_check_how(&os, &ns, &ctx, STATE_HARD), SS_SUCCESS);
	os = (struct state)S(P, UNK, DISK_UPTODATE, DISK_DUNKNOWN, CONN_WFCONNECTION);
	ns = os;
	ns.disk = DISK_FAILED; /* a Primary alone loses its disk */
	assert_int_equal(state_check_how(&os, &ns, &ctx, STATE_HARD), SS_SUCCESS);
	os = (struct state)S(P, SEC, DISK_UPTODATE, DISK_UPTODATE, CONN_CONNECTED);
	ns = os;
	ns.peer = ROLE_PRIMARY; /* the peer says it is Primary too: never */
	assert_int_equal(state_check_how(&os, &ns, &ctx, STATE_HARD), SS_TWO_PRIMARIES);
	os = standalone_secondary;
	ns = os;
	ns.conn = CONN_WFCONNECTION; /* not even an event skips Unconnected */
	assert_int_equal(state_check_how(&os, &ns, &ctx, STATE_HARD), SS_IN_TRANSIENT_STATE);
}

static void test_rule_info(void **state)
{
	enum state_result res;
	unsigned int i, hard = 0;
	const char *name;
	bool h;

	(void)state;
	for (i = 0; state_rule_info(i, &name, &res, &h); i++) {
		assert_non_null(name);
		assert_true(res < 0);
		hard += h;
	}
	assert_true(i >= 10);
	assert_true(hard >= 3 && hard < i);
}

/* ---------------------------------------------------------------- the property test */

/*
 * Random walks: events as the daemon meets them, each turned into the
 * change the daemon asks for (soft for requests, hard for what happened),
 * sanitized and checked. After every accepted change no invariant may be
 * broken, and a soft change that makes the node Primary must give it
 * access to UpToDate data. Several thousand walks; the coverage counts
 * show that the walks reach the interesting states at all.
 */
enum ev {
	EV_CONNECT,
	EV_PROGRESS, /* Unconnected -> WFConnection, WFConnection -> WFReportParams */
	EV_HANDSHAKE,
	EV_LINK_LOST,
	EV_SYNC_DONE,
	EV_ATTACH,
	EV_DETACH,
	EV_IO_ERROR,
	EV_PROMOTE,
	EV_PROMOTE_FORCE,
	EV_DEMOTE,
	EV_PEER_ROLE,
	EV_FENCE_VERDICT,
	EV_OUTDATE,
	EV_VERIFY,
	EV_DISCONNECT,
	EV_N,
};

static uint64_t rng = 0x243f6a8885a308d3ULL;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

static const enum state_disk data_disks[] = {DISK_INCONSISTENT, DISK_OUTDATED, DISK_CONSISTENT,
					     DISK_UPTODATE};

/* The change the daemon would ask for on event e in state s; false if the
 * event means nothing there. */
static bool change_for(enum ev e, const struct state *s, struct state *ns, enum state_how *how,
		       struct state_ctx *ctx)
{
	*ns = *s;
	*how = STATE_HARD;
	ctx->force = false;
	ctx->device_open = rnd(4) == 0;
	switch (e) {
	case EV_CONNECT:
		*how = STATE_SOFT;
		ns->conn = CONN_UNCONNECTED;
		return s->conn == CONN_STANDALONE;
	case EV_PROGRESS:
		ns->conn = s->conn == CONN_UNCONNECTED ? CONN_WFCONNECTION : CONN_WFREPORTPARAMS;
		return s->conn == CONN_UNCONNECTED || s->conn == CONN_WFCONNECTION;
	case EV_HANDSHAKE:
		if (s->conn != CONN_WFREPORTPARAMS)
			return false;
		ns->peer = rnd(2) ? ROLE_PRIMARY : ROLE_SECONDARY;
		ns->pdsk = data_disks[rnd(4)];
		ns->conn = CONN_CONNECTED;
		if (ns->disk == DISK_UPTODATE && ns->pdsk < DISK_UPTODATE && rnd(2))
			ns->conn = CONN_SYNCSOURCE;
		else if (ns->disk >= DISK_INCONSISTENT && ns->disk < DISK_UPTODATE &&
			 ns->pdsk == DISK_UPTODATE)
			ns->conn = CONN_SYNCTARGET;
		return true;
	case EV_LINK_LOST:
		ns->conn = rnd(2) ? CONN_BROKENPIPE : CONN_NETWORKFAILURE;
		return s->conn >= CONN_WFREPORTPARAMS;
	case EV_SYNC_DONE:
		ns->conn = CONN_CONNECTED;
		ns->disk = DISK_UPTODATE;
		ns->pdsk = DISK_UPTODATE;
		return s->conn == CONN_SYNCTARGET || s->conn == CONN_SYNCSOURCE;
	case EV_ATTACH:
		ns->disk = s->disk == DISK_DISKLESS ? DISK_ATTACHING : data_disks[rnd(4)];
		return s->disk == DISK_DISKLESS || s->disk == DISK_ATTACHING;
	case EV_DETACH:
		*how = STATE_SOFT;
		ns->disk = DISK_DISKLESS;
		return s->disk > DISK_FAILED;
	case EV_IO_ERROR:
		ns->disk = s->disk == DISK_FAILED ? DISK_DISKLESS : DISK_FAILED;
		if (s->conn >= CONN_STARTINGSYNCS && s->conn <= CONN_PAUSEDSYNCT)
			ns->conn = CONN_CONNECTED; /* the resync ends with the disk */
		return s->disk > DISK_DISKLESS && s->disk != DISK_ATTACHING;
	case EV_PROMOTE:
	case EV_PROMOTE_FORCE:
		*how = STATE_SOFT;
		ns->role = ROLE_PRIMARY;
		if (e == EV_PROMOTE_FORCE) {
			ctx->force = true;
			if (ns->disk >= DISK_INCONSISTENT && ns->disk < DISK_UPTODATE)
				ns->disk = DISK_UPTODATE;
		}
		return s->role != ROLE_PRIMARY;
	case EV_DEMOTE:
		*how = STATE_SOFT;
		ns->role = ROLE_SECONDARY;
		return s->role == ROLE_PRIMARY;
	case EV_PEER_ROLE:
		ns->peer = s->peer == ROLE_PRIMARY ? ROLE_SECONDARY : ROLE_PRIMARY;
		return s->conn >= CONN_CONNECTED;
	case EV_FENCE_VERDICT:
		ns->pdsk = DISK_OUTDATED;
		return s->conn < CONN_CONNECTED;
	case EV_OUTDATE:
		*how = STATE_SOFT;
		ns->disk = DISK_OUTDATED;
		return true;
	case EV_VERIFY:
		*how = s->conn == CONN_CONNECTED ? STATE_SOFT : STATE_HARD;
		ns->conn = s->conn == CONN_CONNECTED ? CONN_VERIFYS : CONN_CONNECTED;
		return s->conn == CONN_CONNECTED || s->conn == CONN_VERIFYS;
	case EV_DISCONNECT:
		*how = STATE_SOFT;
		ns->conn = s->conn == CONN_DISCONNECTING ? CONN_STANDALONE : CONN_DISCONNECTING;
		return s->conn != CONN_STANDALONE;
	case EV_N:
		break;
	}
	return false;
}

static bool uptodate_access(const struct state *s)
{
	return s->disk == DISK_UPTODATE || (s->conn >= CONN_CONNECTED && s->pdsk == DISK_UPTODATE);
}

static void test_property(void **state)
{
	unsigned int walk, step, accepted = 0, asked = 0;
	bool seen_conn[STATE_N_CONN] = {false}, seen_primary = false, seen_two = false;

	(void)state;
	for (walk = 0; walk < 4000; walk++) {
		struct state_ctx ctx = {.allow_two_primaries = rnd(4) == 0,
					.fencing = (enum state_fencing)rnd(3)};
		struct state s = S(SEC, UNK, DISK_DISKLESS, DISK_DUNKNOWN, CONN_STANDALONE);

		for (step = 0; step < 200; step++) {
			enum ev e = (enum ev)rnd(EV_N);
			enum state_how how;
			struct state ns;
			const char *bad;

			if (!change_for(e, &s, &ns, &how, &ctx))
				continue;
			asked++;
			state_sanitize(&ns);
			if (state_check_how(&s, &ns, &ctx, how) != SS_SUCCESS)
				continue;
			accepted++;
			bad = state_invariant(&ns, &ctx);
			if (bad)
				fail_msg("walk %u step %u: event %d (%s) broke '%s': %s %s/%s %s/%s -> "
					 "%s %s/%s %s/%s",
					 walk, step, e, how == STATE_SOFT ? "soft" : "hard", bad,
					 state_conn_name(s.conn), state_role_name(s.role),
					 state_role_name(s.peer), state_disk_name(s.disk),
					 state_disk_name(s.pdsk), state_conn_name(ns.conn),
					 state_role_name(ns.role), state_role_name(ns.peer),
					 state_disk_name(ns.disk), state_disk_name(ns.pdsk));
			if (how == STATE_SOFT && s.role != ROLE_PRIMARY && ns.role == ROLE_PRIMARY &&
			    !uptodate_access(&ns))
				fail_msg("walk %u step %u: promoted without UpToDate data (%s/%s)", walk,
					 step, state_disk_name(ns.disk), state_disk_name(ns.pdsk));
			s = ns;
			seen_conn[s.conn] = true;
			seen_primary |= s.role == ROLE_PRIMARY;
			seen_two |= s.role == ROLE_PRIMARY && s.peer == ROLE_PRIMARY;
		}
	}
	/* not vacuous: most requests are possible, and the walks get around */
	assert_true(accepted > asked / 4);
	assert_true(seen_primary && seen_two);
	assert_true(seen_conn[CONN_SYNCSOURCE] && seen_conn[CONN_SYNCTARGET] &&
		    seen_conn[CONN_VERIFYS] && seen_conn[CONN_BROKENPIPE] &&
		    seen_conn[CONN_DISCONNECTING] && seen_conn[CONN_WFREPORTPARAMS]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_conn_table),
		cmocka_unit_test(test_disk_table),
		cmocka_unit_test(test_hard),
		cmocka_unit_test(test_rule_info),
		cmocka_unit_test(test_property),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
