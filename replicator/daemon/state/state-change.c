/*
 * state-change: the one writer of a resource's state (issue 17,
 * doc/state-machine.md). The state is r->st (role, peer role, connection,
 * the peer's disk, suspension flags), each volume's disk (r->vs[i].disk; the
 * resource's disk is the worst of them) and each volume's replication
 * state (r->vs[i].repl, while a session lives; the live connection's state is
 * derived from them: the highest, at least Connected).
 * r->st_lock guards all of it; nothing else writes any of it.
 *
 * state_change() builds the new state, checks it against the rules of
 * lib/state.c (a soft change against all of them, a hard one against the
 * transition table and the structural rules), applies it at once, logs
 * every field that changed by name ("disk( UpToDate -> Failed )"), and
 * hands an event per field to the main loop for `tandemadm events`.
 * A soft change the rules refuse is logged and refused; a hard change they
 * refuse happened anyway (a disk does fail): it is applied and logged as a
 * bug in the code that reported it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "state/state-change.h"

int state_change_init(struct resource *r, const unsigned int *vnr)
{
	unsigned int i;

	r->vs = calloc(r->n_vols ? r->n_vols : 1, sizeof(*r->vs));
	if (!r->vs)
		return -ENOMEM;
	r->st = (struct state){.role = ROLE_SECONDARY, .peer = ROLE_UNKNOWN, .disk = DISK_DISKLESS,
			       .pdsk = DISK_DUNKNOWN, .conn = CONN_STANDALONE};
	for (i = 0; i < r->n_vols; i++)
		r->vs[i] = (struct vol_state){.r = r, .idx = i, .vnr = vnr[i],
					      .disk = DISK_DISKLESS, .repl = CONN_STANDALONE};
	return 0;
}

void state_change_fini(struct resource *r)
{
	free(r->vs);
	r->vs = NULL;
}

struct state_ctx state_change_ctx(const struct resource *r, bool force)
{
	const char *fencing = conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_DISK, "fencing");
	struct state_ctx ctx = {
		.allow_two_primaries =
			conf_res_bool(tandemd_conf(r->d), resource_cr(r), CONF_SECT_NET, "allow-two-primaries"),
		.fencing = !strcmp(fencing, "resource-only")	      ? FENCING_RESOURCE_ONLY
			   : !strcmp(fencing, "resource-and-stonith") ? FENCING_RESOURCE_AND_STONITH
								      : FENCING_DONT_CARE,
		.device_open = r->d->up->device_open(r),
		.force = force,
	};
	return ctx;
}

/* A state-change event, handed to the main loop (ctl clients live there). */
struct state_event {
	struct tandemd *d;
	char res[128];
	const char *what, *old, *new_value; /* static strings */
};

static void emit_event(void *arg)
{
	struct state_event *ev = arg;

	ev->d->up->event(ev->d, ev->res, ev->what, ev->old, ev->new_value);
	free(ev);
}

static void note(struct resource *r, int vol, const char *what, const char *old,
		 const char *new_value, const char *how, const char *why)
{
	struct state_event *ev;
	char vpre[32] = "";

	if (vol >= 0)
		snprintf(vpre, sizeof(vpre), "volume %u: ", r->vs[vol].vnr);
	log_res(LOG_NOTICE, r->name, "%s%s( %s -> %s )%s%s%s", vpre, what, old, new_value,
		why ? " " : "", why ? why : "", how);
	if (vol >= 0)
		return; /* events are per resource (doc/control-protocol.md) */
	ev = malloc(sizeof(*ev));
	if (!ev)
		return;
	*ev = (struct state_event){r->d, "", what, old, new_value};
	snprintf(ev->res, sizeof(ev->res), "%s", r->name);
	if (defer_call(r->d->defer, emit_event, ev) < 0)
		free(ev);
}

/* Log and announce what changed between os and ns (st_lock held). */
static void announce(struct resource *r, const struct state *os, const struct state *ns,
		     const char *how, const char *why)
{
	const struct {
		const char *what;
		bool changed;
		const char *old, *new_value;
	} ch[] = {
		{"role", os->role != ns->role, state_role_name(os->role), state_role_name(ns->role)},
		{"disk", os->disk != ns->disk, state_disk_name(os->disk), state_disk_name(ns->disk)},
		{"connection", os->conn != ns->conn, state_conn_name(os->conn),
		 state_conn_name(ns->conn)},
		{"peer", os->peer != ns->peer, state_role_name(os->peer), state_role_name(ns->peer)},
		{"peer-disk", os->pdsk != ns->pdsk, state_disk_name(os->pdsk),
		 state_disk_name(ns->pdsk)},
		{"susp-user", os->susp_user != ns->susp_user, os->susp_user ? "1" : "0",
		 ns->susp_user ? "1" : "0"},
		{"susp-nod", os->susp_nod != ns->susp_nod, os->susp_nod ? "1" : "0",
		 ns->susp_nod ? "1" : "0"},
		{"susp-fen", os->susp_fen != ns->susp_fen, os->susp_fen ? "1" : "0",
		 ns->susp_fen ? "1" : "0"},
		{"susp-quorum", os->susp_quo != ns->susp_quo, os->susp_quo ? "1" : "0",
		 ns->susp_quo ? "1" : "0"},
		{"user-isp", os->user_isp != ns->user_isp, os->user_isp ? "1" : "0",
		 ns->user_isp ? "1" : "0"},
	};
	size_t i;

	for (i = 0; i < sizeof(ch) / sizeof(ch[0]); i++)
		if (ch[i].changed)
			note(r, -1, ch[i].what, ch[i].old, ch[i].new_value, how, why);
}

static const char *state_text(const struct state *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%s/%s", state_role_name(s->role), state_conn_name(s->conn),
		 state_disk_name(s->disk), state_disk_name(s->pdsk));
	return buf;
}

/* Is volume i's disk changed by c? */
static bool vol_hit(const struct resource *r, const struct state_chg *c, unsigned int i)
{
	if (!(c->mask & SC_DISK))
		return false;
	if (c->vol < 0)
		return r->vs[i].disk >= c->disk_from;
	return (unsigned int)c->vol == i;
}

static enum state_disk new_disk(const struct resource *r, const struct state_chg *c,
				unsigned int i)
{
	return vol_hit(r, c, i) ? c->disk : r->vs[i].disk;
}

/* The replication state of volume i (StandAlone: a session that has not
 * set it yet, i.e. the connection's). */
static enum state_conn old_repl(const struct resource *r, unsigned int i, enum state_conn conn)
{
	enum state_conn c = r->vs[i].repl;

	return c == CONN_STANDALONE ? conn : c;
}

/* The live connection's state: its volumes' highest replication state, at
 * least Connected; volume vol's is repl (vol -1: none changes). */
static enum state_conn live_conn(const struct resource *r, int vol, enum state_conn repl)
{
	enum state_conn c = CONN_CONNECTED;
	unsigned int i;

	for (i = 0; i < r->n_vols; i++) {
		enum state_conn v = (int)i == vol ? repl : old_repl(r, i, CONN_CONNECTED);

		if (v > c)
			c = v;
	}
	return c;
}

enum state_conn state_change_live(struct resource *r)
{
	enum state_conn c;

	pthread_mutex_lock(&r->st_lock);
	c = live_conn(r, -1, CONN_STANDALONE);
	pthread_mutex_unlock(&r->st_lock);
	return c;
}

int state_change(struct resource *r, const struct state_chg *c, const char *why)
{
	char how[96] = "";
	struct state os, ns;
	struct state_ctx ctx;
	enum state_result ss = SS_SUCCESS;
	const char *bad = NULL;
	unsigned int i;
	char a[96], b[96];

	if ((c->mask & SC_DISK) && c->vol >= (int)r->n_vols)
		return -EINVAL;
	if ((c->mask & SC_REPL) && (c->vol < 0 || c->vol >= (int)r->n_vols || !r->peer))
		return -EINVAL; /* a replication state needs a session */
	pthread_mutex_lock(&r->st_lock);
	os = r->st;
	ns = os;
	if (c->mask & SC_ROLE)
		ns.role = c->s.role;
	if (c->mask & SC_SUSP_USER)
		ns.susp_user = c->s.susp_user;
	if (c->mask & SC_SUSP_NOD)
		ns.susp_nod = c->s.susp_nod;
	if (c->mask & SC_SUSP_FEN)
		ns.susp_fen = c->s.susp_fen;
	if (c->mask & SC_SUSP_QUO)
		ns.susp_quo = c->s.susp_quo;
	if (c->mask & SC_USER_ISP)
		ns.user_isp = c->s.user_isp;
	if (c->mask & SC_CONN) {
		ns.conn = c->s.conn;
		ns.peer = ns.conn < CONN_CONNECTED ? ROLE_UNKNOWN : c->s.peer;
		if (ns.conn >= CONN_CONNECTED)
			ns.pdsk = c->s.pdsk;
		else if (os.conn >= CONN_CONNECTED)
			ns.pdsk = DISK_DUNKNOWN; /* the link is gone: no longer known */
		else if (c->s.pdsk == DISK_OUTDATED || c->s.pdsk == DISK_INCONSISTENT)
			ns.pdsk = c->s.pdsk; /* still disconnected: what fencing learnt stays */
		else
			ns.pdsk = r->peer_outdated ? DISK_OUTDATED : DISK_DUNKNOWN;
	}
	/* the volumes: each against the table; the resource's disk is the worst */
	ns.disk = r->n_vols ? DISK_UPTODATE : DISK_DISKLESS;
	for (i = 0; i < r->n_vols; i++) {
		enum state_disk d = new_disk(r, c, i);

		if (vol_hit(r, c, i) && !(state_disk_next(r->vs[i].disk) & (1u << d)))
			bad = "a volume's disk follows the transition table";
		if (d < ns.disk)
			ns.disk = d;
	}
	if (c->mask & SC_REPL) {
		enum state_conn from = old_repl(r, (unsigned int)c->vol, os.conn);

		if (!(state_conn_next(from) & (1u << c->repl)))
			bad = "a volume's replication state follows the transition table";
	}
	/* A live connection's state is derived from its volumes', here only:
	 * when one of them changes, and when SC_CONN asks for CONN_CONNECTED.
	 * A specific live state in SC_CONN is taken as given (PausedSync*,
	 * how peer_show_sync_state() shows a paused resync). */
	if ((c->mask & SC_CONN) ? c->s.conn == CONN_CONNECTED
				: (c->mask & SC_REPL) && os.conn >= CONN_CONNECTED)
		ns.conn = live_conn(r, (c->mask & SC_REPL) ? c->vol : -1, c->repl);
	ctx = state_change_ctx(r, false);
	if (c->how == STATE_HARD) {
		/* marked in the log when an operator could not have asked for it */
		ss = state_check_how(&os, &ns, &ctx, STATE_SOFT);
		if (ss != SS_SUCCESS)
			snprintf(how, sizeof(how), " [hard: %s]", state_result_text(ss));
	}
	ctx.force = c->how == STATE_HARD && c->force;
	ss = state_check_how(&os, &ns, &ctx, c->how);
	if (ss == SS_SUCCESS && bad)
		ss = SS_IN_TRANSIENT_STATE;
	if (ss != SS_SUCCESS) {
		if (c->how == STATE_SOFT) {
			pthread_mutex_unlock(&r->st_lock);
			log_res(LOG_WARNING, r->name, "state change %s -> %s (%s) refused: %s",
				state_text(&os, a, sizeof(a)), state_text(&ns, b, sizeof(b)),
				why ? why : "-", bad ? bad : state_result_text(ss));
			return -EPERM;
		}
		log_res(LOG_WARNING, r->name,
			"BUG: state change %s -> %s (%s) breaks the state table: %s; made anyway "
			"(it happened)",
			state_text(&os, a, sizeof(a)), state_text(&ns, b, sizeof(b)), why ? why : "-",
			bad ? bad : state_result_text(ss));
	}
	/* apply, and log each field by name */
	for (i = 0; i < r->n_vols; i++) {
		struct vol_state *v = &r->vs[i];

		if (!vol_hit(r, c, i) || v->disk == c->disk)
			continue;
		if (r->n_vols > 1)
			note(r, (int)i, "disk", state_disk_name(v->disk), state_disk_name(c->disk),
			     how, why);
		__atomic_store_n(&v->disk, c->disk, __ATOMIC_RELEASE);
	}
	if (c->mask & SC_REPL) {
		struct vol_state *v = &r->vs[c->vol];

		if (v->repl != c->repl && (r->n_vols > 1 || ns.conn == os.conn))
			note(r, c->vol, "replication", state_conn_name(old_repl(r, c->vol, os.conn)),
			     state_conn_name(c->repl), how, why);
		__atomic_store_n(&v->repl, c->repl, __ATOMIC_RELEASE);
	} else if ((c->mask & SC_CONN) && ns.conn < CONN_CONNECTED) {
		/* the session is over: the next one starts from the connection's */
		for (i = 0; i < r->n_vols; i++)
			__atomic_store_n(&r->vs[i].repl, CONN_STANDALONE, __ATOMIC_RELEASE);
	}
	r->st = ns;
	if (os.role != ns.role) { /* "was Primary since" (doc/arbiter.md §2) */
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		r->primary_since = ns.role == ROLE_PRIMARY ? (int64_t)now.tv_sec : 0;
	}
	announce(r, &os, &ns, how, why);
	pthread_mutex_unlock(&r->st_lock);
	/* connected, both disks UpToDate: a fence placed earlier can go */
	if (ns.conn == CONN_CONNECTED && ns.disk == DISK_UPTODATE && ns.pdsk == DISK_UPTODATE &&
	    r->fence_placed)
		r->d->up->both_uptodate(r);
	return 0;
}

int state_change_disk(struct vol_state *v, enum state_disk d, const char *why)
{
	struct state_chg c = {.mask = SC_DISK, .vol = (int)v->idx, .disk = d, .how = STATE_HARD};

	return state_change(v->r, &c, why);
}

int state_change_disks(struct resource *r, enum state_disk d, const char *why)
{
	struct state_chg c = {.mask = SC_DISK, .vol = -1, .disk = d, .how = STATE_HARD};

	return state_change(r, &c, why);
}

int state_change_repl(struct vol_state *v, enum state_conn repl, const char *why)
{
	struct state_chg c = {.mask = SC_REPL, .vol = (int)v->idx, .repl = repl, .how = STATE_HARD};

	return state_change(v->r, &c, why);
}

int state_change_conn(struct resource *r, enum state_conn conn, enum state_role peer,
		      enum state_disk pdsk, const char *why)
{
	struct state_chg c = {.mask = SC_CONN, .s = {.conn = conn, .peer = peer, .pdsk = pdsk},
			      .how = STATE_HARD};

	return state_change(r, &c, why);
}

int state_change_flag(struct resource *r, unsigned int mask, bool on, const char *why)
{
	struct state_chg c = {.mask = mask & (SC_SUSP_USER | SC_SUSP_NOD | SC_SUSP_FEN | SC_SUSP_QUO |
					      SC_USER_ISP),
			      .s = {.susp_user = on, .susp_nod = on, .susp_fen = on, .susp_quo = on,
				    .user_isp = on},
			      .how = STATE_HARD};

	return state_change(r, &c, why);
}
