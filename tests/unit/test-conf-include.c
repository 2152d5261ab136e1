/*
 * test-conf-include: include statements, with files written under a
 * fresh temporary directory: globs relative to the including file,
 * wildcards matching nothing, missing files, cycles, the depth limit and
 * the bound on the directory entries one pattern may read.
 */
#include "unit.h"

#include <fcntl.h>

static void test_include_glob_relative(void **state)
{
	char *dir = unit_tmpdir();
	const char *main_conf = unit_fmt("%s/main.conf", dir);
	struct unit_conf u;
	const struct conf_res *r;

	(void)state;
	unit_write(dir, "main.conf",
		   "include \"global_common.conf\";\n"
		   "include \"res.d/*.res\";\n"
		   "include \"res.d/*.none\";\n");
	unit_write(dir, "global_common.conf",
		   "global { usage-count no; }\ncommon { net { protocol B; } }\n");
	/* relative to res.d/, not to main.conf's directory nor the cwd */
	unit_write(dir, "res.d/a.res",
		   "include \"extra.inc\";\nresource a {\n" UNIT_HOSTS_AT("0", "7789") "}\n");
	unit_write(dir, "res.d/extra.inc", "resource c {\n" UNIT_HOSTS_AT("2", "7791") "}\n");
	unit_write(dir, "extra.inc", "this is not a configuration;\n");
	unit_write(dir, "res.d/b.res", "resource b {\n" UNIT_HOSTS_AT("1", "7790") "}\n");
	unit_write(dir, "res.d/notes.txt", "not included {\n");
	unit_load_file(&u, main_conf);
	assert_loaded(&u);
	assert_no_warnings(u.d);
	assert_string_equal(conf_file(u.c), main_conf);
	r = conf_resources(u.c);
	assert_non_null(r);
	assert_string_equal(r->name, "c");
	assert_string_equal(r->next->name, "a");
	assert_string_equal(r->next->next->name, "b");
	assert_null(r->next->next->next);
	assert_string_equal(conf_res_text(u.c, r, CONF_SECT_NET, "protocol"), "B");
	assert_string_equal(conf_list_find(conf_global(u.c), "usage-count")->text, "no");
	/* positions name the file a thing was read from */
	assert_string_equal(r->loc.file, unit_fmt("%s/res.d/extra.inc", dir));
	assert_int_equal(r->loc.line, 1);
	assert_string_equal(r->next->loc.file, unit_fmt("%s/res.d/a.res", dir));
	assert_int_equal(r->next->loc.line, 2);
	unit_done(&u);

	/* from memory: relative to the directory of the buffer's name */
	unit_load_opts(&u, unit_fmt("%s/virtual.conf", dir), "include \"res.d/b.res\";\n",
		       &(struct conf_load_opts){.hostname = UNIT_HOST, .no_ip_check = true});
	assert_loaded(&u);
	assert_non_null(conf_find_res(u.c, "b"));
	unit_done(&u);
	unit_release(dir);
}

static void test_include_absolute_and_once(void **state)
{
	char *dir = unit_tmpdir();
	struct unit_conf u;

	(void)state;
	unit_write(dir, "x.inc", "resource x {\n" UNIT_HOSTS "}\n");
	/* the same file through an absolute path, a relative one and a glob: read once */
	unit_write(dir, "main.conf",
		   unit_fmt("include \"%s/x.inc\";\n"
			    "include \"x.inc\";\n"
			    "include \"*.inc\";\n",
			    dir));
	unit_load_file(&u, unit_fmt("%s/main.conf", dir));
	assert_loaded(&u);
	assert_non_null(conf_find_res(u.c, "x"));
	assert_null(conf_find_res(u.c, "x")->next);
	unit_done(&u);
	unit_release(dir);
}

static void test_include_wildcard_matching_nothing(void **state)
{
	char *dir = unit_tmpdir();
	struct unit_conf u;

	(void)state;
	unit_write(dir, "main.conf",
		   "include \"*.res\";\n"
		   "include \"none-?.conf\";\n"
		   "include \"[xyz].conf\";\n" UNIT_RES(""));
	unit_load_file(&u, unit_fmt("%s/main.conf", dir));
	assert_loaded(&u);
	assert_no_warnings(u.d);
	assert_non_null(conf_find_res(u.c, "r0"));
	unit_done(&u);
	unit_release(dir);
}

/* drbd.conf's usual include of drbd.d/NAME.res wildcards, with no drbd.d directory at all. */
static void test_include_wildcard_in_missing_directory(void **state)
{
	char *dir = unit_tmpdir();
	struct unit_conf u;

	(void)state;
	unit_write(dir, "main.conf", "include \"nothing.d/*.res\";\n" UNIT_RES(""));
	unit_load_file(&u, unit_fmt("%s/main.conf", dir));
	assert_loaded(&u);
	assert_no_warnings(u.d);
	unit_done(&u);
	unit_release(dir);
}

static void test_include_missing_literal(void **state)
{
	char *dir = unit_tmpdir();
	struct unit_conf u;

	(void)state;
	unit_write(dir, "main.conf", "global { }\ninclude \"nope.conf\";\n" UNIT_RES(""));
	unit_load_file(&u, unit_fmt("%s/main.conf", dir));
	assert_rejected(&u);
	assert_error_at(u.d, 2, 9, "nope.conf");
	assert_error_at(u.d, 2, 9, "include");
	unit_done(&u);

	/* the top-level file itself */
	unit_load_file(&u, unit_fmt("%s/missing.conf", dir));
	assert_true(u.rc < 0);
	assert_error_at(u.d, 0, 0, "missing.conf");
	unit_done(&u);
	unit_release(dir);
}

static void test_include_cycle(void **state)
{
	char *dir = unit_tmpdir();
	struct unit_conf u;

	(void)state;
	/* as drbdadm-84: each file is read once, the cycle is only a warning */
	unit_write(dir, "a.conf", "include \"b.conf\";\n" UNIT_RES(""));
	unit_write(dir, "b.conf", "global { }\ninclude \"a.conf\";\n");
	unit_load_file(&u, unit_fmt("%s/a.conf", dir));
	assert_loaded(&u);
	assert_warning_at(u.d, 2, 9, "cycle");
	assert_int_equal(diag_count(u.d, DIAG_WARN), 1);
	assert_non_null(conf_find_res(u.c, "r0")); /* read once, not "defined twice" */
	unit_done(&u);

	unit_write(dir, "self.conf", "include \"self.conf\";\n" UNIT_RES(""));
	unit_load_file(&u, unit_fmt("%s/self.conf", dir));
	assert_loaded(&u);
	assert_warning_at(u.d, 1, 9, "cycle");
	assert_non_null(conf_find_res(u.c, "r0"));
	unit_done(&u);
	unit_release(dir);
}

/* A chain main -> f1 -> ... -> fN, the last one holding a resource. */
static void write_chain(const char *dir, int n)
{
	int i;

	unit_write(dir, "f0.conf", "include \"f1.conf\";\n");
	for (i = 1; i < n; i++)
		unit_write(dir, unit_fmt("f%d.conf", i),
			   unit_fmt("include \"f%d.conf\";\n", i + 1));
	unit_write(dir, unit_fmt("f%d.conf", n), UNIT_RES(""));
}

/* DRBD allows 10 levels of nested includes below the main file. */
static void test_include_depth(void **state)
{
	char *dir = unit_tmpdir();
	struct conf_load_opts o = {.hostname = UNIT_HOST, .no_ip_check = true};
	struct unit_conf u;

	(void)state;
	write_chain(dir, 10);
	unit_load_file(&u, unit_fmt("%s/f0.conf", dir));
	assert_loaded(&u);
	assert_non_null(conf_find_res(u.c, "r0"));
	unit_done(&u);
	/* the same chain read from memory counts the same */
	unit_load_opts(&u, unit_fmt("%s/f0.conf", dir), "include \"f1.conf\";\n", &o);
	assert_loaded(&u);
	unit_done(&u);

	write_chain(dir, 11);
	unit_load_file(&u, unit_fmt("%s/f0.conf", dir));
	assert_rejected(&u);
	assert_error_at(u.d, 1, 9, "10");
	unit_done(&u);
	unit_load_opts(&u, unit_fmt("%s/f0.conf", dir), "include \"f1.conf\";\n", &o);
	assert_rejected(&u);
	assert_error_at(u.d, 1, 9, "10");
	unit_done(&u);
	unit_release(dir);
}

/*
 * Wildcards in directory components walk every directory they name: the
 * includes of one configuration may read CONF_GLOB_ENTRIES_MAX (65536)
 * directory entries in all, and the one that passes it is an error, not
 * minutes of readdir() over the filesystem. 257 directories of 256 files:
 * one of them is fine, all of them are not, in one pattern or in one
 * include per directory.
 */
static void test_include_glob_bounded(void **state)
{
	char *dir = unit_tmpdir();
	struct unit_conf u;
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int i, j, fd;
	FILE *f;

	(void)state;
	assert_int_equal(mkdir(unit_fmt("%s/t", dir), 0755), 0);
	for (i = 0; i < 257; i++) {
		snprintf(path, sizeof(path), "%s/t/d%d", dir, i);
		assert_int_equal(mkdir(path, 0755), 0);
		for (j = 0; j < 256; j++) {
			snprintf(path, sizeof(path), "%s/t/d%d/f%d", dir, i, j);
			fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			assert_true(fd >= 0);
			close(fd);
		}
	}
	unit_write(dir, "one.conf", "include \"t/d7/*.res\";\n" UNIT_RES(""));
	unit_load_file(&u, unit_fmt("%s/one.conf", dir));
	assert_loaded(&u);
	unit_done(&u);

	unit_write(dir, "all.conf", "include \"t/*/*.res\";\n" UNIT_RES(""));
	unit_load_file(&u, unit_fmt("%s/all.conf", dir));
	assert_rejected(&u);
	assert_error_at(u.d, 1, 9, "65536 directory entries");
	unit_done(&u);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	for (i = 0; i < 257; i++)
		fprintf(f, "include \"t/d%d/*.res\";\n", i);
	fputs(UNIT_RES(""), f);
	assert_int_equal(fclose(f), 0);
	unit_write(dir, "each.conf", text);
	free(text);
	unit_load_file(&u, unit_fmt("%s/each.conf", dir));
	assert_rejected(&u);
	/* 256 directories of 258 entries with their "." and "..", 66048 */
	assert_error_at(u.d, 255, 9, "65536 directory entries");
	unit_done(&u);
	unit_release(dir);
}

static void test_include_error_positions(void **state)
{
	char *dir = unit_tmpdir();
	struct unit_conf u;
	bool found = false;
	unsigned int i;

	(void)state;
	unit_write(dir, "main.conf", "include \"r.d/*.res\";\n");
	unit_write(dir, "r.d/bad.res", "resource r0 {\n  net { ko-count 999; }\n" UNIT_HOSTS "}\n");
	unit_load_file(&u, unit_fmt("%s/main.conf", dir));
	assert_rejected(&u);
	assert_error_at(u.d, 2, 18, "ko-count");
	for (i = 0; i < diag_total(u.d); i++) {
		struct diag_loc loc;

		assert_true(diag_get(u.d, i, NULL, &loc, NULL, NULL));
		if (loc.line == 2 && loc.file && strstr(loc.file, "r.d/bad.res"))
			found = true;
	}
	assert_true(found);
	unit_done(&u);
	unit_release(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_include_glob_relative),
		cmocka_unit_test(test_include_absolute_and_once),
		cmocka_unit_test(test_include_wildcard_matching_nothing),
		cmocka_unit_test(test_include_wildcard_in_missing_directory),
		cmocka_unit_test(test_include_missing_literal),
		cmocka_unit_test(test_include_cycle),
		cmocka_unit_test(test_include_depth),
		cmocka_unit_test(test_include_error_positions),
		cmocka_unit_test(test_include_glob_bounded),
	};

	return cmocka_run_group_tests_name("conf-include", tests, NULL, unit_teardown);
}
