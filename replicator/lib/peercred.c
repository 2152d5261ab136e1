/*
 * peercred: SO_PEERCRED and the lookups behind a group allow-list, with
 * the reentrant calls (the daemon asks from its NBD accept thread).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "peercred.h"

#define LOOKUP_BUF_MAX (1u << 20)

int peercred_of(int fd, struct ucred *out)
{
	socklen_t len = sizeof(*out);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, out, &len) < 0)
		return -errno;
	return 0;
}

int peercred_group(const char *name, gid_t *gid)
{
	size_t len = 16384;
	struct group gr, *grp = NULL;
	char *buf = NULL;
	int rc;

	for (;;) {
		char *nb = realloc(buf, len);

		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		rc = getgrnam_r(name, &gr, buf, len, &grp);
		if (rc != ERANGE || len >= LOOKUP_BUF_MAX)
			break;
		len *= 2;
	}
	if (grp)
		*gid = gr.gr_gid;
	free(buf);
	if (grp)
		return 0;
	/* not found is 0 and NULL; some NSS modules say ENOENT or ESRCH */
	return !rc || rc == ENOENT || rc == ESRCH ? -ENOENT : -rc;
}

bool peercred_in_group(uid_t uid, gid_t gid)
{
	struct passwd pw, *pwp = NULL;
	size_t len = 16384;
	gid_t *groups = NULL;
	bool member = false;
	char *buf = NULL;
	int n = 64, i;

	for (;;) {
		char *nb = realloc(buf, len);

		if (!nb)
			goto out;
		buf = nb;
		if (getpwuid_r(uid, &pw, buf, len, &pwp) != ERANGE || len >= LOOKUP_BUF_MAX)
			break;
		len *= 2;
	}
	if (!pwp)
		goto out;
	if (pw.pw_gid == gid) {
		member = true;
		goto out;
	}
	for (;;) {
		gid_t *ng = realloc(groups, (size_t)n * sizeof(*groups));
		int want = n;

		if (!ng)
			goto out;
		groups = ng;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &want) >= 0) {
			n = want;
			break;
		}
		if (want <= n || want > 65536)
			goto out;
		n = want;
	}
	for (i = 0; i < n && !member; i++)
		member = groups[i] == gid;
out:
	free(groups);
	free(buf);
	return member;
}
