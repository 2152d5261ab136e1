/*
 * peer-int.h: private to the peer room (replicator/daemon/peer/): the
 * connection of one resource to its peer. The door is peer/peer.h.
 */
#ifndef TANDEM_PEER_INT_H
#define TANDEM_PEER_INT_H

#include <limits.h>
#include <netinet/in.h>

#include "auth.h"
#include "digest.h"
#include "gi.h"
#include "peer/peer.h"
#include "pktio.h"
#include "ratelimit.h"
#include "state/state-change.h"
#include "tls.h"
#include "volume/volume.h"
#include "uuidcmp.h"
#include "wire.h"

/* A write of this node waiting for the peer's leg (the transfer log). */
struct peer_req {
	uint64_t id;
	uint64_t sector;
	uint32_t size;
	unsigned int vnr;
	uint32_t epoch;       /* the epoch it was sent in */
	bool done_called;     /* done() ran: waits only for the epoch's ack */
	void (*done)(void *arg, int rc);
	void *arg;
	struct peer_req *next;
};

/* A read served by the peer (diskless Primary, or local data not UpToDate). */
struct peer_read {
	uint64_t id;
	struct volume *v;
	void *buf;
	uint32_t len;
	void (*done)(void *arg, int res);
	void *arg;
	struct peer_read *next;
};

/* Per volume, what the handshake learnt and the resync in progress. */
struct peer_vol {
	struct volume *v;
	struct wire_uuids puuids;  /* the peer's, as received */
	struct wire_state pstate;  /* the peer session's thread only */
	uint8_t pisp;              /* pstate.isp, for other threads (atomic) */
	uint64_t psize;            /* the peer's backing size, sectors */
	/* resync, target side */
	uint64_t rs_pos;           /* next bit to look at */
	uint64_t rs_inflight;      /* requests outstanding */
	uint64_t rs_total;         /* bits at the start */
	uint64_t rs_done;          /* bits written */
	int64_t rs_start_ms;
	bool rs_done_sent;
	/* online verify (verify.c); counters under peer.lock */
	uint64_t ov_pos, ov_start, ov_stop; /* sectors: next request, first, end */
	uint64_t ov_inflight;      /* requests outstanding (VerifyS) */
	uint64_t ov_done, ov_oos;  /* blocks compared, found out of sync */
	uint64_t ov_asked;         /* VerifyT: requests answered */
	bool ov_ending;            /* VerifyT: the peer is done; end at its last result */
	uint64_t ov_run_start, ov_run_len; /* the out-of-sync run being logged */
	int64_t ov_start_ms;
	struct ov_slot {           /* VerifyS: requests in flight, by block */
		uint64_t sector;   /* UINT64_MAX: free */
		bool have;         /* digest taken (and block held) at send time */
		uint8_t digest[DIGEST_MAX_SIZE];
	} *ov_ring;
	/* split-brain save (sbsave-run.c) */
	struct sbsave *sbs;        /* being written */
	char sb_path[4096];        /* the latest set, "" if none */
	/* csums / integrity */
	bool rs_csums;             /* target: this resync sends P_CSUM_RS_REQUEST */
	uint64_t cs_req;           /* bits asked for by checksum (source: answered) */
	uint64_t cs_same;          /* of those, bits found equal (P_RS_IS_IN_SYNC) */
};

#define OV_WINDOW 1024u /* verify requests in flight at most */

#define PEER_ADDR_MAX (INET6_ADDRSTRLEN + 16) /* "[v6]:port" */
#define PEER_REASONS 4      /* refusal reasons remembered, to log a new one at once */
#define PEER_REASON_KEY 96  /* the part of a reason compared */

#define FL_QUEUE 256   /* barriers queued for one flush at most */
#define FL_DEFER_MS 10 /* how long a barrier no FLUSH waits for may wait */

struct peer {
	struct resource *r;
	pthread_t thread;
	int lfd;       /* listener on our address */
	int wake[2];   /* peer_stop() wakes the thread */
	int guard[2];  /* stops the listener's guard (peer-conn.c) */
	pthread_t guard_thread;
	bool stop;
	bool exited;   /* the thread ended by itself (StandAlone) */

	pthread_mutex_t lock; /* data, meta, tl, barrier, vols */
	pthread_cond_t cond;
	pthread_mutex_t send_lock; /* sends on data */
	pthread_mutex_t meta_lock; /* sends on meta */
	struct pktio *data, *meta;
	uint64_t conn_id;
	bool initiator; /* we opened the surviving attempt; the other node
			 * holds the resolve-conflicts tie-breaker */
	struct wire_agreed agreed;

	/* configuration, read at start */
	int connect_int_ms, ping_int_ms, ping_timeout_ms, timeout_ms, ko_count, sndbuf;
	unsigned int ack_poll_us; /* net { ack-poll-usec }: 0 never spins */
	/* the meta thread's ack-poll budgets for write acks and for FLUSH
	 * barrier acks, or NULL; for the peer's life (set before its thread) */
	struct spin *spin, *spin_fl;
	int kick_fd;       /* eventfd: a write wakes the meta thread to spin, or -1 */
	int meta_asleep;   /* atomic: the meta thread sleeps and wants a kick */
	int protocol; /* WIRE_PROTO_* */
	char alg[WIRE_ALG_MAX + 1];
	char secret[132];
	bool auth_v1; /* cram-hmac-version 1 (DRBD's), else 2 */
	bool auth_kept; /* the configuration lost its authentication: the old one is kept */
	struct tls_ctx *tls; /* net { tls yes; }: loaded at each establishment (peer-auth.c) */
	char tls_desc[160];  /* the data socket's TLS session, for the log */
	char tls_sig[3 * (PATH_MAX / 4 + 64)]; /* the files p->tls came from, as stat saw them */
	bool tls_bad;        /* the files of tls_sig do not load */
	char me[WIRE_NAME_MAX + 1], peer_name[WIRE_NAME_MAX + 1];
	char peer_node[WIRE_NAME_MAX + 1]; /* the name in the peer's P_HELLO */
	char peer_addr[PEER_ADDR_MAX]; /* where the data socket comes from */
	/* failures before authentication: rate-limited log (peer-auth.c) */
	struct ratelimit *pre_rl;
	struct ratelimit *pre_rl_new; /* reasons not logged lately: a few more per window */
	char pre_seen[PEER_REASONS][PEER_REASON_KEY]; /* lock: the last reasons logged */
	unsigned int pre_seen_next;
	unsigned int pre_unlogged; /* lock: refusals not logged since the last connection */
	uint64_t pre_refused;  /* lock: refusals since the connection was configured */
	char pre_last[352];    /* lock: the latest one, logged or not */
	bool discard_my_data;
	bool sb_demote; /* call-pri-lost-after-sb: give up Primary after the handshake */

	/* the session (sync.c, repl.c) */
	bool live;                 /* writes go to the peer */
	struct peer_req *tl, *tl_tail;
	struct peer_read *reads;   /* reads waiting for P_DATA_REPLY */
	struct peer_flushw *flushw; /* FLUSHes waiting for a P_BARRIER_ACK */
	uint64_t next_id;
	uint32_t barrier_nr;       /* last barrier sent */
	uint32_t barrier_acked;    /* last barrier acked */
	uint32_t flush_nr;         /* last barrier sent for a FLUSH */
	int64_t pe_all;            /* atomic: writes awaiting their ack, all volumes */
	bool close_pending;        /* a barrier fell due while send_lock was busy */
	struct epoch *ep;          /* epochs of the writes we send */
	uint32_t recv_epoch_writes; /* writes received since the last barrier */
	int session_err;           /* first error of the session */
	pthread_t meta_thread, rs_thread, fl_thread, ov_thread;
	bool meta_running, rs_running, fl_running, ov_running;
	const struct digest_alg *ov_alg; /* verify-alg (atomic: set by control, read by receivers) */
	/* barriers received, waiting for the flusher (repl.c); lock */
	pthread_cond_t fl_cond;
	struct fl_item {
		struct wire_barrier b; /* barrier, set_size: the ack to send */
		bool urgent;           /* a FLUSH waits for it */
		int64_t at_ms;
	} fl_q[FL_QUEUE];
	unsigned int fl_head, fl_n, fl_urgent;
	bool fl_stop;
	bool ack_closed; /* meta thread only: an ack closed the epoch */
	bool fl_busy; /* a batch is being flushed and acked (its acks go first) */
	struct peer_vol *pv;       /* r->n_vols */
	/* csums / integrity */
	const struct digest_alg *cs_alg; /* csums-alg of the session, NULL: none */
	const struct digest_alg *di_alg; /* data-integrity-alg of the session, NULL: none */
	uint64_t di_failures;      /* data packets whose digest did not match (atomic) */
	uint64_t fi_data_sent;     /* P_DATA sent, for TANDEM_CORRUPT_DATA (atomic) */
	uint64_t fi_corrupt_at;    /* corrupt the payload of this P_DATA (1 = first), 0: never */
};

/* peer.c */
void peer_set_conn(struct peer *p, enum state_conn c, const char *why);
void peer_sleep(struct peer *p, int ms);

/* sync.c: the handshake */
int sync_handshake(struct peer *p);
int sync_send_uuids(struct peer *p, unsigned int vi);

/* resync.c: the resync (with csums), and its pacing, shared with verify */
struct rsctl;
int resync_on_rs_request(struct peer *p, const struct wire_pkt *pkt);
int resync_on_rs_reply(struct peer *p, const struct wire_pkt *pkt);
void resync_on_rs_ack(struct peer *p, const struct wire_pkt *pkt);
int resync_on_csum_request(struct peer *p, const struct wire_pkt *pkt);
void resync_on_in_sync(struct peer *p, const struct wire_pkt *pkt);
void resync_log_csums(struct peer *p, const struct peer_vol *pv);
int resync_start_thread(struct peer *p);
void resync_stop(struct peer *p);
int resync_wait_window(struct peer *p, const uint64_t *inflight, uint64_t need,
		       uint64_t max_inflight, int64_t step_end);
int resync_new_ctl(struct peer *p, struct rsctl **ctl);
void resync_step_sleep(struct peer *p, int64_t *step_end, int step_ms);

/* peer.c */
int64_t peer_now_ms(void); /* CLOCK_MONOTONIC, in ms */

/* repl-session.c: a resync of v ended; the connection state follows */
void peer_sync_done(struct resource *r, struct volume *v);

/* repl.c: replication while connected */
int peer_session(struct peer *p);
int repl_receive(struct peer *p);          /* the data stream, until an error */
/* r->peer as the data path's threads read it: the main loop sets it in
 * peer_start() and clears it in peer_stop() while NBD threads may look. */
static inline struct peer *peer_of(const struct resource *r)
{
	return __atomic_load_n(&r->peer, __ATOMIC_ACQUIRE);
}

int repl_start_meta(struct peer *p);
/* ack-poll-usec: a write or FLUSH that awaits an ack went out; wake the
 * meta thread if it sleeps, so that it spins for the ack (repl-meta.c). */
void repl_kick_meta(struct peer *p);
void repl_stop_meta(struct peer *p);
void repl_fail_all(struct peer *p, int rc); /* the link is gone */
int peer_send(struct peer *p, const struct wire_pkt *pkt);
int peer_send_meta(struct peer *p, const struct wire_pkt *pkt);
void peer_fail(struct peer *p, int rc);    /* end the session */
struct peer_vol *peer_vol_of(struct peer *p, uint16_t vnr);

/* peer-auth.c: before authentication (doc/wire-protocol.md §5.4, §5.5) */
#define PEER_PREAUTH_MS 5000 /* the whole setup of one socket */
/* Count and log (rate-limited) a refusal of the connection from addr. */
void peer_preauth_log(struct peer *p, const char *addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* accept4() on the listener, the source address into addr; one from
 * another address than the peer's is closed unread and logged: -EPERM.
 * The fd, or a negative errno (-EAGAIN: none waits). */
int peer_accept(struct peer *p, char *addr, size_t n);
/* peer-conn.c: the listener; the data and meta sockets, authenticated
 * (0), -ECANCELED when told to stop, or another negative errno. */
int peer_listen(struct peer *p);
int peer_establish(struct peer *p);
/* (Re)load the TLS files of net { tls yes; } into p->tls (NULL without
 * tls) if they changed since the last call: 0, or a negative errno with
 * why naming the file and the reason (-EALREADY, why untouched: they have
 * not changed since they failed); p->tls is kept then. Connection thread,
 * or before it runs. */
int peer_tls_load(struct peer *p, char *why, size_t n);
/* cram-hmac-alg, shared-secret and cram-hmac-version from the
 * configuration as it is now, into p (peer.c): at start and before each of
 * our connection attempts, so adjust changes them for the next connection
 * as it does the TLS files. One that would leave the peer unauthenticated
 * without the opt-in is logged and not taken. Connection thread, or before
 * it runs. */
void peer_load_auth(struct peer *p);
/* While connected, a thread serves the listener: every attempt is closed
 * unread and logged (§5.3). */
int peer_guard_start(struct peer *p);
void peer_guard_stop(struct peer *p);
void peer_fill_state(struct peer *p, struct wire_pkt *pkt, unsigned int vi);
int peer_send_state(struct peer *p, unsigned int vi);
bool peer_sync_paused(struct peer *p, const struct peer_vol *pv);
bool peer_after_isp(struct resource *r);
/* repl.c, for repl-meta.c: send a barrier that fell due (never waits for
 * send_lock); the peer's leg of q is done (p->lock held). */
void repl_close_due_epoch(struct peer *p);
void repl_leg_done_locked(struct peer *p, struct peer_req *q);
/* pv's replication state, from any thread (state/ writes it). */
static inline enum state_conn peer_vol_repl(const struct peer_vol *pv)
{
	return volume_repl(pv->v);
}

/* verify.c: online verify */
int verify_on_request(struct peer *p, const struct wire_pkt *pkt);
int verify_on_reply(struct peer *p, const struct wire_pkt *pkt);
void verify_on_result(struct peer *p, const struct wire_pkt *pkt);
void verify_on_neg(struct peer *p, const struct wire_pkt *pkt);
void verify_peer_state(struct peer *p, struct peer_vol *pv, const struct wire_state *ps);
void verify_stop(struct peer *p);

/* sbsave-run.c */
int sbsave_run_prepare(struct peer *p, struct peer_vol *pv, bool split_brain, bool target);

/* sb-verdict.c: tandem-arbiterd's one verdict on a split brain. */
struct sb_verdict {
	int loser; /* 1 this node, -1 the peer, 0 none: disconnect */
	char id[64];
	char why[256];
};
/* 0 and *out; a negative errno when there is no verdict (no arbiter, none
 * in time, a refusal), logged: then the after-sb rules decide locally. */
int sb_verdict_ask(struct peer *p, const struct uuidcmp_input *in, struct sb_verdict *out);
/* The handshake's input that yields the verdict (DRBD's manual resolution). */
void sb_verdict_apply(const struct sb_verdict *v, struct uuidcmp_input *in);
int sbsave_run_save(struct peer *p, struct peer_vol *pv);
void sbsave_run_abort(struct peer_vol *pv);

/* peer-ops.c: the data-stream and meta-stream handlers of remote reads */
int on_data_request(struct peer *p, const struct wire_pkt *pkt);
int on_data_reply(struct peer *p, const struct wire_pkt *pkt);
void on_neg_dreply(struct peer *p, const struct wire_pkt *pkt);

/* integrity.c */
int integrity_sign(struct peer *p, struct wire_pkt *pkt, uint8_t *digest);
int integrity_check(struct peer *p, const struct wire_pkt *pkt);
uint8_t *integrity_fault_corrupt(struct peer *p, struct wire_pkt *pkt);
void integrity_fault_load(struct peer *p);

/* flusher.c: P_BARRIER on the Secondary, and the flusher thread */
int flusher_on_barrier(struct peer *p, const struct wire_pkt *pkt);
void *flusher_thread(void *arg);

#endif
