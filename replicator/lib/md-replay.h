/*
 * md-replay: crash recovery of a volume's metadata, drbdmeta apply-al's
 * algorithm (doc/ondisk-format.pod, Crash replay), shared by
 * `tandemadm apply-al` and tandemd's attach.
 */
#ifndef TANDEM_MD_REPLAY_H
#define TANDEM_MD_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "md.h"

struct md_replay_result {
	uint32_t n_corrupt;      /* AL blocks with bad magic or crc */
	bool usable;             /* false: problem says why */
	const char *problem;     /* drbdmeta's message */
	bool refused;            /* unusable log of a crashed Primary: nothing written */
	uint32_t n_extents;      /* extents active at the crash */
	uint64_t newly_marked;   /* bitmap bits set by the replay */
	uint32_t beyond_end;     /* active extents beyond the bitmap (ignored) */
	uint32_t first_beyond;   /* the first of them, for the message */
	bool wrote;              /* the metadata was changed */
};

/*
 * Replay the activity log of `m` into its bitmap if the node was Primary
 * (PRIMARY_IND), re-initialise the log and mark the metadata clean, as
 * drbdmeta does. *sb is the superblock as read; it is updated in place.
 * Returns 0 (see res), or a negative errno for I/O errors.
 */
int md_replay(struct md *m, struct md_sb *sb, struct md_replay_result *res);

#endif
