/*
 * quorum: the rules of `quorum` and `on-no-quorum` (quorum.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "quorum.h"

struct quorum_conf quorum_conf_of(const struct conf *c, const struct conf_res *r)
{
	const char *p = conf_res_text(c, r, CONF_SECT_OPTIONS, "quorum");
	const char *q = conf_res_text(c, r, CONF_SECT_OPTIONS, "on-no-quorum");

	return (struct quorum_conf){
		.policy = p && !strcmp(p, "majority") ? QUORUM_MAJORITY : QUORUM_OFF,
		.onq = q && !strcmp(q, "io-error") ? QUORUM_ONQ_IO_ERROR : QUORUM_ONQ_SUSPEND_IO,
	};
}

const char *quorum_policy_name(enum quorum_policy p)
{
	return p == QUORUM_MAJORITY ? "majority" : "off";
}

const char *quorum_onq_name(enum quorum_onq q)
{
	return q == QUORUM_ONQ_IO_ERROR ? "io-error" : "suspend-io";
}

int quorum_may_promote(enum quorum_policy p, bool quorate, bool force, bool *forced)
{
	if ((unsigned int)p > QUORUM_MAJORITY || !forced)
		return -EINVAL;
	*forced = false;
	if (p == QUORUM_OFF || quorate)
		return 0;
	if (!force)
		return -EPERM;
	*forced = true;
	return 0;
}

enum quorum_io quorum_io(struct quorum_conf q, bool quorate, enum state_role role, bool forced)
{
	if (q.policy != QUORUM_MAJORITY || quorate || forced || role != ROLE_PRIMARY)
		return QUORUM_IO_ON;
	return q.onq == QUORUM_ONQ_IO_ERROR ? QUORUM_IO_ERROR : QUORUM_IO_SUSPEND;
}
