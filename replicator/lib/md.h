/*
 * md: the metadata of one volume in DRBD 8.4's v08 format: the superblock
 * (doc/ondisk-format.pod, SUPERBLOCK) and access to the AL and bitmap
 * areas around it.
 *
 * struct md_sb is the CPU-order form of the big-endian on-disk block;
 * md_sb_encode/decode convert explicitly. struct md is an open metadata
 * area: its devices, its layout and its superblock.
 */
#ifndef TANDEM_MD_H
#define TANDEM_MD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bdev.h"
#include "md-layout.h"

#define MD_MAGIC_07      0x8374026au
#define MD_MAGIC_CLEAN   0x8374026bu
#define MD_MAGIC_INUSE   0x8374026cu
#define MD_SB_BYTES      4096u
#define MD_BM_BYTES_PER_BIT 4096u

#define MDF_CONSISTENT      0x001u
#define MDF_PRIMARY_IND     0x002u
#define MDF_CONNECTED_IND   0x004u
#define MDF_FULL_SYNC       0x008u
#define MDF_WAS_UP_TO_DATE  0x010u
#define MDF_PEER_OUT_DATED  0x020u
#define MDF_CRASHED_PRIMARY 0x040u
#define MDF_AL_CLEAN        0x080u
#define MDF_AL_DISABLED     0x100u

enum md_uuid_idx {
	MD_UI_CURRENT,
	MD_UI_BITMAP,
	MD_UI_HISTORY0,
	MD_UI_HISTORY1,
	MD_UI_COUNT,
};

#define MD_UUID_JUST_CREATED 0x4ULL

struct md_sb {
	uint64_t la_size_sect;
	uint64_t uuid[MD_UI_COUNT];
	uint64_t device_uuid;
	uint64_t reserved;
	uint32_t flags;
	uint32_t magic;
	uint32_t md_size_sect;
	int32_t al_offset;
	uint32_t al_nr_extents;
	int32_t bm_offset;
	uint32_t bm_bytes_per_bit;
	uint32_t la_peer_max_bio_size;
	uint32_t al_stripes;
	uint32_t al_stripe_size_4k;
};

/* Explicit conversions; buf is MD_SB_BYTES long. Bytes 96.. are zero. */
void md_sb_encode(const struct md_sb *sb, void *buf);
void md_sb_decode(const void *buf, struct md_sb *sb);
/*
 * Check a decoded superblock against the layout it must have. Returns 0,
 * -ENOMSG (no v08 magic: "no metadata"), -EUCLEAN (in use: run apply-al),
 * -EINVAL (inconsistent fields); err receives the reason.
 */
int md_sb_check(const struct md_sb *sb, const struct md_layout *l, char *err, size_t errlen);

struct md;

struct md_open_opts {
	const char *data_path;  /* backing device */
	const char *md_path;    /* metadata device; NULL = internal */
	enum md_kind kind;
	int index;              /* MD_INDEXED slot */
	bool writable;
	uint32_t al_stripes;    /* geometry for create; 0 = read from disk / default */
	uint32_t al_stripe_size_4k;
};

/* Open the devices and compute the layout (geometry from the superblock
 * if one is there, else from opts). Does not validate the superblock. */
int md_open(const struct md_open_opts *o, struct md **out, char *err, size_t errlen);
void md_close(struct md *m);

const struct md_layout *md_layout(const struct md *m);
struct bdev *md_meta_bdev(struct md *m);
struct bdev *md_data_bdev(struct md *m);
uint64_t md_sb_offset(const struct md *m); /* bytes, on the metadata device */
uint64_t md_al_offset(const struct md *m);
uint64_t md_bm_offset(const struct md *m);

/* Read the superblock (no checks) into *sb. */
int md_read_sb(struct md *m, struct md_sb *sb);
/* Read and md_sb_check() it. */
int md_load_sb(struct md *m, struct md_sb *sb, char *err, size_t errlen);
/* Write the superblock, durably (that range only). */
int md_write_sb(struct md *m, const struct md_sb *sb);

/* What create-md writes: initialised AL, zeroed bitmap, then (after a
 * flush) a superblock with UUIDs 4/0/0/0, flags AL_CLEAN, clean magic. */
int md_create(struct md *m, uint32_t al_nr_extents, uint32_t peer_max_bio_size);
/* Zero the superblock. */
int md_wipe(struct md *m);
/* Read or write the whole AL ring (al_size_sect * 512 bytes). */
int md_read_al(struct md *m, void *buf);
int md_write_al_block(struct md *m, uint32_t block, const void *buf);
int md_init_al(struct md *m);
/* Read or write 4 KiB pages of the bitmap area (each write durable). */
int md_read_bm(struct md *m, uint64_t page, void *buf, size_t pages);
int md_write_bm_page(struct md *m, uint64_t page, const void *buf);

/* What an existing signature at the start of the data says ("ext4",
 * "xfs", "swap", "LUKS", ...), or NULL. For create-md's safety check. */
const char *md_probe_signature(struct md *m);

#endif
