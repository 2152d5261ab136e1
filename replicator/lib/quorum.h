/*
 * quorum: DRBD 9's `options { quorum off|majority; on-no-quorum
 * suspend-io|io-error; }` as pure rules (doc/arbiter.md §6.5): whether a
 * Secondary may become Primary, and what a resource's new I/O does, given
 * whether this node's partition is quorate (corosync votequorum, as
 * tandem-arbiterd tells tandemd; without an arbiter it counts as quorate,
 * §8). tandemd applies them (control/quorum.c). The arbiter's own copy of
 * the rules (fencing/arb-policy.h, arb_policy_quorum_*) answers the same;
 * tests/unit/test-quorum.c checks this one against §6.5's table.
 */
#ifndef TANDEM_QUORUM_H
#define TANDEM_QUORUM_H

#include <stdbool.h>

#include "conf.h"
#include "state.h"

/* `primary` refused for want of quorum: drbdsetup's exit code of a refused
 * state change (doc/arbiter.md §6.5). */
#define QUORUM_EXIT_NO_QUORUM 11

enum quorum_policy {
	QUORUM_OFF,
	QUORUM_MAJORITY,
};

/* on-no-quorum, numbered as in the arbiter's FACTS (doc/arbiter.md §2) */
enum quorum_onq {
	QUORUM_ONQ_SUSPEND_IO,
	QUORUM_ONQ_IO_ERROR,
};

enum quorum_io {
	QUORUM_IO_ON,      /* new I/O goes on (again, once quorum is back) */
	QUORUM_IO_SUSPEND, /* new I/O waits (susp bit 3) */
	QUORUM_IO_ERROR,   /* new writes fail with EIO */
};

struct quorum_conf {
	enum quorum_policy policy;
	enum quorum_onq onq;
};

/* The resource's settings (defaults applied). */
struct quorum_conf quorum_conf_of(const struct conf *c, const struct conf_res *r);
const char *quorum_policy_name(enum quorum_policy p);
const char *quorum_onq_name(enum quorum_onq q);

/*
 * May a Secondary become Primary? 0: yes; *forced is then true when only
 * --force allowed it (the caller logs that). -EPERM: no quorum (exit
 * QUORUM_EXIT_NO_QUORUM). -EINVAL: a policy this version does not know.
 */
int quorum_may_promote(enum quorum_policy p, bool quorate, bool force, bool *forced);

/*
 * What the resource's new I/O does with this role and quorum. `forced`: the
 * node was promoted with --force while it had no quorum, and quorum has not
 * come back since: the operator chose to serve I/O without it, so the
 * policy does not undo that promotion (it applies again once quorum came
 * back and is lost anew).
 */
enum quorum_io quorum_io(struct quorum_conf q, bool quorate, enum state_role role, bool forced);

#endif
