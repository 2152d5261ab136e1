/*
 * unit.h: helpers shared by the cmocka unit tests of tests/unit.
 *
 * Cleanup that survives a failed assertion, loading a configuration from
 * a string, capturing diagnostics as text, asserting that a diagnostic
 * exists at a position, temporary directories for include tests, and
 * running a piece of code in a child process (for inputs that might crash
 * the library under the sanitizers, so that one crash fails one test
 * instead of the whole program).
 */
#ifndef TANDEM_TESTS_UNIT_H
#define TANDEM_TESTS_UNIT_H

#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf.h"
#include "diag.h"

/* The host name the tests load configurations as. */
#define UNIT_HOST "alpha"
/* The name given to configurations loaded from a string. */
#define UNIT_FILE "test.conf"

#define UNIT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- cleanup */

/*
 * A failing assertion leaves the test with a longjmp, past its own
 * cleanup; under LeakSanitizer that would turn one failure into a leak
 * report for the whole program. So every resource a test allocates is
 * registered here and released early by unit_release() when the test
 * gets that far, else by unit_teardown() (the group teardown).
 */
struct unit_deferred {
	void (*fn)(void *p);
	void *p;
};

static struct unit_deferred *unit_deferred;
static size_t unit_n_deferred, unit_cap_deferred;

static inline void *unit_defer(void (*fn)(void *p), void *p)
{
	if (!p)
		return p;
	if (unit_n_deferred == unit_cap_deferred) {
		size_t cap = unit_cap_deferred ? 2 * unit_cap_deferred : 64;
		struct unit_deferred *n = realloc(unit_deferred, cap * sizeof(*n));

		assert_non_null(n);
		unit_deferred = n;
		unit_cap_deferred = cap;
	}
	unit_deferred[unit_n_deferred].fn = fn;
	unit_deferred[unit_n_deferred++].p = p;
	return p;
}

/* Release p now (it must have been registered); NULL is ignored. */
static inline void unit_release(void *p)
{
	size_t i;

	if (!p)
		return;
	for (i = unit_n_deferred; i-- > 0;) {
		if (unit_deferred[i].p == p) {
			struct unit_deferred e = unit_deferred[i];

			memmove(&unit_deferred[i], &unit_deferred[i + 1],
				(unit_n_deferred - i - 1) * sizeof(*unit_deferred));
			unit_n_deferred--;
			e.fn(e.p);
			return;
		}
	}
	fail_msg("unit_release: %p was not registered", p);
}

static inline int unit_teardown(void **state)
{
	(void)state;
	while (unit_n_deferred > 0) {
		struct unit_deferred e = unit_deferred[--unit_n_deferred];

		e.fn(e.p);
	}
	free(unit_deferred);
	unit_deferred = NULL;
	unit_cap_deferred = 0;
	return 0;
}

static inline void unit_free_diag(void *p)
{
	diag_free(p);
}

static inline void unit_free_conf(void *p)
{
	conf_free(p);
}

/* A malloc'd string (or anything for free()), registered for cleanup. */
static inline char *unit_str(char *s)
{
	assert_non_null(s);
	return unit_defer(free, s);
}

/* ---------------------------------------------------------------- diagnostics */

/* Everything diag_print() writes, as a malloc'd string. */
static inline char *unit_diag_text(const struct diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	diag_print(d, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/*
 * Is there a diagnostic of severity sev at line:col (0 = any line or
 * column) whose "keyword: message" contains sub (NULL = anything)?
 */
static inline bool unit_has_diag(const struct diag *d, enum diag_sev sev, int line, int col,
				 const char *sub)
{
	unsigned int i;

	for (i = 0; i < diag_total(d); i++) {
		enum diag_sev s;
		struct diag_loc loc;
		const char *kw, *msg;
		char *both;
		bool hit;

		assert_true(diag_get(d, i, &s, &loc, &kw, &msg));
		if (s != sev || (line && loc.line != line) || (col && loc.col != col))
			continue;
		if (!sub)
			return true;
		assert_true(asprintf(&both, "%s: %s", kw ? kw : "", msg) >= 0);
		hit = strstr(both, sub) != NULL;
		free(both);
		if (hit)
			return true;
	}
	return false;
}

static inline void unit_fail_with_diags(const struct diag *d, const char *file, int line,
					const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static inline void unit_fail_with_diags(const struct diag *d, const char *file, int line,
					const char *fmt, ...)
{
	char *text = unit_diag_text(d);
	char *what = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	print_error("%s\n--- diagnostics (%u) ---\n%s--- end ---\n", what ? what : fmt,
		    diag_total(d), text ? text : "");
	free(what);
	free(text);
	_fail(file, line);
}

static inline void unit_assert_diag(const struct diag *d, enum diag_sev sev, int line, int col,
				    const char *sub, const char *file, int at)
{
	if (!unit_has_diag(d, sev, line, col, sub))
		unit_fail_with_diags(d, file, at, "expected an %s at %d:%d containing '%s'",
				     sev == DIAG_ERR ? "error" : "warning", line, col,
				     sub ? sub : "");
}

static inline void unit_assert_no_diag(const struct diag *d, enum diag_sev sev, const char *file,
				       int at)
{
	if (diag_count(d, sev) != 0)
		unit_fail_with_diags(d, file, at, "expected no %s, found %u",
				     sev == DIAG_ERR ? "error" : "warning", diag_count(d, sev));
}

/* An error/warning at line:col (0 = any) containing sub. */
#define assert_error_at(d, line, col, sub) \
	unit_assert_diag((d), DIAG_ERR, (line), (col), (sub), __FILE__, __LINE__)
#define assert_warning_at(d, line, col, sub) \
	unit_assert_diag((d), DIAG_WARN, (line), (col), (sub), __FILE__, __LINE__)
#define assert_no_errors(d) unit_assert_no_diag((d), DIAG_ERR, __FILE__, __LINE__)
#define assert_no_warnings(d) unit_assert_no_diag((d), DIAG_WARN, __FILE__, __LINE__)

/* A printf-formatted string, registered for cleanup. */
static inline char *unit_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static inline char *unit_fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	assert_true(n >= 0);
	return unit_str(s);
}

/* ---------------------------------------------------------------- loading */

/* Two valid host sections, alpha and beta, with minor m and port p (strings). */
#define UNIT_HOSTS_AT(m, p)                                                                   \
	"  on alpha { device minor " m "; disk /dev/sda" m "; address 10.0.0.1:" p             \
	"; meta-disk internal; }\n"                                                           \
	"  on beta { device minor " m "; disk /dev/sdb" m "; address 10.0.0.2:" p              \
	"; meta-disk internal; }\n"
#define UNIT_HOSTS UNIT_HOSTS_AT("0", "7789")
/* A valid resource r0 whose body starts on line 2. */
#define UNIT_RES(body) "resource r0 {\n" body UNIT_HOSTS "}\n"

/* A loaded configuration and its diagnostics; release with unit_done(). */
struct unit_conf {
	struct diag *d;
	struct conf *c;
	int rc;
};

static inline void unit_load_opts(struct unit_conf *u, const char *name, const char *text,
				  const struct conf_load_opts *opts)
{
	assert_int_equal(diag_new(&u->d), 0);
	unit_defer(unit_free_diag, u->d);
	u->c = NULL;
	u->rc = conf_load_buf(name, text, strlen(text), opts, u->d, &u->c);
	unit_defer(unit_free_conf, u->c);
	if (u->rc == 0)
		assert_non_null(u->c);
	else
		assert_null(u->c);
}

/* Load text as host `host` (floating sections are not matched by address). */
static inline void unit_load_as(struct unit_conf *u, const char *host, const char *text)
{
	struct conf_load_opts o = {.hostname = host, .no_ip_check = true};

	unit_load_opts(u, UNIT_FILE, text, &o);
}

static inline void unit_load(struct unit_conf *u, const char *text)
{
	unit_load_as(u, UNIT_HOST, text);
}

static inline void unit_load_file(struct unit_conf *u, const char *path)
{
	struct conf_load_opts o = {.hostname = UNIT_HOST, .no_ip_check = true};

	assert_int_equal(diag_new(&u->d), 0);
	unit_defer(unit_free_diag, u->d);
	u->c = NULL;
	u->rc = conf_load(path, &o, u->d, &u->c);
	unit_defer(unit_free_conf, u->c);
	if (u->rc == 0)
		assert_non_null(u->c);
	else
		assert_null(u->c);
}

static inline void unit_done(struct unit_conf *u)
{
	unit_release(u->c);
	unit_release(u->d);
	u->c = NULL;
	u->d = NULL;
}

static inline void unit_assert_loaded(const struct unit_conf *u, const char *file, int at)
{
	if (u->rc != 0 || diag_count(u->d, DIAG_ERR) != 0)
		unit_fail_with_diags(u->d, file, at, "expected the configuration to load, rc=%d",
				     u->rc);
}

static inline void unit_assert_rejected(const struct unit_conf *u, const char *file, int at)
{
	if (u->rc == 0 || diag_count(u->d, DIAG_ERR) == 0)
		unit_fail_with_diags(u->d, file, at,
				     "expected the configuration to be rejected with errors, rc=%d",
				     u->rc);
}

#define assert_loaded(u) unit_assert_loaded((u), __FILE__, __LINE__)
#define assert_rejected(u) unit_assert_rejected((u), __FILE__, __LINE__)

/* ---------------------------------------------------------------- lookups */

static inline const struct conf_host *unit_host(const struct conf_res *r, const char *name)
{
	const struct conf_host *h;

	for (h = r->hosts; h; h = h->next)
		if (conf_host_has_name(h, name))
			return h;
	return NULL;
}

static inline const struct conf_vol *unit_vol(const struct conf_host *h, unsigned int vnr)
{
	const struct conf_vol *v;

	for (v = h->vols; v; v = v->next)
		if (v->vnr == vnr)
			return v;
	return NULL;
}

static inline unsigned int unit_count_hosts(const struct conf_res *r)
{
	const struct conf_host *h;
	unsigned int n = 0;

	for (h = r->hosts; h; h = h->next)
		n++;
	return n;
}

static inline unsigned int unit_count_vols(const struct conf_host *h)
{
	const struct conf_vol *v;
	unsigned int n = 0;

	for (v = h->vols; v; v = v->next)
		n++;
	return n;
}

/* ---------------------------------------------------------------- files */

static inline int unit_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void unit_rmtree_free(void *p)
{
	nftw(p, unit_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(p);
}

/* A fresh directory under $TMPDIR (or /tmp), removed with its contents at
 * unit_release() or teardown. */
static inline char *unit_tmpdir(void)
{
	const char *tmp = getenv("TMPDIR");
	char *path = malloc(PATH_MAX);

	assert_non_null(path);
	snprintf(path, PATH_MAX, "%s/tandem-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(path)) {
		free(path);
		fail_msg("mkdtemp: %s", strerror(errno));
	}
	return unit_defer(unit_rmtree_free, path);
}

/* Write dir/rel (creating the directories in rel) with text. */
static inline void unit_write(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX];
	char *slash;
	FILE *f;

	assert_true((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) < sizeof(path));
	for (slash = path + strlen(dir) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		if (mkdir(path, 0700) < 0)
			assert_int_equal(errno, EEXIST);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* ---------------------------------------------------------------- isolation */

/*
 * Run fn(arg) in a child process and return its wait status. The child
 * must not use cmocka assertions: it reports a failure with _exit(n),
 * n > 0, and ends with _exit(0) when fn returns; a sanitizer report
 * (exit status 1) or a signal shows as a failure too.
 */
static inline int unit_in_child(void (*fn)(void *arg), void *arg)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

#define assert_child_ok(status)                                                              \
	do {                                                                                 \
		int st_ = (status);                                                          \
		if (!(WIFEXITED(st_) && WEXITSTATUS(st_) == 0)) {                            \
			print_error("child %s %d (a sanitizer report is above)\n",         \
				    WIFSIGNALED(st_) ? "killed by signal" : "exited with",   \
				    WIFSIGNALED(st_) ? WTERMSIG(st_) : WEXITSTATUS(st_));    \
			fail();                                                              \
		}                                                                            \
	} while (0)

#endif
