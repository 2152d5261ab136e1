/*
 * peer/: the door of the peer room: the connection of a resource to its
 * peer (connect, handshake, replication, resync, verify, the Secondary's
 * flusher, split-brain save sets) (HACKING.md, "The rooms"). Uses volume/
 * and state/; what it asks of control goes through struct upcalls.
 */
#ifndef TANDEM_PEER_H
#define TANDEM_PEER_H

#include <json-c/json.h>

#include "tandemd.h"

struct reply_err;

/* peer.c: the connection to the peer (connect, disconnect). */
int peer_start(struct resource *r, bool discard_my_data, struct reply_err *e);
void peer_stop(struct resource *r);
bool peer_exited(const struct resource *r);
/* repl.c: the data path's side of the connection. */
uint64_t integrity_failures(struct resource *r);

/* repl.c: fencing is over; the writes held since the link went complete. */
void repl_release_held(struct resource *r);
/* Writes go to the peer (Connected, or a resync). */
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
void peer_mark_missing(struct resource *r, struct volume *v, uint64_t off, uint32_t len);
int peer_trim_wait(struct resource *r, struct volume *v, bool zero, uint64_t off, uint32_t len);
/* A disk or role changed here: the peer is told. */
void peer_state_changed(struct resource *r);
/* I/O frozen at the peer's loss goes on (fencing's verdict, resume-io):
 * the new current UUID that waited for it is made now; connected: the
 * peer is back, and none is made (DRBD's NEW_CUR_UUID). Main loop. */
void peer_io_resumed(struct resource *r, bool connected);
void peer_renegotiate(struct resource *r);
void peer_show_sync_state(struct resource *r);
int peer_skip_initial_sync(struct resource *r);
void peer_status(struct resource *r, unsigned int vi, json_object *jv);
/* "refused" (connections refused before authentication since the
 * connection was configured) and "last_refused" (the latest, with its
 * source address) into a resource's status. Main loop. */
void peer_status_refusals(struct resource *r, json_object *o);
/* repl-meta.c: "ack_poll" (net { ack-poll-usec }), when it is on. */
void peer_status_ack_poll(struct resource *r, json_object *o);
/* The resource would replicate with an unauthenticated peer without the
 * configuration's opt-in (conf_res_unauthenticated): -EACCES with an error
 * naming its file:line and the two fixes; else 0. */
int peer_refuse_unauthenticated(struct resource *r, struct reply_err *e);
/* With net { tls yes; } in c for cr: do its three files load? 0 (or no
 * TLS), else a negative errno with why naming the file and the reason. */
int peer_tls_check(const struct conf *c, const struct conf_res *cr, char *why, size_t n);
/* resync-after changed (reload), or the resource it names changed. */
void resync_after_changed(struct resource *r);

#endif
