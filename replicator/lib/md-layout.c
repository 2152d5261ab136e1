/* md-layout: DRBD 8.4 v08 metadata layout arithmetic (ondisk-format LAYOUTS). */
#include "config.h"

#include <errno.h>

#include "md-layout.h"

uint64_t md_layout_bm_sect(uint64_t data_sect)
{
	/* one bitmap sector covers 32768 data sectors; whole 4 KiB blocks */
	return 8 * ((data_sect + 262143) / 262144);
}

uint64_t md_layout_bm_bits(uint64_t la_sect)
{
	return (la_sect + 7) / 8;
}

uint64_t md_layout_bm_bytes(uint64_t la_sect)
{
	uint64_t bits = (md_layout_bm_bits(la_sect) + 63) & ~63ULL;

	return ((bits / 8) + 4095) & ~4095ULL;
}

uint32_t md_layout_al_extents_max(uint32_t blocks)
{
	if (blocks > 72)
		return 65534;
	return blocks > 1 ? (blocks - 1) * 919 : 0;
}

int md_layout_compute(enum md_kind kind, int index, uint64_t md_dev_sect, uint64_t data_dev_sect,
		      uint32_t al_stripes, uint32_t al_stripe_size_4k, struct md_layout *out)
{
	struct md_layout l = {.kind = kind, .index = -1};
	uint64_t al_4k, bm_sect, sb;

	if (al_stripes == 0 && al_stripe_size_4k == 0) {
		al_stripes = 1;
		al_stripe_size_4k = 8;
	}
	if (al_stripes == 0 || al_stripe_size_4k == 0)
		return -EINVAL;
	al_4k = (uint64_t)al_stripes * al_stripe_size_4k;
	if (al_4k < 8 || al_4k > 8192)
		return -EINVAL;
	l.al_stripes = al_stripes;
	l.al_stripe_size_4k = al_stripe_size_4k;
	l.al_size_sect = (uint32_t)(al_4k * 8);

	switch (kind) {
	case MD_INTERNAL:
		if (md_dev_sect > MD_MAX_FLEX_SECT)
			return -EFBIG;
		bm_sect = md_layout_bm_sect(md_dev_sect);
		if (md_dev_sect < 16)
			return -ENOSPC;
		sb = (md_dev_sect & ~7ULL) - MD_SB_SECT;
		l.md_size_sect = (uint32_t)(bm_sect + MD_SB_SECT + l.al_size_sect);
		if (l.md_size_sect > sb)
			return -ENOSPC;
		l.sb_sect = sb;
		l.al_offset = -(int32_t)l.al_size_sect;
		l.bm_offset = -(int32_t)(l.md_size_sect - MD_SB_SECT);
		l.bm_size_sect = bm_sect;
		l.max_data_sect = sb - (l.md_size_sect - MD_SB_SECT);
		break;
	case MD_FLEXIBLE:
		if (md_dev_sect < 2048)
			return -ENOSPC; /* the kernel refuses less than 1 MiB */
		if (md_dev_sect > UINT32_MAX)
			md_dev_sect = UINT32_MAX & ~7ULL;
		l.sb_sect = 0;
		l.md_size_sect = (uint32_t)md_dev_sect;
		l.al_offset = MD_SB_SECT;
		l.bm_offset = (int32_t)(MD_SB_SECT + l.al_size_sect);
		if ((uint64_t)l.bm_offset + 8 > l.md_size_sect)
			return -ENOSPC;
		l.bm_size_sect = (l.md_size_sect - (uint32_t)l.bm_offset) & ~7u;
		l.max_data_sect = l.bm_size_sect * 32768;
		if (l.max_data_sect > MD_MAX_FLEX_SECT)
			l.max_data_sect = MD_MAX_FLEX_SECT;
		if (data_dev_sect < l.max_data_sect)
			l.max_data_sect = data_dev_sect;
		break;
	case MD_INDEXED:
		if (index < 0 || index > 255)
			return -EINVAL;
		if (al_stripes != 1 || al_stripe_size_4k != 8)
			return -EINVAL; /* the kernel refuses striping here */
		l.index = index;
		l.sb_sect = (uint64_t)index * MD_INDEXED_SECT;
		if (md_dev_sect < l.sb_sect + MD_INDEXED_SECT)
			return -ENOSPC;
		l.md_size_sect = MD_INDEXED_SECT;
		l.al_offset = MD_SB_SECT;
		l.bm_offset = (int32_t)(MD_SB_SECT + l.al_size_sect);
		l.bm_size_sect = MD_INDEXED_SECT - (uint32_t)l.bm_offset;
		l.max_data_sect = l.bm_size_sect * 32768;
		if (data_dev_sect < l.max_data_sect)
			l.max_data_sect = data_dev_sect;
		break;
	default:
		return -EINVAL;
	}
	*out = l;
	return 0;
}
