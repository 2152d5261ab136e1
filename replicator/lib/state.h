/*
 * state: roles, disk and connection states of a resource, DRBD 8.4's
 * names and order, and the one table of rules that decides whether a
 * state change is allowed (ref/drbd-semantics.md §2, §12). Pure functions.
 */
#ifndef TANDEM_STATE_H
#define TANDEM_STATE_H

#include <stdbool.h>
#include <stdint.h>

enum state_role {
	ROLE_UNKNOWN,
	ROLE_PRIMARY,
	ROLE_SECONDARY,
};

/* Ordered: comparisons (<, >=) carry DRBD's meaning. */
enum state_disk {
	DISK_DISKLESS,
	DISK_ATTACHING,
	DISK_FAILED,
	DISK_NEGOTIATING,
	DISK_INCONSISTENT,
	DISK_OUTDATED,
	DISK_DUNKNOWN,
	DISK_CONSISTENT,
	DISK_UPTODATE,
};

/* Ordered; below CONN_WFREPORTPARAMS there is no socket. */
enum state_conn {
	CONN_STANDALONE,
	CONN_DISCONNECTING,
	CONN_UNCONNECTED,
	CONN_TIMEOUT,
	CONN_BROKENPIPE,
	CONN_NETWORKFAILURE,
	CONN_PROTOCOLERROR,
	CONN_TEARDOWN,
	CONN_WFCONNECTION,
	CONN_WFREPORTPARAMS,
	CONN_CONNECTED,
	CONN_STARTINGSYNCS,
	CONN_STARTINGSYNCT,
	CONN_WFBITMAPS,
	CONN_WFBITMAPT,
	CONN_WFSYNCUUID,
	CONN_SYNCSOURCE,
	CONN_SYNCTARGET,
	CONN_VERIFYS,
	CONN_VERIFYT,
	CONN_PAUSEDSYNCS,
	CONN_PAUSEDSYNCT,
	CONN_AHEAD,
	CONN_BEHIND,
};

struct state {
	enum state_role role;
	enum state_role peer;
	enum state_disk disk;
	enum state_disk pdsk;
	enum state_conn conn;
	bool susp_user; /* I/O suspended by the operator */
	bool susp_nod;  /* no data accessible, on-no-data-accessible suspend-io */
	bool susp_fen;  /* fencing in progress (resource-and-stonith) */
	bool susp_quo;  /* no quorum, on-no-quorum suspend-io (DRBD 9's susp_quorum) */
	bool user_isp;  /* pause-sync */
	bool peer_isp;
	bool aftr_isp;  /* waiting for resync-after */
};

/* DRBD's state-change results (SS_*). */
enum state_result {
	SS_SUCCESS = 1,
	SS_TWO_PRIMARIES = -1,
	SS_NO_UP_TO_DATE_DISK = -2,
	SS_NO_LOCAL_DISK = -4,
	SS_NO_REMOTE_DISK = -5,
	SS_CONNECTED_OUTDATES = -6,
	SS_PRIMARY_NOP = -7,
	SS_RESYNC_RUNNING = -8,
	SS_ALREADY_STANDALONE = -9,
	SS_CW_FAILED_BY_PEER = -10,
	SS_IS_DISKLESS = -11,
	SS_DEVICE_IN_USE = -12,
	SS_NO_NET_CONFIG = -13,
	SS_NO_VERIFY_ALG = -14,
	SS_NEED_CONNECTION = -15,
	SS_LOWER_THAN_OUTDATED = -16,
	SS_NOT_SUPPORTED = -17,
	SS_IN_TRANSIENT_STATE = -18,
	SS_CONCURRENT_ST_CHG = -19,
	SS_OUTDATE_WO_CONN = -21,
};

enum state_fencing {
	FENCING_DONT_CARE,
	FENCING_RESOURCE_ONLY,
	FENCING_RESOURCE_AND_STONITH,
};

/* What the rules need besides the two states. */
struct state_ctx {
	bool allow_two_primaries;
	enum state_fencing fencing;
	bool device_open; /* NBD clients connected */
	bool force;       /* primary --force, secondary --force */
};

const char *state_role_name(enum state_role r);
const char *state_disk_name(enum state_disk d);
const char *state_conn_name(enum state_conn c);
/* Parse a name back (for the control protocol); -1 if unknown. */
int state_disk_from_name(const char *name);

/* DRBD's implicit adjustments to a requested state (peer Unknown and
 * DUnknown without a connection, ...). */
void state_sanitize(struct state *ns);

/*
 * How a change comes about (DRBD's soft and hard state changes):
 * STATE_SOFT is asked for (an operator's verb, the agent): every rule
 * applies. STATE_HARD happened (a lost link or disk, the peer's report, a
 * forced change): only the rules that no event may break apply, that is
 * the transition table and the structural rules; the caller logs it as
 * hard. doc/state-machine.md is the table in prose.
 */
enum state_how {
	STATE_SOFT,
	STATE_HARD,
};

/* May `os` become `ns` (a soft change)? SS_SUCCESS or the first rule that
 * refuses. */
enum state_result state_check(const struct state *os, const struct state *ns,
			      const struct state_ctx *ctx);
/* The same for a change made `how`. */
enum state_result state_check_how(const struct state *os, const struct state *ns,
				  const struct state_ctx *ctx, enum state_how how);

/* The transition table: the connection and disk states that may follow
 * `from` (a bit per state, 1u << state); a state may always stay. */
uint32_t state_conn_next(enum state_conn from);
uint32_t state_disk_next(enum state_disk from);
#define STATE_N_CONN (CONN_BEHIND + 1)
#define STATE_N_DISK (DISK_UPTODATE + 1)

/* The rules, for the documentation: the i-th rule's name, its result, and
 * whether it holds for hard changes too. false past the last. */
bool state_rule_info(unsigned int i, const char **name, enum state_result *result, bool *hard);

/* The invariants every reachable state keeps (the property test checks
 * them): NULL, or the name of the first one s breaks. */
const char *state_invariant(const struct state *s, const struct state_ctx *ctx);
/* "Device is held open by someone" etc., DRBD's wording. */
const char *state_result_text(enum state_result r);
/* drbdsetup's exit code for a refusal: 11, 17 (no UpToDate data), 5
 * (lower than Outdated), 16 (no local disk). */
int state_result_exit(enum state_result r);

#endif
