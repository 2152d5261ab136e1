/*
 * md-layout: where DRBD 8.4 (v08) metadata lives, as pure arithmetic
 * (doc/ondisk-format.pod, LAYOUTS). All sizes in 512-byte sectors.
 */
#ifndef TANDEM_MD_LAYOUT_H
#define TANDEM_MD_LAYOUT_H

#include <stdint.h>

enum md_kind {
	MD_INTERNAL,
	MD_FLEXIBLE, /* meta-disk DEV: the whole external device */
	MD_INDEXED,  /* meta-disk DEV[N]: 128 MiB slot N */
};

#define MD_SB_SECT          8u
#define MD_INDEXED_SECT     262144u          /* 128 MiB */
#define MD_MAX_FLEX_SECT    (1ULL << 41)     /* 1 PiB */
#define MD_AL_EXTENT_SHIFT  22               /* 4 MiB */
#define MD_AL_EXTENT_SECT   8192u
#define MD_BM_BLOCK_SHIFT   12               /* 4 KiB per bit */

struct md_layout {
	enum md_kind kind;
	int index;               /* MD_INDEXED slot, else -1 */
	uint64_t sb_sect;        /* superblock, absolute on the metadata device */
	uint32_t md_size_sect;
	int32_t al_offset;       /* relative to sb_sect */
	int32_t bm_offset;       /* relative to sb_sect */
	uint32_t al_stripes;
	uint32_t al_stripe_size_4k;
	uint32_t al_size_sect;
	uint64_t bm_size_sect;   /* sectors of the bitmap area */
	uint64_t max_data_sect;  /* largest usable data size */
};

/*
 * Compute a layout. md_dev_sect is the size of the device that holds the
 * metadata (the backing device for internal), data_dev_sect that of the
 * data device (same as md_dev_sect for internal). al_stripes and
 * al_stripe_size_4k of 0 mean the default 1 x 8. Returns 0, -EINVAL (AL
 * geometry, or striping on an indexed slot), -ENOSPC (device too small) or
 * -EFBIG (beyond the 1 PiB maximum).
 */
int md_layout_compute(enum md_kind kind, int index, uint64_t md_dev_sect, uint64_t data_dev_sect,
		      uint32_t al_stripes, uint32_t al_stripe_size_4k, struct md_layout *out);

/* Bitmap sectors needed to cover n data sectors (4 KiB granular). */
uint64_t md_layout_bm_sect(uint64_t data_sect);
/* Bytes of bitmap DRBD reads, writes and dumps for a device of la sectors. */
uint64_t md_layout_bm_bytes(uint64_t la_sect);
/* Bits that describe a device of la sectors: ceil(la / 8). */
uint64_t md_layout_bm_bits(uint64_t la_sect);
/* Most al-extents a ring of `blocks` 4 KiB transactions can hold. */
uint32_t md_layout_al_extents_max(uint32_t blocks);

#endif
