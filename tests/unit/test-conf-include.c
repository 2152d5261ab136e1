/*
 * test-conf-include: include statements, with files written under a
 * fresh temporary directory: globs relative to the including file,
 * wildcards matching nothing, missing files, cycles, the depth limit and
 * the bound on the directory entries one pattern may read; then the same
 * through conf_load_opts.fs, in a filesystem in memory.
 */
#include "unit.h"

#include <dirent.h>
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

/*
 * memfs: a filesystem in memory for conf_load_opts.fs, under /memfs (which
 * the real filesystem does not have): the files and directories (text
 * NULL) of memfs_files, and /memfs/wide, a directory of MEMFS_WIDE_N
 * empty files f00000, f00001, ... Names are canonical, so realpath only
 * checks that one exists; directories list no "." or "..".
 */
struct memfs_file {
	const char *path;
	const char *text;
	int err; /* fs_read fails with it */
};

static const struct memfs_file memfs_files[] = {
	{"/", NULL, 0},
	{"/memfs", NULL, 0},
	{"/memfs/tandem.conf",
	 "include \"tandem.d/global_common.conf\";\ninclude \"tandem.d/*.res\";\n", 0},
	{"/memfs/tandem.d", NULL, 0},
	{"/memfs/tandem.d/global_common.conf", "common { net { protocol B; } }\n", 0},
	{"/memfs/tandem.d/a.res", "resource a {\n" UNIT_HOSTS_AT("0", "7789") "}\n", 0},
	{"/memfs/tandem.d/b.res",
	 "include \"extra.inc\";\nresource b {\n" UNIT_HOSTS_AT("1", "7790") "}\n", 0},
	{"/memfs/tandem.d/extra.inc", "resource c {\n" UNIT_HOSTS_AT("2", "7791") "}\n", 0},
	{"/memfs/tandem.d/notes.txt", "not included {\n", 0},
	{"/memfs/locked.res", "resource l {\n" UNIT_HOSTS "}\n", -EACCES},
	{"/memfs/wide.conf", "global { }\ninclude \"wide/*.res\";\n", 0},
	{"/memfs/wide", NULL, 0},
};

#define MEMFS_WIDE   "/memfs/wide"
#define MEMFS_WIDE_N 70000u /* more than CONF_GLOB_ENTRIES_MAX */

struct memfs {
	unsigned int opendirs, reads; /* calls, to see that ctx is passed */
};

struct memfs_dir {
	const char *path;
	size_t next; /* of memfs_files, or of the files of MEMFS_WIDE */
	struct dirent ent;
};

static const struct memfs_file *memfs_find(const char *path)
{
	static const struct memfs_file wide_file = {MEMFS_WIDE "/f", "", 0};
	const char *p = path + strlen(MEMFS_WIDE "/f");
	unsigned int n;
	size_t i;

	if (strncmp(path, MEMFS_WIDE "/f", strlen(MEMFS_WIDE "/f")) == 0 && strlen(p) == 5 &&
	    sscanf(p, "%5u", &n) == 1 && n < MEMFS_WIDE_N)
		return &wide_file;
	for (i = 0; i < UNIT_ARRAY_SIZE(memfs_files); i++)
		if (strcmp(memfs_files[i].path, path) == 0)
			return &memfs_files[i];
	return NULL;
}

static int memfs_opendir(void *ctx, const char *path, void **dir)
{
	const struct memfs_file *f = memfs_find(path);
	struct memfs_dir *d;

	((struct memfs *)ctx)->opendirs++;
	if (!f)
		return -ENOENT;
	if (f->text)
		return -ENOTDIR;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->path = f->path;
	*dir = d;
	return 0;
}

static int memfs_readdir(void *ctx, void *dir, struct dirent **ent)
{
	struct memfs_dir *d = dir;
	size_t n = strcmp(d->path, "/") == 0 ? 0 : strlen(d->path);
	const char *p;

	(void)ctx;
	*ent = &d->ent;
	if (strcmp(d->path, MEMFS_WIDE) == 0) {
		if (d->next == MEMFS_WIDE_N) {
			*ent = NULL;
			return 0;
		}
		snprintf(d->ent.d_name, sizeof(d->ent.d_name), "f%05zu", d->next++);
		d->ent.d_type = DT_REG;
		return 0;
	}
	for (; d->next < UNIT_ARRAY_SIZE(memfs_files); d->next++) {
		p = memfs_files[d->next].path;
		if (strncmp(p, d->path, n) == 0 && p[n] == '/' && p[n + 1] &&
		    !strchr(p + n + 1, '/')) {
			snprintf(d->ent.d_name, sizeof(d->ent.d_name), "%s", p + n + 1);
			d->ent.d_type = memfs_files[d->next++].text ? DT_REG : DT_DIR;
			return 0;
		}
	}
	*ent = NULL;
	return 0;
}

static void memfs_closedir(void *ctx, void *dir)
{
	(void)ctx;
	free(dir);
}

static int memfs_stat(void *ctx, const char *path, struct stat *st)
{
	const struct memfs_file *f = memfs_find(path);

	(void)ctx;
	if (!f)
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	st->st_mode = f->text ? S_IFREG | 0644 : S_IFDIR | 0755;
	st->st_size = f->text ? (off_t)strlen(f->text) : 0;
	return 0;
}

static int memfs_realpath(void *ctx, const char *path, char *real, size_t size)
{
	(void)ctx;
	if (!memfs_find(path))
		return -ENOENT;
	if (strlen(path) >= size)
		return -ENAMETOOLONG;
	strcpy(real, path);
	return 0;
}

static int memfs_read(void *ctx, const char *path, size_t max, char **buf, size_t *len)
{
	const struct memfs_file *f = memfs_find(path);

	((struct memfs *)ctx)->reads++;
	if (!f)
		return -ENOENT;
	if (!f->text)
		return -EISDIR;
	if (f->err)
		return f->err;
	*len = strlen(f->text);
	if (*len > max)
		return -EFBIG;
	*buf = strdup(f->text);
	return *buf ? 0 : -ENOMEM;
}

static const struct conf_fs memfs_ops = {
	.fs_opendir = memfs_opendir,
	.fs_readdir = memfs_readdir,
	.fs_closedir = memfs_closedir,
	.fs_stat = memfs_stat,
	.fs_realpath = memfs_realpath,
	.fs_read = memfs_read,
};

/* Load path from memfs (text NULL), or text named path, with includes from memfs. */
static void memfs_load(struct unit_conf *u, struct memfs *m, const char *path, const char *text)
{
	struct conf_load_opts o = {
		.hostname = UNIT_HOST, .no_ip_check = true, .fs = &memfs_ops, .fs_ctx = m};

	assert_int_equal(diag_new(&u->d), 0);
	unit_defer(unit_free_diag, u->d);
	u->c = NULL;
	if (text)
		u->rc = conf_load_buf(path, text, strlen(text), &o, u->d, &u->c);
	else
		u->rc = conf_load(path, &o, u->d, &u->c);
	unit_defer(unit_free_conf, u->c);
}

/* Is there an error at file:line:col containing sub? */
static bool memfs_error_in(const struct diag *d, const char *file, int line, int col,
			   const char *sub)
{
	enum diag_sev sev;
	struct diag_loc loc;
	const char *msg;
	unsigned int i;

	for (i = 0; i < diag_total(d); i++) {
		assert_true(diag_get(d, i, &sev, &loc, NULL, &msg));
		if (sev == DIAG_ERR && loc.file && strcmp(loc.file, file) == 0 &&
		    loc.line == line && loc.col == col && strstr(msg, sub))
			return true;
	}
	return false;
}

/* conf_load and its includes read the caller's filesystem, and only it. */
static void test_include_fs_hook(void **state)
{
	struct memfs m = {0};
	struct unit_conf u;
	const struct conf_res *r;

	(void)state;
	memfs_load(&u, &m, "/memfs/tandem.conf", NULL);
	assert_loaded(&u);
	assert_no_warnings(u.d);
	r = conf_resources(u.c);
	assert_non_null(r);
	/* sorted a.res, b.res; b.res includes extra.inc first; notes.txt is not *.res */
	assert_string_equal(r->name, "a");
	assert_string_equal(r->loc.file, "/memfs/tandem.d/a.res");
	assert_string_equal(r->next->name, "c");
	assert_string_equal(r->next->loc.file, "/memfs/tandem.d/extra.inc");
	assert_string_equal(r->next->next->name, "b");
	assert_int_equal(r->next->next->loc.line, 2);
	assert_null(r->next->next->next);
	assert_string_equal(conf_res_text(u.c, r, CONF_SECT_NET, "protocol"), "B");
	assert_int_equal(m.reads, 5); /* tandem.conf, global_common.conf, a, b, extra.inc */
	assert_true(m.opendirs >= 1);
	unit_done(&u);

	/* from memory, relative to the buffer's name; a file read once however named */
	memfs_load(&u, &m, "/memfs/top.conf",
		   "include \"tandem.d/a.res\";\ninclude \"/memfs/tandem.d/[a]*.res\";\n");
	assert_loaded(&u);
	assert_non_null(conf_find_res(u.c, "a"));
	assert_null(conf_resources(u.c)->next);
	unit_done(&u);

	/* the hook's errors, with their file:line:col */
	memfs_load(&u, &m, "/memfs/top.conf",
		   "include \"locked.res\";\ninclude \"missing.res\";\ninclude \"tandem.d\";\n");
	assert_rejected(&u);
	assert_true(memfs_error_in(u.d, "/memfs/top.conf", 1, 9,
				   "cannot read '/memfs/locked.res': Permission denied"));
	assert_true(memfs_error_in(u.d, "/memfs/top.conf", 2, 9,
				   "cannot read '/memfs/missing.res': no such file"));
	assert_true(memfs_error_in(u.d, "/memfs/top.conf", 3, 9, "Is a directory"));
	unit_done(&u);

	/* the top file itself */
	memfs_load(&u, &m, "/memfs/none.conf", NULL);
	assert_true(u.rc < 0);
	assert_error_at(u.d, 0, 0, "cannot read '/memfs/none.conf'");
	unit_done(&u);
}

/* The bound on directory entries holds in the caller's filesystem too, and
 * its error names the include that passed it: file, line and column. */
static void test_include_fs_glob_bounded(void **state)
{
	struct memfs m = {0};
	struct unit_conf u;

	(void)state;
	memfs_load(&u, &m, "/memfs/top.conf",
		   "include \"wide/f69999\";\ninclude \"tandem.d/[a]*.res\";\n");
	assert_loaded(&u); /* a name in wide without a wildcard reads no directory */
	assert_non_null(conf_find_res(u.c, "a"));
	unit_done(&u);

	memfs_load(&u, &m, "/memfs/top.conf", "include \"wide.conf\";\n" UNIT_RES(""));
	assert_rejected(&u);
	assert_true(memfs_error_in(u.d, "/memfs/wide.conf", 2, 9,
				   "expanding '/memfs/wide/*.res' reads more than the 65536 "
				   "directory entries"));
	assert_int_equal(diag_count(u.d, DIAG_ERR), 1);
	unit_done(&u);
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
		cmocka_unit_test(test_include_fs_hook),
		cmocka_unit_test(test_include_fs_glob_bounded),
	};

	return cmocka_run_group_tests_name("conf-include", tests, NULL, unit_teardown);
}
