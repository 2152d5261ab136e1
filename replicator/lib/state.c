/*
 * state: names of DRBD's states, the implicit adjustments, and the table
 * of rules that refuse a state change. Each rule is one row: a predicate
 * over (old, new, context) and the result it gives.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "state.h"

static const char *const role_names[] = {"Unknown", "Primary", "Secondary"};
static const char *const disk_names[] = {"Diskless",   "Attaching",    "Failed",
					 "Negotiating", "Inconsistent", "Outdated",
					 "DUnknown",   "Consistent",   "UpToDate"};
static const char *const conn_names[] = {
	"StandAlone",	"Disconnecting", "Unconnected", "Timeout",     "BrokenPipe",
	"NetworkFailure", "ProtocolError", "TearDown",	"WFConnection", "WFReportParams",
	"Connected",	"StartingSyncS", "StartingSyncT", "WFBitMapS",	"WFBitMapT",
	"WFSyncUUID",	"SyncSource",	 "SyncTarget",	"VerifyS",	"VerifyT",
	"PausedSyncS",	"PausedSyncT",	 "Ahead",	"Behind"};

#define NAME(table, i) ((unsigned int)(i) < sizeof(table) / sizeof(table[0]) ? table[i] : "?")

const char *state_role_name(enum state_role r)
{
	return NAME(role_names, r);
}

const char *state_disk_name(enum state_disk d)
{
	return NAME(disk_names, d);
}

const char *state_conn_name(enum state_conn c)
{
	return NAME(conn_names, c);
}

int state_disk_from_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(disk_names) / sizeof(disk_names[0]); i++)
		if (!strcmp(disk_names[i], name))
			return (int)i;
	return -1;
}

void state_sanitize(struct state *ns)
{
	if (ns->conn < CONN_WFREPORTPARAMS) {
		ns->peer = ROLE_UNKNOWN;
		if (ns->pdsk > DISK_OUTDATED)
			ns->pdsk = DISK_DUNKNOWN;
	}
	if (ns->conn == CONN_SYNCTARGET || ns->conn == CONN_PAUSEDSYNCT) {
		ns->disk = DISK_INCONSISTENT;
		ns->pdsk = DISK_UPTODATE;
	}
	if (ns->conn == CONN_SYNCSOURCE || ns->conn == CONN_PAUSEDSYNCS) {
		ns->disk = DISK_UPTODATE;
		ns->pdsk = DISK_INCONSISTENT;
	}
}

static bool is_connected_source(enum state_conn c)
{
	return c == CONN_CONNECTED || c == CONN_WFBITMAPS || c == CONN_SYNCSOURCE ||
	       c == CONN_PAUSEDSYNCS;
}

static bool has_uptodate_data(const struct state *s)
{
	return s->disk == DISK_UPTODATE ||
	       (s->conn >= CONN_CONNECTED && s->pdsk == DISK_UPTODATE);
}

static bool is_sync(enum state_conn c)
{
	return c >= CONN_STARTINGSYNCS && c <= CONN_PAUSEDSYNCT;
}

struct rule {
	enum state_result result;
	bool (*refuses)(const struct state *os, const struct state *ns,
			const struct state_ctx *ctx);
};

static bool r_two_primaries(const struct state *os, const struct state *ns,
			    const struct state_ctx *ctx)
{
	return ns->role == ROLE_PRIMARY && ns->peer == ROLE_PRIMARY && !ctx->allow_two_primaries;
}

static bool r_need_uptodate(const struct state *os, const struct state *ns,
			    const struct state_ctx *ctx)
{
	/* becoming or staying Primary needs UpToDate data, local or the peer's */
	return ns->role == ROLE_PRIMARY && !has_uptodate_data(ns) &&
	       (os->role != ROLE_PRIMARY || has_uptodate_data(os));
}

static bool r_device_in_use(const struct state *os, const struct state *ns,
			    const struct state_ctx *ctx)
{
	return os->role == ROLE_PRIMARY && ns->role == ROLE_SECONDARY && ctx->device_open &&
	       !ctx->force;
}

static bool r_peer_not_outdated(const struct state *os, const struct state *ns,
				const struct state_ctx *ctx)
{
	return ctx->fencing != FENCING_DONT_CARE && os->role != ROLE_PRIMARY &&
	       ns->role == ROLE_PRIMARY && ns->conn < CONN_CONNECTED &&
	       ns->pdsk >= DISK_DUNKNOWN && !ctx->force;
}

static bool r_outdate_connected(const struct state *os, const struct state *ns,
				const struct state_ctx *ctx)
{
	return ns->disk == DISK_OUTDATED && os->disk != DISK_OUTDATED &&
	       (is_connected_source(ns->conn) ||
		(ns->conn >= CONN_CONNECTED && ns->pdsk == DISK_DUNKNOWN));
}

static bool r_outdate_lower(const struct state *os, const struct state *ns,
			    const struct state_ctx *ctx)
{
	return ns->disk == DISK_OUTDATED && os->disk < DISK_OUTDATED &&
	       os->disk >= DISK_ATTACHING;
}

static bool r_outdate_primary(const struct state *os, const struct state *ns,
			      const struct state_ctx *ctx)
{
	/* DRBD refuses to outdate a Primary's data (drbdadm outdate: exit 17) */
	return ns->disk == DISK_OUTDATED && os->disk > DISK_OUTDATED && ns->role == ROLE_PRIMARY;
}

static bool r_resync_running(const struct state *os, const struct state *ns,
			     const struct state_ctx *ctx)
{
	/* no detach or invalidate while this node is the resync source/target */
	return is_sync(os->conn) && is_sync(ns->conn) && ns->disk < DISK_INCONSISTENT;
}

static bool r_standalone_to(const struct state *os, const struct state *ns,
			    const struct state_ctx *ctx)
{
	/* from StandAlone only Unconnected may follow */
	return os->conn == CONN_STANDALONE && ns->conn != CONN_STANDALONE &&
	       ns->conn != CONN_UNCONNECTED;
}

static bool r_disconnecting_to(const struct state *os, const struct state *ns,
			       const struct state_ctx *ctx)
{
	return os->conn == CONN_DISCONNECTING && ns->conn != CONN_DISCONNECTING &&
	       ns->conn != CONN_STANDALONE;
}

static bool r_connected_via_params(const struct state *os, const struct state *ns,
				   const struct state_ctx *ctx)
{
	/* Connected or higher is reached only through WFReportParams */
	return os->conn < CONN_WFREPORTPARAMS && ns->conn > CONN_WFREPORTPARAMS;
}

static bool r_after_failure(const struct state *os, const struct state *ns,
			    const struct state_ctx *ctx)
{
	/* after a network error only Unconnected or Disconnecting */
	return os->conn >= CONN_TIMEOUT && os->conn <= CONN_TEARDOWN && ns->conn != os->conn &&
	       ns->conn != CONN_UNCONNECTED && ns->conn != CONN_DISCONNECTING;
}

/* Order matters: the first refusing rule names the reason, as in DRBD. */
static const struct rule rules[] = {
	{SS_TWO_PRIMARIES, r_two_primaries},
	{SS_NO_UP_TO_DATE_DISK, r_need_uptodate},
	{SS_DEVICE_IN_USE, r_device_in_use},
	{SS_PRIMARY_NOP, r_peer_not_outdated},
	{SS_NO_UP_TO_DATE_DISK, r_outdate_primary},
	{SS_CONNECTED_OUTDATES, r_outdate_connected},
	{SS_LOWER_THAN_OUTDATED, r_outdate_lower},
	{SS_RESYNC_RUNNING, r_resync_running},
	{SS_IN_TRANSIENT_STATE, r_standalone_to},
	{SS_IN_TRANSIENT_STATE, r_disconnecting_to},
	{SS_IN_TRANSIENT_STATE, r_connected_via_params},
	{SS_IN_TRANSIENT_STATE, r_after_failure},
};

enum state_result state_check(const struct state *os, const struct state *ns,
			      const struct state_ctx *ctx)
{
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].refuses(os, ns, ctx))
			return rules[i].result;
	return SS_SUCCESS;
}

const char *state_result_text(enum state_result r)
{
	switch (r) {
	case SS_SUCCESS:
		return "State change was successful";
	case SS_TWO_PRIMARIES:
		return "Multiple primaries not allowed by config";
	case SS_NO_UP_TO_DATE_DISK:
		return "Need access to UpToDate data";
	case SS_NO_LOCAL_DISK:
		return "Can not resync without local disk";
	case SS_NO_REMOTE_DISK:
		return "Can not resync without remote disk";
	case SS_CONNECTED_OUTDATES:
		return "Refusing to be Outdated while Connected";
	case SS_PRIMARY_NOP:
		return "Refusing to be Primary while peer is not outdated";
	case SS_RESYNC_RUNNING:
		return "Can not start OV/resync since it is already active";
	case SS_ALREADY_STANDALONE:
		return "Can not disconnect a StandAlone device";
	case SS_CW_FAILED_BY_PEER:
		return "State change was refused by peer node";
	case SS_IS_DISKLESS:
		return "Device is diskless, the requested operation requires a disk";
	case SS_DEVICE_IN_USE:
		return "Device is held open by someone";
	case SS_NO_NET_CONFIG:
		return "Have no net/connection configuration";
	case SS_NO_VERIFY_ALG:
		return "Need a verify algorithm to start online verify";
	case SS_NEED_CONNECTION:
		return "Need a connection to start verify or resync";
	case SS_LOWER_THAN_OUTDATED:
		return "Disk state is lower than outdated";
	case SS_NOT_SUPPORTED:
		return "Peer does not support protocol";
	case SS_IN_TRANSIENT_STATE:
		return "In transient state, retry after next state change";
	case SS_CONCURRENT_ST_CHG:
		return "Concurrent state changes detected and aborted";
	case SS_OUTDATE_WO_CONN:
		return "Need a connection for a graceful disconnect/outdate peer";
	}
	return "Unknown state change error";
}

int state_result_exit(enum state_result r)
{
	switch (r) {
	case SS_SUCCESS:
		return 0;
	case SS_NO_UP_TO_DATE_DISK:
		return 17;
	case SS_LOWER_THAN_OUTDATED:
		return 5;
	case SS_NO_LOCAL_DISK:
	case SS_IS_DISKLESS:
		return 16;
	default:
		return 11;
	}
}
