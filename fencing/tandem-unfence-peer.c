/*
 * tandem-unfence-peer: the unfence-peer (or after-resync-target) handler.
 * Removes the constraint tandem-fence-RES by id, only when this node and
 * the peer are UpToDate on every volume, as tandemd reports them now (the
 * handler environment only if tandemd cannot be asked: it describes the
 * moment the handler was started). Exit 0 when the constraint is gone
 * (removed now, or there was none: running it again is not an error);
 * 2 when it was refused and the constraint stays; 1 on errors: the CIB
 * could not be read or changed, or the disk states are not known.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fence-cib.h"
#include "fence-ctl.h"
#include "fence-handler.h"
#include "fence-policy.h"

static int unfence(const struct fence_handler_opts *o, struct fence_cib *cib)
{
	char id[FENCE_POLICY_NAME_MAX + 16];
	struct fence_constraint have;
	struct fence_ctl_res st;
	struct fence_out out;
	const char *src;
	int rc;

	if (fence_policy_id(o->res, id, sizeof(id)) < 0) {
		fence_handler_say(o, "resource name too long");
		return 1;
	}
	if (fence_cib_open(cib, o->prog, o->dc_timeout) < 0) {
		fence_handler_say(o, "%s", fence_cib_error(cib));
		return 1;
	}
	if (fence_cib_get(cib, id, &have) == -ENOENT) {
		if (!o->quiet)
			fence_handler_say(o, "no constraint %s: nothing to do", id);
		return 0;
	}
	src = fence_handler_local(o, &st);
	fence_policy_unfence(src ? st.disk : FENCE_DISK_NONE, st.pdisk, &out);
	if (out.action != FENCE_ACT_REMOVE) {
		fence_handler_say(o, "this node %s, peer %s (from %s): %s",
				  fence_handler_disk_name(st.disk), fence_handler_disk_name(st.pdisk),
				  src ? src : "nowhere", out.why);
		return out.exit;
	}
	rc = fence_cib_remove(cib, id, have.forbids ? &have : NULL);
	if (rc == 0) {
		fence_handler_say(o, "removed %s (%s, from %s)", id, out.why, src);
		return 0;
	}
	if (rc != -ENOENT || fence_cib_refresh(cib, o->dc_timeout ? o->dc_timeout : 1) < 0) {
		fence_handler_say(o, "%s", fence_cib_error(cib));
		return 1;
	}
	if (fence_cib_get(cib, id, &have) == -ENOENT) {
		fence_handler_say(o, "%s was removed meanwhile", id);
		return 0;
	}
	/* placed anew between our read and our delete: it is not ours to judge */
	fence_handler_say(o, "%s changed while it was being removed; left in place", id);
	return 1;
}

int main(int argc, char **argv)
{
	struct fence_handler_opts o;
	struct fence_cib *cib;
	int rc, lock;

	fence_handler_elapsed();
	rc = fence_handler_parse(&o, argc, argv);
	if (rc >= 0)
		return rc;
	if (o.list) {
		fprintf(stderr, "%s: --list and --clear are options of tandem-fence-peer "
				"(tandemadm fence-constraints)\n",
			o.prog);
		return 1;
	}
	lock = fence_handler_lock(&o);
	cib = fence_cib_new(o.prog);
	if (!cib) {
		fence_handler_say(&o, "out of memory");
		return 1;
	}
	rc = unfence(&o, cib);
	fence_cib_free(cib);
	if (lock >= 0)
		close(lock);
	return rc;
}
