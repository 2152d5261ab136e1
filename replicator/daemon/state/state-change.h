/*
 * state/: the door of the state room: the one writer of a resource's
 * state (HACKING.md, "The rooms"). Uses nothing of the daemon; events and
 * the device's users go through struct upcalls.
 */
#ifndef TANDEM_STATE_CHANGE_H
#define TANDEM_STATE_CHANGE_H

#include "tandemd.h"

/*
 * The one writer of the state (doc/state-machine.md): r->st and r->vs[]
 * (each volume's disk and replication state) change only here, under
 * st_lock, checked against the state table and logged by name. Any thread; never with
 * st_lock held (v->lock may be held: v->lock comes before st_lock).
 */
#define SC_ROLE (1u << 0)
#define SC_CONN (1u << 1)      /* with the peer's role and disk (s.peer, s.pdsk) */
#define SC_SUSP_USER (1u << 2)
#define SC_SUSP_NOD (1u << 3)
#define SC_SUSP_FEN (1u << 4)
#define SC_USER_ISP (1u << 5)
#define SC_DISK (1u << 6)      /* volume vol's disk (vol -1: every volume's) */
#define SC_REPL (1u << 7)      /* volume vol's replication state */
#define SC_SUSP_QUO (1u << 8)  /* no quorum (control/quorum.c) */
struct state_chg {
	unsigned int mask;     /* SC_*: the fields that change */
	struct state s;        /* their values (resource-wide fields) */
	int vol;               /* index into r->vols, for SC_DISK and SC_REPL */
	enum state_disk disk;  /* SC_DISK */
	enum state_disk disk_from; /* vol -1: only the volumes at least this */
	enum state_conn repl;  /* SC_REPL */
	enum state_how how;    /* STATE_SOFT: asked for; STATE_HARD: happened */
	bool force;            /* --force (a hard change) */
};
/*
 * A live connection's state (at least Connected) is derived from its
 * volumes' replication states: the highest of them. SC_REPL changes one;
 * SC_CONN with CONN_CONNECTED asks for the derived state, any other live
 * state is taken as given (PausedSyncS/T while a resync is paused).
 */
enum state_conn state_change_live(struct resource *r);
/* 0, or -EPERM (a soft change the rules refuse: logged) or -EINVAL. */
int state_change(struct resource *r, const struct state_chg *c, const char *why);
/* What the rules need besides the states: the configuration, the clients. */
struct state_ctx state_change_ctx(const struct resource *r, bool force);
/* resource_init: r->vs for r->n_vols volumes (numbers vnr); Secondary,
 * StandAlone, every disk Diskless. fini frees r->vs. */
int state_change_init(struct resource *r, const unsigned int *vnr);
void state_change_fini(struct resource *r);
/* Hard changes of one field (v: a volume's state, v->st): */
int state_change_disk(struct vol_state *v, enum state_disk d, const char *why);
int state_change_disks(struct resource *r, enum state_disk d, const char *why);
int state_change_repl(struct vol_state *v, enum state_conn repl, const char *why);
/* conn CONN_CONNECTED: the live state its volumes make (see below). */
int state_change_conn(struct resource *r, enum state_conn conn, enum state_role peer,
		      enum state_disk pdsk, const char *why);
int state_change_flag(struct resource *r, unsigned int mask, bool on, const char *why);

#endif
