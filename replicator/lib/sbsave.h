/*
 * sbsave: split-brain saves. Before a resync overwrites the blocks in which
 * this node diverged from its peer (its changes lost the split-brain
 * decision), they are copied into a save set, so that an automatic
 * recovery never destroys the only copy of data (doc/split-brain-saves.md).
 *
 * A save set is a directory RESDIR/sb-YYYYMMDDTHHMMSSZ-vN[-K] (RESDIR =
 * STATEDIR/RESOURCE, time in UTC, N the volume, K > 1 on a name clash)
 * holding:
 *   image          a sparse file of the device's size; saved ranges are
 *                  written at their own offsets, the rest is holes;
 *   manifest.json  what, whose and why: resource, volume, nodes, UUIDs,
 *                  policy, device size, the saved ranges, state.
 * sbsave_begin() writes a manifest with state "partial" at once;
 * sbsave_flush() and sbsave_abort() rewrite it (still "partial") with the
 * ranges saved so far; sbsave_commit() makes it "complete". A manifest is
 * replaced atomically (temporary file, fsync, rename, fsync of the
 * directory), and the image is fsynced before any manifest that lists its
 * ranges. A set without a manifest (a crash right after the mkdir) lists
 * as partial.
 *
 * Errors are negative errnos; decoders return -EINVAL and say in reason
 * which file and field is wrong. struct sbsave is for one thread.
 */
#ifndef TANDEM_SBSAVE_H
#define TANDEM_SBSAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gi.h"

#define SBSAVE_REASON_MAX 512
#define SBSAVE_IMAGE "image"
#define SBSAVE_MANIFEST "manifest.json"
#define SBSAVE_FORMAT "tandem-sbsave"
#define SBSAVE_VERSION 1

struct sbsave;

/* What a save set records besides its blocks. */
struct sbsave_meta {
	const char *resource;
	unsigned int volume;
	const char *node;     /* this node, whose changes are being discarded */
	const char *peer;     /* the node whose data wins */
	const char *policy;   /* what decided, e.g. "after-sb-0pri=discard-least-changes" */
	struct gi local;      /* this node's UUIDs at the handshake */
	struct gi peer_uuids; /* the peer's, as received */
	uint64_t device_size; /* bytes */
	time_t created;	      /* 0: now */
};

struct sbsave_range {
	uint64_t offset; /* bytes */
	uint64_t length;
};

/* A decoded save set. Strings are never NULL ("" when unknown). */
struct sbsave_info {
	char *path; /* the set's directory */
	char *name; /* its last component */
	bool has_manifest;
	bool complete; /* manifest state "complete" */
	char *resource, *node, *peer, *policy;
	unsigned int volume;
	time_t created;
	struct gi local, peer_uuids;
	uint64_t device_size; /* without a manifest: the image's size */
	uint64_t total_bytes; /* sum of the range lengths */
	size_t n_ranges;
	struct sbsave_range *ranges; /* sorted, disjoint */
};

/* STATEDIR/RESOURCE into buf; -EINVAL for a resource name that is not one
 * path component, -ENAMETOOLONG. */
int sbsave_resdir(const char *statedir, const char *resource, char *buf, size_t len);
/* Is name "sb-YYYYMMDDTHHMMSSZ-vN[-K]"? Fills created/volume (may be NULL). */
bool sbsave_parse_name(const char *name, time_t *created, unsigned int *volume);

/* Create a new set under resdir (created if missing, its parent must
 * exist). */
int sbsave_begin(const char *resdir, const struct sbsave_meta *m, struct sbsave **out);
/* Save len bytes that belong at offset off. Parts already saved are kept
 * (the first copy is the one from before the resync), adjacent and
 * overlapping ranges merge. -ERANGE past the device's end. A write error
 * is sticky: the set can then only end as partial. */
int sbsave_range(struct sbsave *s, uint64_t off, const void *buf, size_t len);
/* fsync the image, then record the ranges so far in a "partial" manifest.
 * Call it before overwriting blocks whose saves must survive a crash. */
int sbsave_flush(struct sbsave *s);
/* End the set as "complete". On an error the set stays on disk as
 * partial. s is freed either way. */
int sbsave_commit(struct sbsave *s);
/* End the set without completing it: kept as partial with the ranges saved
 * so far, or removed if nothing was saved. s is freed either way. */
int sbsave_abort(struct sbsave *s);
const char *sbsave_path(const struct sbsave *s);
uint64_t sbsave_bytes(const struct sbsave *s);

/* Decode the set at path. -EINVAL with reason for a corrupt set, -ENOENT
 * or -ENOTDIR when path is not a directory. */
int sbsave_load(const char *path, struct sbsave_info **out, char *reason, size_t reason_len);
void sbsave_info_free(struct sbsave_info *i);

/* Every save set in resdir, oldest first: fn(arg, path, info, 0, "") or,
 * for one that does not decode, fn(arg, path, NULL, err, reason). A
 * nonzero return from fn stops the walk and is returned. A missing resdir
 * has no sets (0). */
typedef int (*sbsave_list_fn)(void *arg, const char *path, const struct sbsave_info *info, int err,
			      const char *reason);
int sbsave_list(const char *resdir, sbsave_list_fn fn, void *arg);

/* Remove the set at path, after checking that it is one: a real
 * directory with a save set name (else -EINVAL) holding nothing but a
 * set's files (else -ENOTEMPTY). */
int sbsave_discard(const char *path, char *reason, size_t reason_len);

/* Is there room in dir's file system for a set of bytes saved bytes (with
 * its manifest and some slack)? 0 or -ENOSPC; *avail (may be NULL) gets
 * the free bytes. */
int sbsave_space_ok(const char *dir, uint64_t bytes, uint64_t *avail);

#endif
