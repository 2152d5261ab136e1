/* Unit tests for arbc, what the clients of tandem-arbiterd make of its
 * answers (doc/arbiter.md §7 and §8): tandem-fence-peer's action for
 * every row of the fence-peer table and for every answer outside it
 * (each a fallback to the CIB path), its timeouts, the startup timeout
 * class of wfc in tandemd's words, and the promotion veto. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "arbc.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The answer as a line from the socket (NULL: none). */
static json_object *parse(const char *text)
{
	json_object *o;

	if (!text)
		return NULL;
	o = json_tokener_parse(text);
	if (!o)
		fail_msg("bad JSON in the test: %s", text);
	return o;
}

/* ---------------------------------------------------------------- fence-peer */

struct fence_row {
	const char *what;
	int rc;
	const char *answer;
	enum arbc_fence_act act;
	int exit;
	const char *why; /* a part of out.why */
};

static const struct fence_row fence_rows[] = {
	/* the table of doc/arbiter.md §7 */
	{"outdated over CPG", 0,
	 "{\"ok\":true,\"action\":\"exit\",\"exit\":4,\"why\":\"bob outdated r0\",\"peer\":\"bob\","
	 "\"peer_id\":2,\"quorate\":true}",
	 ARBC_FENCE_EXIT, 4, "bob outdated"},
	{"peer Inconsistent", 0, "{\"ok\":true,\"action\":\"exit\",\"exit\":3,\"why\":\"x\"}",
	 ARBC_FENCE_EXIT, 3, "x"},
	{"peer Primary: refused", 0, "{\"ok\":true,\"action\":\"exit\",\"exit\":6}", ARBC_FENCE_EXIT,
	 6, ""},
	{"no quorum", 0,
	 "{\"ok\":true,\"action\":\"exit\",\"exit\":1,\"why\":\"this partition is not quorate\"}",
	 ARBC_FENCE_EXIT, 1, "not quorate"},
	{"node down, resource-only", 0,
	 "{\"ok\":true,\"action\":\"constraint\",\"exit\":4,\"why\":\"bob left the ring\"}",
	 ARBC_FENCE_CONSTRAINT, 4, "left the ring"},
	{"constraint without exit", 0, "{\"ok\":true,\"action\":\"constraint\"}",
	 ARBC_FENCE_CONSTRAINT, 4, ""},
	{"node down, resource-and-stonith", 0,
	 "{\"ok\":true,\"action\":\"stonith\",\"exit\":7,\"peer\":\"bob\",\"peer_id\":2}",
	 ARBC_FENCE_STONITH, 7, ""},
	{"stonith without exit", 0, "{\"ok\":true,\"action\":\"stonith\"}", ARBC_FENCE_STONITH, 7,
	 ""},
	{"fallback", 0,
	 "{\"ok\":true,\"action\":\"fallback\",\"why\":\"bob's arbiter is not a member\"}",
	 ARBC_FENCE_FALLBACK, -1, "not a member"},
	{"fallback without why", 0, "{\"ok\":true,\"action\":\"fallback\"}", ARBC_FENCE_FALLBACK, -1,
	 "cannot decide"},
	/* no arbiter, or none that answers (§8) */
	{"no socket", -ENOENT, NULL, ARBC_FENCE_FALLBACK, -1, "not running"},
	{"nobody listens", -ECONNREFUSED, NULL, ARBC_FENCE_FALLBACK, -1, "not running"},
	{"no answer in time", -ETIMEDOUT, NULL, ARBC_FENCE_FALLBACK, -1, "no answer in time"},
	{"closed without an answer", -ECONNRESET, NULL, ARBC_FENCE_FALLBACK, -1, "closed"},
	{"not JSON", -EPROTO, NULL, ARBC_FENCE_FALLBACK, -1, "bad answer"},
	/* answers outside the table: fall back, never act on a guess */
	{"refused", 0, "{\"ok\":false,\"exit\":10,\"error\":\"no resource r9\"}",
	 ARBC_FENCE_FALLBACK, -1, "no resource r9"},
	{"ok missing", 0, "{\"action\":\"exit\",\"exit\":4}", ARBC_FENCE_FALLBACK, -1, "refused"},
	{"ok not a boolean", 0, "{\"ok\":1,\"action\":\"exit\",\"exit\":4}", ARBC_FENCE_FALLBACK,
	 -1, "refused"},
	{"no action", 0, "{\"ok\":true,\"exit\":4}", ARBC_FENCE_FALLBACK, -1, "no action"},
	{"action not a string", 0, "{\"ok\":true,\"action\":4,\"exit\":4}", ARBC_FENCE_FALLBACK,
	 -1, "no action"},
	{"unknown action", 0, "{\"ok\":true,\"action\":\"reboot\",\"exit\":7}",
	 ARBC_FENCE_FALLBACK, -1, "unknown"},
	{"exit without a code", 0, "{\"ok\":true,\"action\":\"exit\"}", ARBC_FENCE_FALLBACK, -1,
	 "no exit code"},
	{"exit 5 is not the arbiter's", 0, "{\"ok\":true,\"action\":\"exit\",\"exit\":5}",
	 ARBC_FENCE_FALLBACK, -1, "exit 5"},
	{"exit 7 without the fencer", 0, "{\"ok\":true,\"action\":\"exit\",\"exit\":7}",
	 ARBC_FENCE_FALLBACK, -1, "exit 7"},
	{"exit 0", 0, "{\"ok\":true,\"action\":\"exit\",\"exit\":0}", ARBC_FENCE_FALLBACK, -1,
	 "exit 0"},
	{"exit as a string", 0, "{\"ok\":true,\"action\":\"exit\",\"exit\":\"4\"}",
	 ARBC_FENCE_FALLBACK, -1, "no exit code"},
	{"constraint with exit 7", 0, "{\"ok\":true,\"action\":\"constraint\",\"exit\":7}",
	 ARBC_FENCE_FALLBACK, -1, "exit 7"},
	{"stonith with exit 4", 0, "{\"ok\":true,\"action\":\"stonith\",\"exit\":4}",
	 ARBC_FENCE_FALLBACK, -1, "exit 4"},
};

static void test_fence_decide(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N(fence_rows); i++) {
		const struct fence_row *r = &fence_rows[i];
		json_object *ans = parse(r->answer);
		struct arbc_fence out;

		arbc_fence_decide(r->rc, ans, &out);
		if (out.act != r->act || out.exit != r->exit)
			fail_msg("%s: %s exit %d, want %s exit %d (%s)", r->what,
				 arbc_fence_act_name(out.act), out.exit, arbc_fence_act_name(r->act),
				 r->exit, out.why);
		if (!strstr(out.why, r->why))
			fail_msg("%s: why '%s' lacks '%s'", r->what, out.why, r->why);
		json_object_put(ans);
	}
}

static void test_fence_peer_fields(void **state)
{
	json_object *ans = parse("{\"ok\":true,\"action\":\"stonith\",\"exit\":7,\"peer\":\"bob\","
				 "\"peer_id\":2}");
	struct arbc_fence out;

	(void)state;
	arbc_fence_decide(0, ans, &out);
	assert_string_equal(out.peer, "bob");
	assert_int_equal(out.peer_id, 2);
	json_object_put(ans);
	/* a peer not in the nodelist has id 0; a negative one is no id */
	ans = parse("{\"ok\":true,\"action\":\"constraint\",\"peer\":\"bob\",\"peer_id\":-3}");
	arbc_fence_decide(0, ans, &out);
	assert_int_equal(out.peer_id, 0);
	json_object_put(ans);
	arbc_fence_decide(-ENOENT, NULL, &out);
	assert_string_equal(out.peer, "");
	assert_int_equal(out.peer_id, 0);
}

static void test_fence_timeouts(void **state)
{
	(void)state;
	/* --timeout 90 (the default), asked at once: 87 s for the arbiter */
	assert_int_equal(arbc_fence_timeout_ms(90, 0), 87000);
	/* what the lock and tandemd's status took is taken off */
	assert_int_equal(arbc_fence_timeout_ms(90, 2500), 84500);
	/* never below the minimum: the arbiter gets its chance */
	assert_int_equal(arbc_fence_timeout_ms(2, 0), ARBC_FENCE_MIN_MS);
	assert_int_equal(arbc_fence_timeout_ms(0, 0), ARBC_FENCE_MIN_MS);
	assert_int_equal(arbc_fence_timeout_ms(90, 200000), ARBC_FENCE_MIN_MS);
	/* the fencer: what is left of --timeout, at least a second */
	assert_int_equal(arbc_stonith_timeout_s(90, 0), 90);
	assert_int_equal(arbc_stonith_timeout_s(90, 3500), 86);
	assert_int_equal(arbc_stonith_timeout_s(90, 95000), 1);
	assert_int_equal(arbc_stonith_timeout_s(0, 0), 1);
}

/* ---------------------------------------------------------------- wfc */

static void test_wfc(void **state)
{
	static const struct {
		const char *what;
		int rc;
		const char *answer;
		const char *cls; /* NULL: the metadata flags decide */
		const char *why;
	} rows[] = {
		{"default", 0, "{\"ok\":true,\"class\":\"default\",\"why\":\"bob is a member\"}",
		 "default", "member"},
		{"degraded", 0, "{\"ok\":true,\"class\":\"degraded\",\"why\":\"bob is not a member\"}",
		 "degraded", "not a member"},
		{"outdated is tandemd's peer-outdated", 0, "{\"ok\":true,\"class\":\"outdated\"}",
		 "peer-outdated", ""},
		{"null: the arbiter knows nothing", 0,
		 "{\"ok\":true,\"class\":null,\"why\":\"bob is not in the nodelist\"}", NULL,
		 "not in the nodelist"},
		{"class missing", 0, "{\"ok\":true}", NULL, "knows nothing"},
		{"unknown class", 0, "{\"ok\":true,\"class\":\"forever\"}", NULL, "unknown"},
		{"class not a string", 0, "{\"ok\":true,\"class\":3}", NULL, "unknown"},
		{"refused", 0, "{\"ok\":false,\"exit\":10,\"error\":\"no resource r9\"}", NULL,
		 "no resource r9"},
		{"not running", -ENOENT, NULL, NULL, "not running"},
		{"no answer in 5 s", -ETIMEDOUT, NULL, NULL, "no answer in time"},
	};
	char why[512];
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		json_object *ans = parse(rows[i].answer);
		const char *cls = arbc_wfc_class(rows[i].rc, ans, why, sizeof(why));

		if ((cls == NULL) != (rows[i].cls == NULL) ||
		    (cls && strcmp(cls, rows[i].cls)))
			fail_msg("%s: class %s, want %s", rows[i].what, cls ? cls : "NULL",
				 rows[i].cls ? rows[i].cls : "NULL");
		if (!strstr(why, rows[i].why))
			fail_msg("%s: why '%s' lacks '%s'", rows[i].what, why, rows[i].why);
		json_object_put(ans);
	}
}

/* ---------------------------------------------------------------- may-promote */

static void test_may_promote(void **state)
{
	static const struct {
		const char *what;
		int rc;
		const char *answer;
		enum arbc_promote want;
		const char *why;
	} rows[] = {
		{"allowed", 0, "{\"ok\":true,\"allow\":true}", ARBC_PROMOTE_ALLOW, ""},
		{"peer still Primary", 0,
		 "{\"ok\":true,\"allow\":false,\"why\":\"peer bob is still Primary\"}",
		 ARBC_PROMOTE_REFUSE, "peer bob is still Primary"},
		{"unknown and not fenced", 0,
		 "{\"ok\":true,\"allow\":false,\"why\":\"peer bob's state is unknown and it was "
		 "not fenced\"}",
		 ARBC_PROMOTE_REFUSE, "not fenced"},
		{"refused without a why", 0, "{\"ok\":true,\"allow\":false}", ARBC_PROMOTE_REFUSE,
		 "no reason"},
		/* no usable answer: no veto (§8) */
		{"not running", -ECONNREFUSED, NULL, ARBC_PROMOTE_NO_VETO, "not running"},
		{"no answer in 5 s", -ETIMEDOUT, NULL, ARBC_PROMOTE_NO_VETO, "no answer in time"},
		{"refused request", 0, "{\"ok\":false,\"exit\":10,\"error\":\"no resource r9\"}",
		 ARBC_PROMOTE_NO_VETO, "no resource r9"},
		{"allow missing", 0, "{\"ok\":true}", ARBC_PROMOTE_NO_VETO, "no allow"},
		{"allow not a boolean", 0, "{\"ok\":true,\"allow\":\"no\"}", ARBC_PROMOTE_NO_VETO,
		 "no allow"},
	};
	char why[512];
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++) {
		json_object *ans = parse(rows[i].answer);
		enum arbc_promote p = arbc_may_promote(rows[i].rc, ans, why, sizeof(why));

		if (p != rows[i].want)
			fail_msg("%s: %d, want %d (%s)", rows[i].what, p, rows[i].want, why);
		if (!strstr(why, rows[i].why))
			fail_msg("%s: why '%s' lacks '%s'", rows[i].what, why, rows[i].why);
		json_object_put(ans);
	}
}

/* ---------------------------------------------------------------- requests */

static void test_request(void **state)
{
	json_object *req = arbc_request("fence-peer", "r0");

	(void)state;
	assert_non_null(req);
	assert_string_equal(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN),
			    "{\"cmd\":\"fence-peer\",\"res\":\"r0\"}");
	json_object_put(req);
	req = arbc_request("show", NULL);
	assert_string_equal(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN),
			    "{\"cmd\":\"show\"}");
	json_object_put(req);
}

/* No socket: the answer is "not running" at once, never a wait. */
static void test_call_no_arbiter(void **state)
{
	char dir[] = "/tmp/test-arbc.XXXXXX";
	json_object *req = arbc_request("show", NULL), *resp = (json_object *)1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(arbc_call(dir, req, ARBC_TIMEOUT_MS, &resp), -ENOENT);
	assert_null(resp);
	json_object_put(req);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fence_decide),
		cmocka_unit_test(test_fence_peer_fields),
		cmocka_unit_test(test_fence_timeouts),
		cmocka_unit_test(test_wfc),
		cmocka_unit_test(test_may_promote),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_call_no_arbiter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
