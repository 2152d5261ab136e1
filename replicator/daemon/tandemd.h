/*
 * tandemd.h: private to the daemon (replicator/daemon): the daemon, its
 * resources and volumes. Divided by file.
 */
#ifndef TANDEMD_H
#define TANDEMD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>
#include <qb/qbloop.h>

#include "al.h"
#include "bdev.h"
#include "bitmap.h"
#include "conf.h"
#include "ioeng.h"
#include "md.h"
#include "state.h"

struct resource;
struct nbd_srv;
struct peer_req;

/* A write in flight, for serialising overlapping writes. */
struct inflight {
	uint64_t off, len;
	struct inflight *next;
};

/* /proc/drbd counters (KiB or counts), see doc/control-protocol.md. */
struct counters {
	uint64_t ns, nr; /* KiB sent to / received from the peer (atomic) */
	uint64_t dw, dr, al, bm;
	int64_t lo, ap;
	int64_t pe, ua; /* sent to the peer, unanswered / from it, being answered (atomic) */
	int64_t frozen; /* requests waiting while I/O is frozen (lock) */
};

struct volume {
	struct resource *res;
	const struct conf_vol *cv;
	unsigned int vnr;
	enum state_disk disk;
	struct md *md; /* NULL while detached */
	struct md_sb sb;
	struct bitmap *bm;
	struct al *al;
	struct bdev *data;
	struct ioeng *io;   /* data I/O: io_uring, else a thread pool */
	uint64_t size_sect; /* exported size */
	pthread_mutex_t lock; /* al, bm, sb, counters, inflight */
	pthread_mutex_t md_lock; /* orders metadata writes (volume_unlock); before lock */
	bool sb_due, bm_due;     /* written by volume_unlock() (lock) */
	pthread_cond_t cond;
	struct inflight *inflight;
	struct counters c;
	/* group commit of the activity log (volume.c) */
	bool al_busy;             /* a thread is writing a transaction */
	bool md_busy;             /* volume_unlock() is writing metadata */
	unsigned char *al_block;  /* that transaction */
	unsigned char *al_pages;  /* evicted extents' bitmap pages */
	/* local I/O errors (on-io-error) */
	unsigned int users;       /* data requests inside the volume */
	bool failing;             /* detach pending: new requests get EIO */
	bool io_error_seen;       /* pass_on: an error was passed on */
	bool frozen;              /* new requests wait (connection handshake) */
	bool detaching;           /* detach writes the metadata back; requests wait */
	int wfc_class;            /* VOLUME_WFC_*, from the flags at attach */
	struct bdev_faults faults; /* TANDEM_FAULT_INJECTION only */
	unsigned int fault_ops;    /* VOLUME_FAULT_* */
	/* disk-timeout: local I/O in flight, and when it last made progress */
	unsigned int lio;         /* atomic */
	int64_t lio_progress_ms;  /* atomic; CLOCK_MONOTONIC */
	bool detach_wait;         /* a failed disk's detach waits for stuck requests */
	qb_loop_timer_handle detach_timer;
};

/* What a local I/O error hit. */
enum volume_err {
	VOLUME_ERR_DATA,
	VOLUME_ERR_MD,
};
/* Which startup timeout applies (wfc-timeout, degr-wfc-timeout,
 * outdated-wfc-timeout): ref/drbd-semantics.md §8. */
enum {
	VOLUME_WFC_DEFAULT,
	VOLUME_WFC_DEGRADED,
	VOLUME_WFC_OUTDATED,
};
#define VOLUME_FAULT_READ  1u
#define VOLUME_FAULT_WRITE 2u
#define VOLUME_FAULT_META  4u /* the metadata area too (internal metadata) */
#define VOLUME_FAULT_HANG  8u /* I/O hangs until the fault is cleared (disk-timeout) */
#define VOLUME_FAULT_FLUSH 16u /* only flushes fail (a cache that cannot be written back) */

struct tandemd;

struct resource {
	struct tandemd *d;
	const struct conf_res *cr;
	const char *name;
	bool up;
	bool conf_pending; /* up while its volumes changed in the configuration */
	struct state st;      /* role and disk: main loop; conn, peer, pdsk: peer thread */
	pthread_mutex_t st_lock; /* st */
	struct volume *vols;
	unsigned int n_vols;
	struct nbd_srv *nbd; /* while Primary */
	struct peer *peer;   /* while connecting or connected (peer.c) */
	char sb_save[4096];  /* the latest split-brain save set ("" if none) */
	/* fencing (fence.c), under st_lock */
	struct peer_req *held; /* writes unacknowledged when the link went (susp_fen) */
	pthread_cond_t fence_cond; /* susp_fen lifted */
	bool fence_running;    /* fence-peer runs */
	bool fence_placed;     /* fence-peer succeeded: unfence-peer when both UpToDate */
	int fence_result;      /* the last exit code, -1 if none */
	bool peer_outdated;    /* PEER_OUT_DATED in the metadata */
	qb_loop_timer_handle disk_watch; /* disk-timeout, while up (main loop) */
	bool disk_watch_on;
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
	bool fault_injection; /* TANDEM_FAULT_INJECTION=1 in the environment */
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

/* volume.c */
int volume_attach(struct volume *v, struct reply_err *e);
int volume_detach(struct volume *v, struct reply_err *e);
/* A write in three steps: begin (may wait for overlapping writes and AL
 * slots), submit with a completion callback, end. */
int volume_write_begin(struct volume *v, struct inflight *me);
void volume_write_end(struct volume *v, struct inflight *me, int rc);
int volume_submit(struct volume *v, enum ioeng_op op, void *buf, uint64_t off, uint32_t len,
		  void (*done)(void *arg, int res), void *arg);
int volume_flush(struct volume *v);
int volume_trim(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim);
/*
 * Metadata writes, never under v->lock (HACKING.md): with the lock held,
 * volume_sync_sb() and volume_writeback_bitmap_locked() say that the
 * superblock / the dirty bitmap pages must go to disk; volume_unlock()
 * drops the lock and writes them (a copy taken under it, in order with
 * every other metadata write), and returns 0 or the error. A failure takes
 * the on-io-error path (a metadata error: the disk is detached), so that
 * the flags and UUIDs in memory never silently differ from the disk's.
 */
int volume_sync_sb(struct volume *v);
int volume_unlock(struct volume *v);
/* A local I/O error: apply on-io-error (lock not held; any thread). */
void volume_io_error(struct volume *v, enum volume_err kind, const char *what, int rc);
/* The same, with the volume's lock held. */
void volume_io_error_locked(struct volume *v, enum volume_err kind, const char *what, int rc);
/* Replication (repl.c, sync.c, resync.c). */
void volume_freeze(struct volume *v, bool on);
void volume_mark_oos(struct volume *v, uint64_t off, uint64_t len);
void volume_clear_oos(struct volume *v, uint64_t off, uint64_t len);
/* The whole bitmap to disk (lock held; written by volume_unlock()). */
int volume_writeback_bitmap_locked(struct volume *v);
int volume_peer_write(struct volume *v, uint64_t off, uint32_t len, const void *buf, bool fua);
int volume_peer_trim(struct volume *v, uint64_t off, uint32_t len, bool zero);
int volume_read_frozen(struct volume *v, uint64_t off, uint32_t len, void *buf);
int volume_read_claimed(struct volume *v, uint64_t off, uint32_t len, void *buf, void *unused1,
			void *unused2);
void volume_read_release(struct volume *v, uint64_t off, uint32_t len);
int volume_rs_write(struct volume *v, uint64_t off, uint32_t len, const void *buf);
/* Tests: make the backing device fail (VOLUME_FAULT_*; 0 heals it). */
const struct bdev_faults *volume_fault_hooks(struct volume *v);
int volume_set_faults(struct volume *v, unsigned int ops);

/* peer.c: the connection to the peer (connect, disconnect). */
struct peer;
int peer_start(struct resource *r, bool discard_my_data, struct reply_err *e);
void peer_stop(struct resource *r);
bool peer_exited(const struct resource *r);
/* repl.c: the data path's side of the connection. */
uint64_t integrity_failures(struct resource *r);

/* fence.c */
bool fence_frozen(struct resource *r);
int fence_wait(struct resource *r);
void fence_conn_lost(struct resource *r);
void fence_conn_back(struct resource *r);
void fence_both_uptodate(struct resource *r);
bool fence_for_promote(struct resource *r);
int fence_resume_io(struct resource *r, struct reply_err *e);
void fence_status(struct resource *r, json_object *o);
void repl_release_held(struct resource *r); /* repl.c */
bool peer_live(struct resource *r);
int peer_submit(struct resource *r, struct volume *v, uint16_t type, uint64_t off, uint32_t len,
		const void *buf, uint32_t dp_flags, void (*done)(void *arg, int rc), void *arg);
int peer_flush(struct resource *r);
int peer_flush_start(struct resource *r, uint32_t *nr);
void peer_flush_wait(struct resource *r, uint32_t nr);
/* Wait for barrier nr's ack without blocking: 1 if w->done(w->arg) will be
 * called (on the meta thread when the ack arrives, or when the link goes),
 * 0 if there is nothing to wait for. The caller owns w until done. */
struct peer_flushw {
	uint32_t nr;
	void (*done)(void *arg);
	void *arg;
	struct peer_flushw *next;
};
int peer_flush_async(struct resource *r, struct peer_flushw *w);
/* Before a clean disconnect: wait (bounded) for the last epoch's ack. */
void peer_drain(struct resource *r, int timeout_ms);
/* verify.c: online verify from here (sectors; stop 0: to the end), and
 * the resync of what is marked out of sync, from here, now. */
int peer_verify(struct resource *r, uint64_t start, uint64_t stop, struct reply_err *e);
int peer_resync_oos(struct resource *r, struct reply_err *e);
bool peer_reads_remote(struct resource *r, struct volume *v);
int peer_read(struct resource *r, struct volume *v, uint64_t off, uint32_t len, void *buf,
	      void (*done)(void *arg, int res), void *arg);
/* disk-timeout: has local I/O been outstanding without progress for ms? */
bool volume_stalled(struct volume *v, int64_t ms);
/* Requests are still inside the volume (a detach would wait). */
bool volume_busy(struct volume *v);
bool volume_diskless(struct volume *v);
/* v's disk state, from any thread (state-change.c writes it). */
static inline enum state_disk volume_disk(const struct volume *v)
{
	return __atomic_load_n(&v->disk, __ATOMIC_ACQUIRE);
}
/* It has a disk, failing or not (a detach after an error is pending). */
bool volume_attached(struct volume *v);
void peer_mark_missing(struct resource *r, struct volume *v, uint64_t off, uint32_t len);
int peer_trim_wait(struct resource *r, struct volume *v, bool zero, uint64_t off, uint32_t len);
int peer_send_state(struct peer *p, unsigned int vi);
void peer_state_changed(struct resource *r);
void peer_renegotiate(struct resource *r);
void peer_show_sync_state(struct resource *r);
int peer_skip_initial_sync(struct resource *r);
void peer_status(struct resource *r, unsigned int vi, json_object *jv);
void resource_sync_done(struct resource *r, struct volume *v);
void resync_after_changed(struct resource *r);

/* defer.c: run fn(arg) on the main loop; any thread. */
struct defer;
int defer_start(struct tandemd *d, struct defer **out);
void defer_stop(struct defer *q);
void defer_drain(struct defer *q);
int defer_call(struct defer *q, void (*fn)(void *arg), void *arg);

/* handler.c: run handlers { NAME } as a child process; done() gets its
 * exit code on the main loop. Returns 0 (started), 1 (not configured:
 * done is not called) or a negative errno. vnr -1: all volumes. */
typedef void (*handler_done_fn)(struct resource *r, const char *name, int result, void *arg);
int handler_init(struct tandemd *d);
int handler_run(struct resource *r, const char *name, int vnr, handler_done_fn done, void *arg);
void handler_forget(struct resource *r);
/* From a thread other than the main loop: run the handler and wait for
 * its exit code (0 if not configured); -ECANCELED once abort_fn says so. */
int handler_run_wait(struct resource *r, const char *name, int vnr, bool (*abort_fn)(void *),
		     void *arg);

/* resource.c */
int resource_init(struct tandemd *d, struct resource *r, const struct conf_res *cr);
void resource_fini(struct resource *r);
struct resource *resource_find(struct tandemd *d, const char *name);
int resource_up(struct resource *r, struct reply_err *e);
int resource_down(struct resource *r, bool force, struct reply_err *e);
int resource_primary(struct resource *r, bool force, struct reply_err *e);
int resource_secondary(struct resource *r, bool force, struct reply_err *e);
int resource_new_current_uuid(struct resource *r, bool clear_bitmap, struct reply_err *e);
int resource_outdate(struct resource *r, struct reply_err *e);
bool resource_device_open(struct resource *r);
void resource_demote_after_sb(struct resource *r);
json_object *resource_status(struct resource *r);
/*
 * The one writer of the state (state-change.c, doc/state-machine.md): r->st,
 * every v->disk and every pv->repl change only here, under st_lock, checked
 * against the state table and logged by name. Any thread; never with
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
/* 0, or -EPERM (a soft change the rules refuse: logged) or -EINVAL. */
int state_change(struct resource *r, const struct state_chg *c, const char *why);
/* What the rules need besides the states: the configuration, the clients. */
struct state_ctx state_change_ctx(const struct resource *r, bool force);
/* resource_init: Secondary, StandAlone, every disk Diskless. */
void state_change_init(struct resource *r);
/* Hard changes of one field: */
int state_change_disk(struct volume *v, enum state_disk d, const char *why);
int state_change_disks(struct resource *r, enum state_disk d, const char *why);
int state_change_repl(struct resource *r, const struct volume *v, enum state_conn repl,
		      const char *why);
int state_change_conn(struct resource *r, enum state_conn conn, enum state_role peer,
		      enum state_disk pdsk, const char *why);
int state_change_flag(struct resource *r, unsigned int mask, bool on, const char *why);
/* A consistent copy of the state, from any thread. */
struct state resource_state(struct resource *r);
/* Main loop: volume v failed (on-io-error detach / call-local-io-error),
 * or passed an error on (pass_on: disk Inconsistent). */
void resource_volume_failed(struct volume *v);
void resource_volume_error_passed(struct volume *v);
/* Replication: hold new writes (handshake); the disk state changed (the
 * resource's follows its volumes, the peer is told); the peer is gone. */
void resource_freeze(struct resource *r, bool on);
void resource_disk_changed(struct resource *r);
void resource_lost_peer(struct resource *r);
void resource_set_connected_ind(struct resource *r, bool on);
int resource_connect(struct resource *r, bool discard_my_data, struct reply_err *e);
int resource_disconnect(struct resource *r, struct reply_err *e);
int resource_invalidate(struct resource *r, bool remote, struct reply_err *e);
int resource_pause_sync(struct resource *r, bool pause, struct reply_err *e);

/* reload.c */
/* Re-read the configuration and apply it (SIGHUP, `adjust`); on errors the
 * running configuration stays and msg says why. */
int tandemd_reload(struct tandemd *d, char *msg, size_t msglen);
int tandemd_add_resource(struct tandemd *d, const struct conf_res *cr);

/* nbd-srv.c */
int nbd_srv_start(struct resource *r, struct reply_err *e);
void nbd_srv_stop(struct nbd_srv *s);
unsigned int nbd_srv_clients(const struct nbd_srv *s);
bool nbd_srv_kernel_in_use(const struct nbd_srv *s);
const char *nbd_srv_path(const struct nbd_srv *s);

/* nbd-xfer.c: serve the requests of a connection whose handshake is done,
 * until the client disconnects or breaks the protocol */
struct nbd_export_limits;
void nbd_xfer_serve(int fd, struct volume *v, const char *res,
		    const struct nbd_export_limits *lim);

/* ctl.c */
struct ctl;
int ctl_start(struct tandemd *d, const char *path, struct ctl **out);
void ctl_stop(struct ctl *c);
/* Tell the event-stream clients about a state change. */
void ctl_event(struct tandemd *d, const char *res, const char *what, const char *old,
	       const char *new_value);

#endif
