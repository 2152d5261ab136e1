/*
 * conf-glob: the expansion of an include pattern, with a bound on its cost.
 *
 * glob(3) walks every directory that a wildcard in a directory component
 * names, so one pattern with a star for each of four absolute path
 * components reads the whole filesystem, /proc and /sys included: minutes
 * of readdir() and a path list of gigabytes before the CONF_FILES_MAX check
 * could refuse it.
 * conf_glob() keeps glob's semantics (sorted, leading dots only by an
 * explicit dot) but reads its directories through GLOB_ALTDIRFUNC hooks
 * that count the entries against a budget: CONF_GLOB_ENTRIES_MAX for all
 * the includes of one configuration, so no file of includes can multiply
 * it.
 *
 * The directories are the real ones, or those of the caller's
 * struct conf_fs (conf_load_opts.fs), reached through the same hooks.
 *
 * glob's directory hooks take no context argument, so the expansion in
 * progress is thread-local: each thread expands one pattern at a time,
 * and no other state is shared.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "conf-int.h"

struct conf_glob {
	const struct conf_fs *fs; /* NULL: the real filesystem */
	void *fs_ctx;
	size_t left;
	bool over;
};

static _Thread_local struct conf_glob *glob_now;

static void *glob_opendir(const char *name)
{
	struct conf_glob *g = glob_now;
	void *dir;
	int rc;

	if (g->over)
		return NULL;
	if (!g->fs)
		return opendir(name);
	rc = g->fs->fs_opendir(g->fs_ctx, name, &dir);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	return dir;
}

static struct dirent *glob_readdir(void *dir)
{
	struct conf_glob *g = glob_now;
	struct dirent *ent = NULL;
	int rc;

	if (g->left == 0) {
		g->over = true;
		return NULL;
	}
	g->left--;
	if (!g->fs)
		return readdir(dir);
	rc = g->fs->fs_readdir(g->fs_ctx, dir, &ent);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	return ent;
}

static void glob_closedir(void *dir)
{
	struct conf_glob *g = glob_now;

	if (g->fs)
		g->fs->fs_closedir(g->fs_ctx, dir);
	else
		closedir(dir);
}

static int glob_stat(const char *name, struct stat *st)
{
	struct conf_glob *g = glob_now;
	int rc = g->fs->fs_stat(g->fs_ctx, name, st);

	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

int conf_glob(struct conf *c, const char *pattern, glob_t *out)
{
	struct conf_glob g = {.fs = c->fs, .fs_ctx = c->fs_ctx, .left = c->glob_left};
	int rc;

	out->gl_opendir = glob_opendir;
	out->gl_readdir = glob_readdir;
	out->gl_closedir = glob_closedir;
	out->gl_stat = g.fs ? glob_stat : stat;
	out->gl_lstat = g.fs ? glob_stat : lstat;
	glob_now = &g;
	rc = glob(pattern, GLOB_ALTDIRFUNC, NULL, out);
	glob_now = NULL;
	c->glob_left = g.left;
	if (g.over) {
		if (rc == 0)
			globfree(out);
		return -E2BIG;
	}
	switch (rc) {
	case 0:
		return 0;
	case GLOB_NOMATCH:
		return -ENOENT;
	case GLOB_NOSPACE:
		return -ENOMEM;
	default:
		return -EIO;
	}
}
