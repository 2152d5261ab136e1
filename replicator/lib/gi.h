/*
 * gi: generation identifiers (the four generation UUIDs of a volume) and
 * their rotation rules, as pure functions (doc/ondisk-format.pod,
 * GENERATION UUIDS; ref/drbd-semantics.md section 5). Bit 0 of the
 * current UUID marks the Primary role; comparisons ignore it.
 */
#ifndef TANDEM_GI_H
#define TANDEM_GI_H

#include <stdbool.h>
#include <stdint.h>

#define GI_JUST_CREATED   0x4ULL
#define GI_NEW_BM_OFFSET  (1ULL << 48)

enum gi_idx {
	GI_CURRENT,
	GI_BITMAP,
	GI_HISTORY0,
	GI_HISTORY1,
	GI_COUNT,
};

struct gi {
	uint64_t uuid[GI_COUNT];
};

static inline uint64_t gi_mask(uint64_t u)
{
	return u & ~1ULL;
}

/* A random UUID that is none of 0, 4; bit 0 clear. rnd: caller's entropy. */
uint64_t gi_random(uint64_t rnd);
/* Entropy for the rnd arguments: getrandom(2), else /dev/urandom. A
 * generation UUID must not be guessable or repeat across nodes, so the
 * clock is never used. */
uint64_t gi_entropy(void);
/* Set bit 0 of current by role. */
void gi_set_role(struct gi *g, bool primary);
/* New current UUID: old current -> bitmap slot. Returns true if a nonzero
 * bitmap UUID was overwritten (DRBD warns). */
bool gi_new_current(struct gi *g, uint64_t rnd, bool primary);
/* Bitmap UUID := v (bit 0 cleared), no rotation. */
void gi_set_bitmap(struct gi *g, uint64_t v);
/* Bitmap UUID := 0, the old value (if nonzero) rotated into history. */
void gi_clear_bitmap(struct gi *g);
/* Resync start on the SyncSource: returns the sync UUID S (old bitmap +
 * 2^48, or random if it was 0 or 4), which becomes the bitmap UUID with
 * the old one rotated into history. */
uint64_t gi_start_sync_source(struct gi *g, uint64_t rnd);
/* The SyncTarget receives S: current := S, bitmap := 0, no rotation. */
void gi_sync_target_receive(struct gi *g, uint64_t sync_uuid, bool primary);
/* End of a successful resync on the target, given the peer's UUIDs as
 * received at connect time (before the peer started the resync). */
void gi_end_sync_target(struct gi *g, const struct gi *peer, bool primary);
/* End of resync on the source: clear the bitmap UUID into history. */
void gi_end_sync_source(struct gi *g);
/* new-current-uuid --clear-bitmap: new current, bitmap 0, no rotation. */
void gi_new_current_clear_bitmap(struct gi *g, uint64_t rnd, bool primary);

#endif
