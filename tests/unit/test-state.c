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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_sanitize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
