/*
 * tandemd.h: the frame of the daemon (replicator/daemon): the daemon and
 * its resources, which every room shares, and the table of upcalls. Each
 * room's functions are behind its own door (HACKING.md, "The rooms"):
 *
 *   control/  ->  front/  ->  peer/  ->  volume/  ->  state/
 *
 * A room calls only the doors to its right. A call that would run to the
 * left goes through struct upcalls, which control fills at start.
 */
#ifndef TANDEMD_H
#define TANDEMD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <qb/qbloop.h>

#include "conf.h"
#include "defer.h"
#include "state.h"

struct nbd_srv;
struct peer;
struct peer_req;
struct tandemd;
struct volume;

/* A volume's part of the state (r->vs[i] is r->vols[i]'s): state/ writes
 * it, any thread reads it (volume_disk(), volume_repl()). */
struct vol_state {
	struct resource *r;
	unsigned int idx;      /* in r->vols and r->vs */
	unsigned int vnr;
	enum state_disk disk;  /* atomic */
	enum state_conn repl;  /* atomic: in a session (StandAlone: no session yet) */
};

struct resource {
	struct tandemd *d;
	const struct conf_res *cr;
	const char *name;
	bool up;
	bool conf_pending; /* up while its volumes changed in the configuration */
	struct state st;      /* role and disk: main loop; conn, peer, pdsk: peer thread */
	pthread_mutex_t st_lock; /* st */
	struct volume *vols;
	struct vol_state *vs;  /* the volumes' states, n_vols (state/) */
	unsigned int n_vols;
	struct nbd_srv *nbd; /* while Primary */
	struct peer *peer;   /* while connecting or connected (peer/) */
	bool uuid_pending;   /* atomic: the new current UUID of a lost peer waits
			      * until frozen I/O resumes (DRBD's NEW_CUR_UUID) */
	char sb_save[4096];  /* the latest split-brain save set ("" if none) */
	/* fencing (control/fence.c), under st_lock */
	struct peer_req *held; /* writes unacknowledged when the link went (susp_fen) */
	pthread_cond_t fence_cond; /* susp_fen lifted */
	bool fence_running;    /* fence-peer runs */
	bool fence_placed;     /* fence-peer succeeded: unfence-peer when both UpToDate */
	int fence_result;      /* the last exit code, -1 if none */
	bool peer_outdated;    /* PEER_OUT_DATED in the metadata */
	qb_loop_timer_handle disk_watch; /* disk-timeout, while up (main loop) */
	bool disk_watch_on;
	/* quorum (control/quorum.c) */
	int quorum_io;         /* atomic: enum quorum_io, what new NBD I/O does (front/) */
	bool quorum_forced;    /* primary --force without quorum; until quorum is back */
	int64_t primary_since; /* CLOCK_REALTIME s of the last promotion, 0 if Secondary
				* (state/, under st_lock) */
};

struct tandemd {
	struct conf *conf;
	struct conf_load_opts conf_opts;
	const char *conf_path;
	const char *run_dir;
	const char *state_dir; /* split-brain save sets */
	qb_loop_t *loop;
	pthread_t main_thread; /* runs the loop */
	struct resource **res;
	unsigned int n_res;
	/* res and n_res: the main loop changes them (reload) under the write
	 * lock; other threads read them under the read lock */
	pthread_rwlock_t res_lock;
	struct conf **retired; /* older configs still referred to by up resources */
	unsigned int n_retired;
	struct ctl *ctl;
	struct defer *defer;
	const struct upcalls *up; /* filled by control at start (control/main.c) */
	bool fault_injection; /* TANDEM_FAULT_INJECTION=1 in the environment */
	bool quorate; /* atomic: this node's partition has quorum, as the arbiter last said
		       * (`quorum` command); true until told (doc/arbiter.md §8) */
};

/*
 * The configuration, from any thread. A reload (reload.c, main loop)
 * publishes the new one with an atomic store and never frees an old one
 * while the daemon runs, so what a thread read stays valid.
 */
static inline struct conf *tandemd_conf(const struct tandemd *d)
{
	return __atomic_load_n(&d->conf, __ATOMIC_ACQUIRE);
}

static inline const struct conf_res *resource_cr(const struct resource *r)
{
	return __atomic_load_n(&r->cr, __ATOMIC_ACQUIRE);
}

/* A refusal to hand back to the control client. */
struct reply_err {
	int exit;  /* tandemadm exit code */
	int ss;    /* SS_* or 0 */
	char msg[512];
	char hint[256];
};

#define ERRF(e, code, ...)                                                                         \
	do {                                                                                       \
		(e)->exit = (code);                                                                \
		snprintf((e)->msg, sizeof((e)->msg), __VA_ARGS__);                                 \
	} while (0)

/* A consistent copy of the state, from any thread (state/ writes it). */
static inline struct state resource_state(struct resource *r)
{
	struct state s;

	pthread_mutex_lock(&r->st_lock);
	s = r->st;
	pthread_mutex_unlock(&r->st_lock);
	return s;
}

/* A resource by name; the caller holds d->res_lock, or is the main loop. */
static inline struct resource *resource_find(struct tandemd *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->n_res; i++)
		if (!strcmp(d->res[i]->name, name))
			return d->res[i];
	return NULL;
}

/* A handler's exit code, on the main loop (control/handler.c). */
typedef void (*handler_done_fn)(struct resource *r, const char *name, int result, void *arg);

/*
 * The upcalls: every call that runs against the arrows, as one table.
 * Each row says which room asks and which answers; control fills it with
 * its own functions (or front's, or peer's) before any thread starts.
 */
struct upcalls {
	/* state -> control: a state changed, for `tandemadm events` (main loop) */
	void (*event)(struct tandemd *d, const char *res, const char *what, const char *old,
		      const char *new_value);
	/* state -> control: both disks are UpToDate (unfence-peer; any thread) */
	void (*both_uptodate)(struct resource *r);
	/* state, peer -> front: the device is in use (NBD clients, a kernel nbd) */
	bool (*device_open)(const struct resource *r);
	/* volume -> peer: writes go to the peer (else they mark the bitmap) */
	bool (*replicating)(struct resource *r);
	/* volume -> control, on the main loop: on-io-error detached the disk
	 * or called local-io-error; pass_on passed an error on */
	void (*volume_failed)(struct volume *v);
	void (*volume_error_passed)(struct volume *v);
	/* peer -> control: run a handler (handler.c): see control/control.h */
	int (*handler_run)(struct resource *r, const char *name, int vnr, handler_done_fn done,
			   void *arg);
	int (*handler_run_wait)(struct resource *r, const char *name, int vnr,
				bool (*abort_fn)(void *), void *arg);
	/* peer -> control: fencing (fence.c) */
	bool (*fence_frozen)(struct resource *r);
	int (*fence_wait)(struct resource *r);
	void (*conn_lost)(struct resource *r);
	void (*conn_back)(struct resource *r);
	/* peer -> control: call-pri-lost-after-sb decided to give up Primary */
	void (*demote_after_sb)(struct resource *r);
};

#endif
