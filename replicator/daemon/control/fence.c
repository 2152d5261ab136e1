/*
 * fence: the fencing policies of a resource (disk { fencing ...; },
 * ref/drbd-semantics.md §7), with the fence-peer and unfence-peer
 * handlers.
 *
 *  - resource-only: when a Primary loses its peer while the peer's disk is
 *    not known to be Outdated, fence-peer runs; I/O goes on. Promoting a
 *    disconnected Secondary needs the same verdict first.
 *  - resource-and-stonith: the same, but I/O freezes (susp_fen) from the
 *    moment the connection is lost until the handler's verdict outdates
 *    the peer, the connection comes back, or `tandemadm resume-io`.
 *    Under `options { quorum majority; }` resource-only freezes too.
 *    Writes the peer had not acknowledged are held, not completed.
 *
 * fence-peer's exit code means what it means to DRBD: 3 peer Inconsistent,
 * 4 peer Outdated, 5 peer unreachable (Outdated if our data is UpToDate),
 * 6 peer Primary (we outdate ourselves if Secondary), 7 peer STONITHed;
 * anything else is a broken handler and changes nothing (I/O stays frozen
 * under resource-and-stonith). A verdict that arrives after the
 * connection came back is ignored. Success persists PEER_OUT_DATED in the
 * metadata. When both disks are UpToDate again after a successful fence,
 * unfence-peer runs.
 *
 * Handlers run from the main loop (defer); the state lives in struct
 * resource under st_lock.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "md.h"
#include "control/control.h"
#include "front/nbd-srv.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

static enum state_fencing policy(const struct resource *r)
{
	const char *f = conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_DISK, "fencing");

	if (f && !strcmp(f, "resource-only"))
		return FENCING_RESOURCE_ONLY;
	if (f && !strcmp(f, "resource-and-stonith"))
		return FENCING_RESOURCE_AND_STONITH;
	return FENCING_DONT_CARE;
}

bool fence_frozen(struct resource *r)
{
	bool f;

	pthread_mutex_lock(&r->st_lock);
	f = r->st.susp_fen;
	pthread_mutex_unlock(&r->st_lock);
	return f;
}

/* A write with no peer to go to: wait while I/O is frozen for fencing. */
int fence_wait(struct resource *r)
{
	pthread_mutex_lock(&r->st_lock);
	while (r->st.susp_fen)
		pthread_cond_wait(&r->fence_cond, &r->st_lock);
	pthread_mutex_unlock(&r->st_lock);
	return 0;
}

/* Record PEER_OUT_DATED in every volume's metadata (or clear it). */
static void persist_peer_outdated(struct resource *r, bool on)
{
	unsigned int i;

	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];

		pthread_mutex_lock(&v->lock);
		if (v->md && !!(volume_flags(v) & MDF_PEER_OUT_DATED) != on)
			volume_set_flags(v, on ? MDF_PEER_OUT_DATED : 0, on ? 0 : MDF_PEER_OUT_DATED);
		if (volume_unlock(v) < 0)
			log_res(LOG_ERR, r->name,
				"volume %u: cannot record the peer's disk state in the metadata",
				v->vnr);
	}
	pthread_mutex_lock(&r->st_lock);
	r->peer_outdated = on;
	pthread_mutex_unlock(&r->st_lock);
}

/* Lift susp_fen: frozen writes go on, held ones complete. */
static void unfreeze(struct resource *r, const char *why)
{
	if (!resource_state(r).susp_fen)
		return;
	state_change_flag(r, SC_SUSP_FEN, false, why);
	pthread_mutex_lock(&r->st_lock);
	pthread_cond_broadcast(&r->fence_cond);
	pthread_mutex_unlock(&r->st_lock);
	peer_io_resumed(r, !strcmp(why, "connected again"));
	volume_freeze_all(r, VOLUME_FROZEN_FENCING, false);
	repl_release_held(r);
}

static const char *verdict_text(int code)
{
	switch (code) {
	case 3: return "peer is inconsistent";
	case 4: return "peer is outdated";
	case 5: return "peer is unreachable, assumed to be dead";
	case 6: return "peer is primary";
	case 7: return "peer was stonithed";
	case 1: return "no verdict: the handler could not fence, e.g. this partition has no quorum";
	default: return "fence-peer helper broken";
	}
}

static void fence_done(struct resource *r, const char *name, int code, void *arg)
{
	struct state s = resource_state(r);
	enum state_disk pdsk = s.pdsk;
	bool stonith = policy(r) == FENCING_RESOURCE_AND_STONITH;

	(void)name;
	(void)arg;
	pthread_mutex_lock(&r->st_lock);
	r->fence_running = false;
	r->fence_result = code;
	pthread_mutex_unlock(&r->st_lock);
	if (s.conn >= CONN_CONNECTED) {
		log_res(LOG_INFO, r->name,
			"fence-peer helper returned %d (%s), ignored: connected again", code,
			verdict_text(code));
		return;
	}
	switch (code) {
	case 3:
		pdsk = DISK_INCONSISTENT;
		break;
	case 4:
		pdsk = DISK_OUTDATED;
		break;
	case 5:
		if (s.disk == DISK_UPTODATE)
			pdsk = DISK_OUTDATED;
		break;
	case 6:
		if (s.role == ROLE_PRIMARY) {
			log_res(LOG_ERR, r->name,
				"fence-peer helper returned 6 (peer is primary), but this node is "
				"Primary too: refusing to outdate myself; resolve the split by hand");
		} else {
			unsigned int i;

			for (i = 0; i < r->n_vols; i++) {
				struct volume *v = &r->vols[i];

				pthread_mutex_lock(&v->lock);
				if (v->md && volume_disk(v) > DISK_OUTDATED) {
					state_change_disk(v->st, DISK_OUTDATED,
							  "fence-peer: peer is primary, outdating myself");
					volume_set_flags(v, 0, MDF_WAS_UP_TO_DATE);
				}
				volume_unlock(v);
			}
		}
		break;
	case 7:
		pdsk = DISK_OUTDATED;
		if (!stonith)
			log_res(LOG_WARNING, r->name,
				"fence-peer helper returned 7 (peer was stonithed) with fencing "
				"resource-only");
		break;
	default:
		log_res(LOG_ERR, r->name,
			"fence-peer helper returned %d (%s)%s", code, verdict_text(code),
			s.susp_fen ? "; I/O stays frozen: make sure the peer cannot "
						"be promoted, then 'tandemadm resume-io' (or fix the "
						"handler and reconnect)"
					      : "");
		return;
	}
	if (code != 6)
		log_res(LOG_NOTICE, r->name, "fence-peer helper returned %d (%s)", code,
			verdict_text(code));
	if (pdsk <= DISK_OUTDATED) {
		state_change_conn(r, s.conn, s.peer, pdsk, "fence-peer");
		persist_peer_outdated(r, true);
		pthread_mutex_lock(&r->st_lock);
		r->fence_placed = true;
		pthread_mutex_unlock(&r->st_lock);
		unfreeze(r, "fencing done");
	}
}

static void fence_start(void *arg)
{
	struct resource *r = arg;
	int rc;

	rc = handler_run(r, "fence-peer", -1, fence_done, NULL);
	if (rc == 0)
		return;
	pthread_mutex_lock(&r->st_lock);
	r->fence_running = false;
	r->fence_result = -1;
	pthread_mutex_unlock(&r->st_lock);
	log_res(LOG_ERR, r->name,
		"fencing %s needs a fence-peer handler (handlers { fence-peer "
		"\"/usr/sbin/tandem-fence-peer\"; }): %s%s",
		policy(r) == FENCING_RESOURCE_AND_STONITH ? "resource-and-stonith" : "resource-only",
		rc > 0 ? "none is configured" : strerror(-rc),
		fence_frozen(r) ? "; I/O stays frozen until the peer is back or 'tandemadm "
				  "resume-io'"
				: "");
}

/* Run fence-peer (once at a time) from the main loop. */
static void start_fence(struct resource *r)
{
	pthread_mutex_lock(&r->st_lock);
	if (r->fence_running) {
		pthread_mutex_unlock(&r->st_lock);
		return;
	}
	r->fence_running = true;
	pthread_mutex_unlock(&r->st_lock);
	if (defer_call(r->d->defer, fence_start, r) < 0)
		fence_start(r);
}

/*
 * The connection is going (peer thread, before pending requests are
 * failed): a Primary whose peer's disk is not known to be Outdated fences
 * it; under resource-and-stonith, I/O freezes first.
 */
void fence_conn_lost(struct resource *r)
{
	struct state s = resource_state(r);
	enum state_fencing f = policy(r);

	if (f == FENCING_DONT_CARE || s.role != ROLE_PRIMARY || s.conn < CONN_CONNECTED ||
	    s.pdsk <= DISK_OUTDATED)
		return;
	/* quorum majority: the peer may be on the quorate side of a partition
	 * that corosync has not reported yet; DRBD 9 loses quorum the moment
	 * the peer goes. Nothing is acknowledged on this side alone until
	 * fence-peer's verdict (through the arbiter: the new membership's
	 * quorum) says the peer cannot take over with stale data. */
	if (f == FENCING_RESOURCE_AND_STONITH || quorum_majority(r)) {
		volume_freeze_all(r, VOLUME_FROZEN_FENCING, true);
		state_change_flag(r, SC_SUSP_FEN, true,
				  f == FENCING_RESOURCE_AND_STONITH
					  ? "lost the peer: I/O frozen until fence-peer's verdict"
					  : "lost the peer under quorum majority: I/O frozen until "
					    "fence-peer's verdict");
	}
	start_fence(r);
}

/* Connected again (the handshake is done): frozen I/O goes on; the peer's
 * disk state is known again. */
void fence_conn_back(struct resource *r)
{
	unfreeze(r, "connected again");
	if (r->peer_outdated)
		persist_peer_outdated(r, false);
}

/* Both disks UpToDate (connected): undo a successful fence. Main loop or
 * peer thread. */
static void unfence_start(void *arg)
{
	struct resource *r = arg;

	handler_run(r, "unfence-peer", -1, NULL, NULL);
}

void fence_both_uptodate(struct resource *r)
{
	bool placed;

	pthread_mutex_lock(&r->st_lock);
	placed = r->fence_placed;
	r->fence_placed = false;
	pthread_mutex_unlock(&r->st_lock);
	if (!placed || policy(r) == FENCING_DONT_CARE)
		return;
	if (defer_call(r->d->defer, unfence_start, r) < 0)
		unfence_start(r);
}

/* primary on a disconnected Secondary that fencing refused: start
 * fence-peer (main loop); the caller retries when it is done. */
bool fence_for_promote(struct resource *r)
{
	if (policy(r) == FENCING_DONT_CARE ||
	    !conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_HANDLERS, "fence-peer"))
		return false;
	start_fence(r);
	return true;
}

/* tandemadm resume-io: lift susp_fen by hand. */
int fence_resume_io(struct resource *r, struct reply_err *e)
{
	if (!fence_frozen(r)) {
		ERRF(e, 11, "%s: I/O is not frozen", r->name);
		return -EALREADY;
	}
	log_res(LOG_WARNING, r->name,
		"resume-io: I/O resumed by the operator without a fencing verdict");
	unfreeze(r, "resume-io");
	return 0;
}

/* For status: what fencing is doing. */
void fence_status(struct resource *r, json_object *o)
{
	json_object *f;

	pthread_mutex_lock(&r->st_lock);
	if (policy(r) == FENCING_DONT_CARE && !r->st.susp_fen) {
		pthread_mutex_unlock(&r->st_lock);
		return;
	}
	f = json_object_new_object();
	json_object_object_add(f, "policy",
			       json_object_new_string(policy(r) == FENCING_RESOURCE_ONLY
							      ? "resource-only"
							      : policy(r) == FENCING_RESOURCE_AND_STONITH
									? "resource-and-stonith"
									: "dont-care"));
	json_object_object_add(f, "io_frozen", json_object_new_boolean(r->st.susp_fen));
	json_object_object_add(f, "running", json_object_new_boolean(r->fence_running));
	if (r->fence_result >= 0)
		json_object_object_add(f, "last_result", json_object_new_int(r->fence_result));
	json_object_object_add(f, "peer_outdated", json_object_new_boolean(r->peer_outdated));
	pthread_mutex_unlock(&r->st_lock);
	json_object_object_add(o, "fencing", f);
}
