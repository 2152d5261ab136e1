/*
 * control/: private to the control room: the daemon's main loop, its
 * control socket, the resources' verbs and status, handlers, reload and
 * the fencing glue (HACKING.md, "The rooms"). It uses every other room;
 * no room uses it, except through the upcalls it fills in (main.c).
 */
#ifndef TANDEM_CONTROL_H
#define TANDEM_CONTROL_H

#include <json-c/json.h>

#include "tandemd.h"

/* handler.c: run handlers { NAME } as a child process; done() gets its
 * exit code on the main loop. Returns 0 (started), 1 (not configured:
 * done is not called) or a negative errno. vnr -1: all volumes. */
int handler_init(struct tandemd *d);
int handler_run(struct resource *r, const char *name, int vnr, handler_done_fn done, void *arg);
void handler_forget(struct resource *r);
/* From a thread other than the main loop: run the handler and wait for
 * its exit code (0 if not configured); -ECANCELED once abort_fn says so. */
int handler_run_wait(struct resource *r, const char *name, int vnr, bool (*abort_fn)(void *),
		     void *arg);

/* fence.c */
bool fence_frozen(struct resource *r);
int fence_wait(struct resource *r);
void fence_conn_lost(struct resource *r);
void fence_conn_back(struct resource *r);
void fence_both_uptodate(struct resource *r);
bool fence_for_promote(struct resource *r);
int fence_resume_io(struct resource *r, struct reply_err *e);
void fence_status(struct resource *r, json_object *o);

/* quorum.c: `quorum` (doc/arbiter.md §6.5); main loop */
json_object *quorum_cmd(struct tandemd *d, json_object *req, struct reply_err *e);
/* Apply the partition's quorum and the resource's policy to its I/O. */
void quorum_apply(struct resource *r, const char *why);
/* primary: 0, or -EPERM with e filled (no quorum); *forced: only --force allowed it. */
int quorum_promote_check(struct resource *r, bool force, bool *forced, struct reply_err *e);
/* After a promotion or demotion (forced: see quorum_promote_check). */
void quorum_role_changed(struct resource *r, bool forced);
/* secondary --force on a Primary whose I/O waits for quorum: let it go. */
void quorum_demoting(struct resource *r);
void quorum_status(struct resource *r, json_object *o);
/* The resource has `quorum majority`. */
bool quorum_majority(const struct resource *r);

/* resource.c */
int resource_init(struct tandemd *d, struct resource *r, const struct conf_res *cr);
void resource_fini(struct resource *r);
int resource_up(struct resource *r, struct reply_err *e);
int resource_down(struct resource *r, bool force, struct reply_err *e);
int resource_primary(struct resource *r, bool force, struct reply_err *e);
int resource_secondary(struct resource *r, bool force, struct reply_err *e);
int resource_new_current_uuid(struct resource *r, bool clear_bitmap, struct reply_err *e);
int resource_outdate(struct resource *r, struct reply_err *e);
bool resource_device_open(const struct resource *r);
void resource_demote_after_sb(struct resource *r);
json_object *resource_status(struct resource *r);
/* Main loop: volume v failed (on-io-error detach / call-local-io-error),
 * or passed an error on (pass_on: disk Inconsistent). */
void resource_volume_failed(struct volume *v);
void resource_volume_error_passed(struct volume *v);
/* Replication: hold new writes (handshake); the disk state changed (the
 * resource's follows its volumes, the peer is told); the peer is gone. */
int resource_connect(struct resource *r, bool discard_my_data, struct reply_err *e);
int resource_disconnect(struct resource *r, struct reply_err *e);
int resource_invalidate(struct resource *r, bool remote, struct reply_err *e);
int resource_pause_sync(struct resource *r, bool pause, struct reply_err *e);

/* reload.c */
/* Re-read the configuration and apply it (SIGHUP, `adjust`); on errors the
 * running configuration stays and msg says why. */
int tandemd_reload(struct tandemd *d, char *msg, size_t msglen);
int tandemd_add_resource(struct tandemd *d, const struct conf_res *cr);

/* ctl-cmd.c: answer one request line (a JSON object with "ok"); whether
 * it was a successful `events`, and with "now". */
json_object *ctl_cmd_dispatch(struct tandemd *d, const char *line);
bool ctl_cmd_is_events(const char *line, json_object *res, bool *now);

/* ctl.c */
struct ctl;
int ctl_start(struct tandemd *d, const char *path, struct ctl **out);
void ctl_stop(struct ctl *c);
/* Tell the event-stream clients about a state change. */
void ctl_event(struct tandemd *d, const char *res, const char *what, const char *old,
	       const char *new_value);

#endif
