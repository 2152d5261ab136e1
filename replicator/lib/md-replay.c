/* md-replay: apply the activity log after a crash (drbdmeta apply-al). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "al.h"
#include "md-replay.h"

/* The bits of bitmap byte b below bit `bits` (the device end). */
static uint8_t in_device(uint64_t b, uint64_t bits)
{
	if ((b + 1) * 8 <= bits)
		return 0xff;
	if (b * 8 >= bits)
		return 0;
	return (uint8_t)((1u << (bits - b * 8)) - 1);
}

/* Set the 128 bitmap bytes of each active extent; bits past the device
 * end are written as zero, also ones set before (ondisk-format, BITMAP).
 * Returns newly set bits. */
static uint64_t mark_extents(uint8_t *bm, uint64_t bm_bytes, uint64_t bits,
			     const struct al_replay *r, struct md_replay_result *res)
{
	uint64_t newly = 0, bit;
	uint32_t i;

	for (i = 0; i < r->n_extents; i++) {
		uint64_t off = (uint64_t)r->extents[i] * 128, b;

		if (off >= bm_bytes) {
			if (!res->beyond_end++)
				res->first_beyond = r->extents[i];
			continue;
		}
		for (b = off; b < off + 128 && b < bm_bytes; b++) {
			uint8_t in = in_device(b, bits);

			newly += (uint64_t)__builtin_popcount((uint8_t)(in & ~bm[b]));
			bm[b] |= in;
		}
	}
	for (bit = bits; newly && bit < bm_bytes * 8; bit++)
		bm[bit / 8] &= (uint8_t) ~(1u << (bit % 8));
	return newly;
}

int md_replay(struct md *m, struct md_sb *sb, struct md_replay_result *res)
{
	const struct md_layout *l = md_layout(m);
	uint32_t blocks = l->al_size_sect / 8;
	struct al_replay r = {0};
	uint8_t *ring = NULL, *bm = NULL;
	uint64_t bm_bytes = md_layout_bm_bytes(sb->la_size_sect), i;
	bool reinit = true;
	int rc;

	memset(res, 0, sizeof(*res));
	ring = malloc((size_t)blocks * AL_BLOCK_BYTES);
	if (!ring)
		return -ENOMEM;
	rc = md_read_al(m, ring);
	if (rc == 0)
		rc = al_replay(ring, blocks, l->al_stripes, l->al_stripe_size_4k, &r);
	if (rc < 0)
		goto out;
	res->n_corrupt = r.n_corrupt;
	res->usable = r.usable;
	res->problem = r.problem;
	res->n_extents = r.n_extents;
	if (!r.usable && (sb->flags & MDF_PRIMARY_IND)) {
		res->refused = true;
		goto out;
	}
	/* a ring holding only "initialised" blocks is left as it is */
	if (r.usable && r.n_updates == 0)
		reinit = false;
	if (r.usable && r.n_extents && (sb->flags & MDF_PRIMARY_IND) && bm_bytes) {
		bm = malloc(bm_bytes);
		rc = bm ? md_read_bm(m, 0, bm, bm_bytes / 4096) : -ENOMEM;
		if (rc < 0)
			goto out;
		res->newly_marked =
			mark_extents(bm, bm_bytes, md_layout_bm_bits(sb->la_size_sect), &r, res);
		for (i = 0; res->newly_marked && i < bm_bytes / 4096; i++) {
			rc = md_write_bm_page(m, i, bm + i * 4096);
			if (rc < 0)
				goto out;
		}
		if (res->newly_marked)
			res->wrote = true;
	}
	if (reinit) {
		rc = md_init_al(m);
		if (rc < 0)
			goto out;
		res->wrote = true;
	}
	if (res->newly_marked || !(sb->flags & MDF_AL_CLEAN) || sb->magic != MD_MAGIC_CLEAN) {
		sb->flags |= MDF_AL_CLEAN;
		sb->magic = MD_MAGIC_CLEAN;
		rc = md_write_sb(m, sb);
		if (rc < 0)
			goto out;
		res->wrote = true;
	}
out:
	al_replay_free(&r);
	free(ring);
	free(bm);
	return rc;
}
