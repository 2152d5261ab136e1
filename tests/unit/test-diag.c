/* test-diag: recording, counting and printing of diagnostics. */
#include "unit.h"

static char *print_text(const struct diag *d)
{
	return unit_str(unit_diag_text(d));
}

static struct diag *new_diag(void)
{
	struct diag *d;

	assert_int_equal(diag_new(&d), 0);
	return unit_defer(unit_free_diag, d);
}

static void test_empty(void **state)
{
	struct diag *d;
	char *text;

	(void)state;
	d = new_diag();
	assert_int_equal(diag_count(d, DIAG_ERR), 0);
	assert_int_equal(diag_count(d, DIAG_WARN), 0);
	assert_int_equal(diag_total(d), 0);
	assert_false(diag_get(d, 0, NULL, NULL, NULL, NULL));
	text = print_text(d);
	assert_string_equal(text, "");
	unit_release(text);
	unit_release(d);
	diag_free(NULL); /* allowed, like free() */
}

static void test_counts_per_severity(void **state)
{
	struct diag_loc loc = {"a.conf", 1, 1};
	struct diag *d;
	int i;

	(void)state;
	d = new_diag();
	for (i = 0; i < 3; i++)
		diag_add(d, DIAG_WARN, &loc, "kw", "warning %d", i);
	for (i = 0; i < 2; i++)
		diag_add(d, DIAG_ERR, &loc, NULL, "error %d", i);
	assert_int_equal(diag_count(d, DIAG_WARN), 3);
	assert_int_equal(diag_count(d, DIAG_ERR), 2);
	assert_int_equal(diag_total(d), 5);
	unit_release(d);
}

/* diag_get() returns messages in recording order, with copies of every string. */
static void test_get_in_recording_order(void **state)
{
	char file[] = "first.conf";
	char kw[] = "protocol";
	struct diag_loc loc = {file, 7, 3};
	struct diag_loc got;
	enum diag_sev sev;
	const char *gkw, *msg;
	struct diag *d;

	(void)state;
	d = new_diag();
	diag_add(d, DIAG_ERR, &loc, kw, "unknown value '%s' (%d)", "D", 42);
	loc.line = 2;
	diag_add(d, DIAG_WARN, &loc, NULL, "plain");
	diag_add(d, DIAG_WARN, NULL, "global", "no position");
	/* the diag must have copied these */
	memset(file, 'x', sizeof(file) - 1);
	memset(kw, 'y', sizeof(kw) - 1);

	assert_true(diag_get(d, 0, &sev, &got, &gkw, &msg));
	assert_int_equal(sev, DIAG_ERR);
	assert_string_equal(got.file, "first.conf");
	assert_int_equal(got.line, 7);
	assert_int_equal(got.col, 3);
	assert_string_equal(gkw, "protocol");
	assert_string_equal(msg, "unknown value 'D' (42)");

	assert_true(diag_get(d, 1, &sev, &got, &gkw, &msg));
	assert_int_equal(sev, DIAG_WARN);
	assert_int_equal(got.line, 2);
	assert_null(gkw);
	assert_string_equal(msg, "plain");

	assert_true(diag_get(d, 2, &sev, &got, &gkw, &msg));
	assert_null(got.file);
	assert_int_equal(got.line, 0);
	assert_string_equal(gkw, "global");

	assert_false(diag_get(d, 3, &sev, &got, &gkw, &msg));
	/* NULL out-pointers are allowed */
	assert_true(diag_get(d, 0, NULL, NULL, NULL, NULL));
	unit_release(d);
}

struct format_case {
	const char *file;
	int line, col;
	bool no_loc;
	enum diag_sev sev;
	const char *keyword;
	const char *msg;
	const char *expect;
};

static const struct format_case format_cases[] = {
	{"r0.res", 12, 5, false, DIAG_ERR, "ko-count", "201 is out of range",
	 "r0.res:12:5: error: ko-count: 201 is out of range\n"},
	{"r0.res", 3, 1, false, DIAG_WARN, "syncer", "DRBD 8.3 syntax",
	 "r0.res:3:1: warning: syncer: DRBD 8.3 syntax\n"},
	{"/etc/tandem.conf", 1, 9, false, DIAG_ERR, NULL, "unterminated string",
	 "/etc/tandem.conf:1:9: error: unterminated string\n"},
	{"a.conf", 4, 0, false, DIAG_ERR, "include", "cycle",
	 "a.conf:4: error: include: cycle\n"},
	{NULL, 0, 0, true, DIAG_ERR, NULL, "cannot read '/x': No such file or directory",
	 "error: cannot read '/x': No such file or directory\n"},
	{NULL, 5, 5, false, DIAG_WARN, "kw", "no file", "warning: kw: no file\n"},
};

static void test_print_format(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(format_cases); i++) {
		const struct format_case *fc = &format_cases[i];
		struct diag_loc loc = {fc->file, fc->line, fc->col};
		struct diag *d;
		char *text;

		d = new_diag();
		diag_add(d, fc->sev, fc->no_loc ? NULL : &loc, fc->keyword, "%s", fc->msg);
		text = print_text(d);
		if (strcmp(text, fc->expect) != 0)
			print_error("case %zu: got '%s'\n", i, text);
		assert_string_equal(text, fc->expect);
		unit_release(text);
		unit_release(d);
	}
}

/* Printing sorts by file, line, column, then recording order. */
static void test_print_sorted(void **state)
{
	static const struct {
		const char *file;
		int line, col;
		enum diag_sev sev;
		const char *msg;
	} add[] = {
		{"b.conf", 2, 1, DIAG_ERR, "b2"},
		{"a.conf", 10, 1, DIAG_ERR, "a10"},
		{"a.conf", 2, 9, DIAG_WARN, "a2c9"},
		{"a.conf", 2, 3, DIAG_ERR, "a2c3-first"},
		{"a.conf", 9, 40, DIAG_ERR, "a9"},
		{"a.conf", 2, 3, DIAG_WARN, "a2c3-second"},
		{"b.conf", 1, 1, DIAG_WARN, "b1"},
	};
	static const char expect[] = "a.conf:2:3: error: a2c3-first\n"
				     "a.conf:2:3: warning: a2c3-second\n"
				     "a.conf:2:9: warning: a2c9\n"
				     "a.conf:9:40: error: a9\n"
				     "a.conf:10:1: error: a10\n"
				     "b.conf:1:1: warning: b1\n"
				     "b.conf:2:1: error: b2\n";
	const char *msg;
	struct diag *d;
	char *text;
	size_t i;

	(void)state;
	d = new_diag();
	for (i = 0; i < UNIT_ARRAY_SIZE(add); i++) {
		struct diag_loc loc = {add[i].file, add[i].line, add[i].col};

		diag_add(d, add[i].sev, &loc, NULL, "%s", add[i].msg);
	}
	text = print_text(d);
	assert_string_equal(text, expect);
	unit_release(text);
	/* printing does not reorder what diag_get() returns */
	assert_true(diag_get(d, 0, NULL, NULL, NULL, &msg));
	assert_string_equal(msg, "b2");
	assert_true(diag_get(d, 6, NULL, NULL, NULL, &msg));
	assert_string_equal(msg, "b1");
	unit_release(d);
}

/* Many messages: the list grows, nothing is lost, the order holds. */
static void test_many(void **state)
{
	struct diag *d;
	char *text, *line;
	int i, prev = 0, lines = 0;

	(void)state;
	d = new_diag();
	for (i = 1000; i > 0; i--) {
		struct diag_loc loc = {"big.conf", i, 1};

		diag_add(d, i % 3 ? DIAG_ERR : DIAG_WARN, &loc, "kw", "message %d", i);
	}
	assert_int_equal(diag_total(d), 1000);
	assert_int_equal(diag_count(d, DIAG_WARN), 333);
	assert_int_equal(diag_count(d, DIAG_ERR), 667);
	text = print_text(d);
	for (line = text; line && *line; line = strchr(line, '\n') + 1) {
		int n = 0;

		assert_int_equal(sscanf(line, "big.conf:%d:1: ", &n), 1);
		assert_true(n > prev);
		prev = n;
		lines++;
	}
	assert_int_equal(lines, 1000);
	unit_release(text);
	unit_release(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_counts_per_severity),
		cmocka_unit_test(test_get_in_recording_order),
		cmocka_unit_test(test_print_format),
		cmocka_unit_test(test_print_sorted),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests_name("diag", tests, NULL, unit_teardown);
}
