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
 * glob's directory hooks take no context argument, so the count of the
 * expansion in progress is thread-local: each thread expands one pattern
 * at a time, and no other state is shared.
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
	size_t left;
	bool over;
};

static _Thread_local struct conf_glob *glob_now;

static void *glob_opendir(const char *name)
{
	if (glob_now && glob_now->over)
		return NULL;
	return opendir(name);
}

static struct dirent *glob_readdir(void *dir)
{
	struct conf_glob *g = glob_now;

	if (g) {
		if (g->left == 0) {
			g->over = true;
			return NULL;
		}
		g->left--;
	}
	return readdir(dir);
}

static void glob_closedir(void *dir)
{
	closedir(dir);
}

int conf_glob(const char *pattern, size_t *left, glob_t *out)
{
	struct conf_glob g = {.left = *left};
	int rc;

	out->gl_opendir = glob_opendir;
	out->gl_readdir = glob_readdir;
	out->gl_closedir = glob_closedir;
	out->gl_stat = stat;
	out->gl_lstat = lstat;
	glob_now = &g;
	rc = glob(pattern, GLOB_ALTDIRFUNC, NULL, out);
	glob_now = NULL;
	*left = g.left;
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
