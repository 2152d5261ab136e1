/*
 * state: names of DRBD's states, the implicit adjustments, and the table
 * of rules that refuse a state change. Each rule is one row: a predicate
 * over (old, new, context) and the result it gives.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
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
	const char *name;
	enum state_result result;
	bool hard; /* holds for hard changes too */
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

#define C(x) (1u << CONN_##x)
#define D(x) (1u << DISK_##x)
/* Failures of a live connection, and everything from Connected on. */
#define C_FAILURES (C(TIMEOUT) | C(BROKENPIPE) | C(NETWORKFAILURE) | C(PROTOCOLERROR) | C(TEARDOWN))
#define C_LIVE                                                                                    \
	(C(CONNECTED) | C(STARTINGSYNCS) | C(STARTINGSYNCT) | C(WFBITMAPS) | C(WFBITMAPT) |       \
	 C(WFSYNCUUID) | C(SYNCSOURCE) | C(SYNCTARGET) | C(VERIFYS) | C(VERIFYT) |               \
	 C(PAUSEDSYNCS) | C(PAUSEDSYNCT) | C(AHEAD) | C(BEHIND))
/* Every way down from a live connection: a failure, a renegotiation
 * (Unconnected), a disconnect (Disconnecting, or StandAlone at once when
 * the resource goes down). */
#define C_DOWN (C_FAILURES | C(UNCONNECTED) | C(DISCONNECTING) | C(STANDALONE))

/*
 * The connection's transitions (ref/drbd-semantics.md §2, DRBD 8.4's
 * is_valid_transition): StandAlone leaves only through Unconnected, a
 * failed connection only through Unconnected or Disconnecting (or down to
 * StandAlone), Connected and above are reached only through
 * WFReportParams.
 */
static const uint32_t conn_next[STATE_N_CONN] = {
	[CONN_STANDALONE] = C(UNCONNECTED),
	[CONN_DISCONNECTING] = C(STANDALONE),
	[CONN_UNCONNECTED] = C(WFCONNECTION) | C(DISCONNECTING) | C(STANDALONE),
	[CONN_TIMEOUT] = C(UNCONNECTED) | C(DISCONNECTING) | C(STANDALONE),
	[CONN_BROKENPIPE] = C(UNCONNECTED) | C(DISCONNECTING) | C(STANDALONE),
	[CONN_NETWORKFAILURE] = C(UNCONNECTED) | C(DISCONNECTING) | C(STANDALONE),
	[CONN_PROTOCOLERROR] = C(UNCONNECTED) | C(DISCONNECTING) | C(STANDALONE),
	[CONN_TEARDOWN] = C(UNCONNECTED) | C(DISCONNECTING) | C(STANDALONE),
	[CONN_WFCONNECTION] = C(WFREPORTPARAMS) | C_DOWN,
	[CONN_WFREPORTPARAMS] = C_LIVE | C_DOWN,
	[CONN_CONNECTED] = C_LIVE | C_DOWN,
	[CONN_STARTINGSYNCS] = C_LIVE | C_DOWN,
	[CONN_STARTINGSYNCT] = C_LIVE | C_DOWN,
	[CONN_WFBITMAPS] = C_LIVE | C_DOWN,
	[CONN_WFBITMAPT] = C_LIVE | C_DOWN,
	[CONN_WFSYNCUUID] = C_LIVE | C_DOWN,
	[CONN_SYNCSOURCE] = C_LIVE | C_DOWN,
	[CONN_SYNCTARGET] = C_LIVE | C_DOWN,
	[CONN_VERIFYS] = C_LIVE | C_DOWN,
	[CONN_VERIFYT] = C_LIVE | C_DOWN,
	[CONN_PAUSEDSYNCS] = C_LIVE | C_DOWN,
	[CONN_PAUSEDSYNCT] = C_LIVE | C_DOWN,
	[CONN_AHEAD] = C_LIVE | C_DOWN,
	[CONN_BEHIND] = C_LIVE | C_DOWN,
};

/*
 * The local disk's transitions: attach goes Diskless -> Attaching ->
 * (Negotiating) -> the state the metadata says; a disk with data may
 * become any other data state (resync, outdating, fencing, a handshake)
 * except that nothing below Outdated becomes Outdated (DRBD's "lower than
 * outdated"); every disk may fail or be detached; a failed disk is only
 * ever detached. DUnknown is a peer's disk state only.
 */
#define D_DATA (D(INCONSISTENT) | D(OUTDATED) | D(CONSISTENT) | D(UPTODATE))
#define D_GONE (D(FAILED) | D(DISKLESS))
static const uint32_t disk_next[STATE_N_DISK] = {
	[DISK_DISKLESS] = D(ATTACHING),
	[DISK_ATTACHING] = D(NEGOTIATING) | D_DATA | D_GONE,
	[DISK_FAILED] = D(DISKLESS),
	[DISK_NEGOTIATING] = D_DATA | D_GONE,
	[DISK_INCONSISTENT] = D(CONSISTENT) | D(UPTODATE) | D_GONE,
	[DISK_OUTDATED] = D(INCONSISTENT) | D(UPTODATE) | D_GONE,
	[DISK_DUNKNOWN] = 0,
	[DISK_CONSISTENT] = D(INCONSISTENT) | D(OUTDATED) | D(UPTODATE) | D_GONE,
	[DISK_UPTODATE] = D(INCONSISTENT) | D(OUTDATED) | D(CONSISTENT) | D_GONE,
};

uint32_t state_conn_next(enum state_conn from)
{
	return (unsigned int)from < STATE_N_CONN ? conn_next[from] | (1u << from) : 0;
}

uint32_t state_disk_next(enum state_disk from)
{
	return (unsigned int)from < STATE_N_DISK ? disk_next[from] | (1u << from) : 0;
}

static bool r_conn_table(const struct state *os, const struct state *ns,
			 const struct state_ctx *ctx)
{
	return !(state_conn_next(os->conn) & (1u << ns->conn));
}

static bool r_disk_table(const struct state *os, const struct state *ns,
			 const struct state_ctx *ctx)
{
	return !(state_disk_next(os->disk) & (1u << ns->disk));
}

/* Order matters: the first refusing rule names the reason, as in DRBD. */
static const struct rule rules[] = {
	{"two Primaries need allow-two-primaries", SS_TWO_PRIMARIES, true, r_two_primaries},
	{"a Primary needs UpToDate data, local or the peer's", SS_NO_UP_TO_DATE_DISK, false,
	 r_need_uptodate},
	{"no demotion while the device is open", SS_DEVICE_IN_USE, false, r_device_in_use},
	{"fencing: no promotion while the peer is not known Outdated", SS_PRIMARY_NOP, false,
	 r_peer_not_outdated},
	{"a Primary's data is never Outdated", SS_NO_UP_TO_DATE_DISK, false, r_outdate_primary},
	{"no outdating while connected to the sync target", SS_CONNECTED_OUTDATES, false,
	 r_outdate_connected},
	{"nothing below Outdated becomes Outdated", SS_LOWER_THAN_OUTDATED, false,
	 r_outdate_lower},
	{"no detach while a resync runs", SS_RESYNC_RUNNING, false, r_resync_running},
	{"the connection follows the transition table", SS_IN_TRANSIENT_STATE, true,
	 r_conn_table},
	{"the disk follows the transition table", SS_IN_TRANSIENT_STATE, true, r_disk_table},
};

enum state_result state_check_how(const struct state *os, const struct state *ns,
				  const struct state_ctx *ctx, enum state_how how)
{
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if ((how == STATE_SOFT || rules[i].hard) && rules[i].refuses(os, ns, ctx))
			return rules[i].result;
	return SS_SUCCESS;
}

bool state_rule_info(unsigned int i, const char **name, enum state_result *result, bool *hard)
{
	if (i >= sizeof(rules) / sizeof(rules[0]))
		return false;
	*name = rules[i].name;
	*result = rules[i].result;
	*hard = rules[i].hard;
	return true;
}

const char *state_invariant(const struct state *s, const struct state_ctx *ctx)
{
	if (s->conn < CONN_WFREPORTPARAMS && s->peer != ROLE_UNKNOWN)
		return "without a connection the peer's role is Unknown";
	if (s->conn < CONN_WFREPORTPARAMS && s->pdsk > DISK_OUTDATED && s->pdsk != DISK_DUNKNOWN)
		return "without a connection the peer's disk is DUnknown or at most Outdated";
	if ((s->conn == CONN_SYNCTARGET || s->conn == CONN_PAUSEDSYNCT) &&
	    (s->disk != DISK_INCONSISTENT || s->pdsk != DISK_UPTODATE))
		return "a SyncTarget is Inconsistent and its peer UpToDate";
	if ((s->conn == CONN_SYNCSOURCE || s->conn == CONN_PAUSEDSYNCS) &&
	    (s->disk != DISK_UPTODATE || s->pdsk != DISK_INCONSISTENT))
		return "a SyncSource is UpToDate and its peer Inconsistent";
	if (s->role == ROLE_PRIMARY && s->peer == ROLE_PRIMARY && !ctx->allow_two_primaries)
		return "two Primaries need allow-two-primaries";
	if (s->disk == DISK_DUNKNOWN)
		return "the local disk is never DUnknown";
	return NULL;
}

enum state_result state_check(const struct state *os, const struct state *ns,
			      const struct state_ctx *ctx)
{
	return state_check_how(os, ns, ctx, STATE_SOFT);
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
