/*
 * md: the v08 superblock and the metadata area of a volume.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "al.h"
#include "md.h"

struct md {
	struct bdev *data;
	struct bdev *meta; /* == data for internal */
	struct md_layout layout;
};

static void put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

void md_sb_encode(const struct md_sb *sb, void *buf)
{
	uint8_t *p = buf;
	int i;

	memset(p, 0, MD_SB_BYTES);
	put64(p + 0, sb->la_size_sect);
	for (i = 0; i < MD_UI_COUNT; i++)
		put64(p + 8 + 8 * i, sb->uuid[i]);
	put64(p + 40, sb->device_uuid);
	put64(p + 48, sb->reserved);
	put32(p + 56, sb->flags);
	put32(p + 60, sb->magic);
	put32(p + 64, sb->md_size_sect);
	put32(p + 68, (uint32_t)sb->al_offset);
	put32(p + 72, sb->al_nr_extents);
	put32(p + 76, (uint32_t)sb->bm_offset);
	put32(p + 80, sb->bm_bytes_per_bit);
	put32(p + 84, sb->la_peer_max_bio_size);
	put32(p + 88, sb->al_stripes);
	put32(p + 92, sb->al_stripe_size_4k);
}

void md_sb_decode(const void *buf, struct md_sb *sb)
{
	const uint8_t *p = buf;
	int i;

	sb->la_size_sect = get64(p + 0);
	for (i = 0; i < MD_UI_COUNT; i++)
		sb->uuid[i] = get64(p + 8 + 8 * i);
	sb->device_uuid = get64(p + 40);
	sb->reserved = get64(p + 48);
	sb->flags = get32(p + 56);
	sb->magic = get32(p + 60);
	sb->md_size_sect = get32(p + 64);
	sb->al_offset = (int32_t)get32(p + 68);
	sb->al_nr_extents = get32(p + 72);
	sb->bm_offset = (int32_t)get32(p + 76);
	sb->bm_bytes_per_bit = get32(p + 80);
	sb->la_peer_max_bio_size = get32(p + 84);
	sb->al_stripes = get32(p + 88);
	sb->al_stripe_size_4k = get32(p + 92);
}

/* The AL geometry a superblock declares; false if it is invalid. */
static bool sb_al_geometry(const struct md_sb *sb, uint32_t *stripes, uint32_t *size_4k)
{
	uint64_t total;

	*stripes = sb->al_stripes;
	*size_4k = sb->al_stripe_size_4k;
	if (*stripes == 0 && *size_4k == 0) {
		*stripes = 1;
		*size_4k = 8;
	}
	if (*stripes == 0 || *size_4k == 0)
		return false;
	total = (uint64_t)*stripes * *size_4k;
	return total >= 8 && total <= 8192;
}

#define FAIL(code, ...)                                                                            \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return code;                                                                       \
	} while (0)

int md_sb_check(const struct md_sb *sb, const struct md_layout *l, char *err, size_t errlen)
{
	uint32_t stripes, size_4k;
	uint64_t need;

	if (sb->magic == MD_MAGIC_07)
		FAIL(-ENOMSG, "found DRBD 0.7 metadata, which tandem does not read; create new "
			      "metadata with 'tandemadm create-md' (a full resync follows)");
	if (sb->magic != MD_MAGIC_CLEAN && sb->magic != MD_MAGIC_INUSE)
		FAIL(-ENOMSG, "no v08 metadata found (magic 0x%08x at sector %llu); run "
			      "'tandemadm create-md' first",
		     sb->magic, (unsigned long long)l->sb_sect);
	if (sb->bm_bytes_per_bit != MD_BM_BYTES_PER_BIT)
		FAIL(-EINVAL, "bm_bytes_per_bit is %u, must be 4096", sb->bm_bytes_per_bit);
	if (!sb_al_geometry(sb, &stripes, &size_4k))
		FAIL(-EINVAL, "invalid activity-log geometry: %u stripes of %u x 4 KiB (8 to 8192 "
			      "blocks in all)",
		     sb->al_stripes, sb->al_stripe_size_4k);
	if (stripes != l->al_stripes || size_4k != l->al_stripe_size_4k)
		FAIL(-EINVAL, "activity-log geometry %u x %u does not match the layout %u x %u",
		     stripes, size_4k, l->al_stripes, l->al_stripe_size_4k);
	if (sb->md_size_sect != l->md_size_sect)
		FAIL(-EINVAL, "md_size_sect is %u, the device size implies %u (was the device "
			      "resized? DRBD's 'drbdmeta check-resize' moves the metadata)",
		     sb->md_size_sect, l->md_size_sect);
	if (sb->al_offset != l->al_offset)
		FAIL(-EINVAL, "al_offset is %d, expected %d", sb->al_offset, l->al_offset);
	if (sb->bm_offset != l->bm_offset)
		FAIL(-EINVAL, "bm_offset is %d, expected %d", sb->bm_offset, l->bm_offset);
	if (sb->bm_offset % 8)
		FAIL(-EINVAL, "bm_offset %d is not 4 KiB aligned", sb->bm_offset);
	need = md_layout_bm_bytes(sb->la_size_sect) / 512;
	if (sb->la_size_sect > l->max_data_sect || need > l->bm_size_sect)
		FAIL(-EINVAL, "la_size_sect %llu is larger than this layout can hold (%llu "
			      "sectors)",
		     (unsigned long long)sb->la_size_sect, (unsigned long long)l->max_data_sect);
	if (sb->magic == MD_MAGIC_INUSE || !(sb->flags & MDF_AL_CLEAN))
		FAIL(-EUCLEAN, "the metadata is in use or was not shut down cleanly; run "
			       "'tandemadm apply-al' first");
	return 0;
}

static int open_devices(struct md *m, const struct md_open_opts *o)
{
	int rc = bdev_open(o->data_path, o->writable, &m->data);

	if (rc < 0)
		return rc;
	if (o->kind == MD_INTERNAL) {
		m->meta = m->data;
		return 0;
	}
	return bdev_open(o->md_path, o->writable, &m->meta);
}

int md_open(const struct md_open_opts *o, struct md **out, char *err, size_t errlen)
{
	uint32_t stripes = o->al_stripes, size_4k = o->al_stripe_size_4k;
	uint8_t buf[MD_SB_BYTES];
	struct md_layout probe;
	struct md_sb sb;
	struct md *m;
	int rc;

	if (o->kind != MD_INTERNAL && !o->md_path)
		FAIL(-EINVAL, "external metadata needs a metadata device");
	m = calloc(1, sizeof(*m));
	if (!m)
		FAIL(-ENOMEM, "out of memory");
	rc = open_devices(m, o);
	if (rc < 0) {
		snprintf(err, errlen, "cannot open %s: %s",
			 m->data ? o->md_path : o->data_path, strerror(-rc));
		md_close(m);
		return rc;
	}
	/* Use the geometry stored in an existing superblock, if any. */
	if (!stripes && md_layout_compute(o->kind, o->index, bdev_size(m->meta) / 512,
					  bdev_size(m->data) / 512, 0, 0, &probe) == 0 &&
	    bdev_pread(m->meta, buf, sizeof(buf), probe.sb_sect * 512) == 0) {
		md_sb_decode(buf, &sb);
		if ((sb.magic == MD_MAGIC_CLEAN || sb.magic == MD_MAGIC_INUSE) &&
		    !sb_al_geometry(&sb, &stripes, &size_4k))
			stripes = size_4k = 0;
	}
	rc = md_layout_compute(o->kind, o->index, bdev_size(m->meta) / 512,
			       bdev_size(m->data) / 512, stripes, size_4k, &m->layout);
	if (rc < 0) {
		switch (rc) {
		case -ENOSPC:
			snprintf(err, errlen, "%s is too small for %s metadata (%llu bytes)",
				 bdev_path(m->meta),
				 o->kind == MD_INTERNAL	 ? "internal"
				 : o->kind == MD_INDEXED ? "indexed"
							 : "external",
				 (unsigned long long)bdev_size(m->meta));
			break;
		case -EFBIG:
			snprintf(err, errlen, "%s is larger than 1 PiB, the most v08 metadata "
					      "describes",
				 bdev_path(m->meta));
			break;
		default:
			snprintf(err, errlen, "invalid metadata geometry (activity log %u x %u; "
					      "indexed slots need 1 x 8, slot 0..255)",
				 stripes, size_4k);
		}
		md_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

void md_close(struct md *m)
{
	if (!m)
		return;
	if (m->meta != m->data)
		bdev_close(m->meta);
	bdev_close(m->data);
	free(m);
}

const struct md_layout *md_layout(const struct md *m)
{
	return &m->layout;
}

struct bdev *md_meta_bdev(struct md *m)
{
	return m->meta;
}

struct bdev *md_data_bdev(struct md *m)
{
	return m->data;
}

uint64_t md_sb_offset(const struct md *m)
{
	return m->layout.sb_sect * 512;
}

uint64_t md_al_offset(const struct md *m)
{
	return (uint64_t)((int64_t)m->layout.sb_sect + m->layout.al_offset) * 512;
}

uint64_t md_bm_offset(const struct md *m)
{
	return (uint64_t)((int64_t)m->layout.sb_sect + m->layout.bm_offset) * 512;
}

int md_read_sb(struct md *m, struct md_sb *sb)
{
	uint8_t buf[MD_SB_BYTES];
	int rc = bdev_pread(m->meta, buf, sizeof(buf), md_sb_offset(m));

	if (rc == 0)
		md_sb_decode(buf, sb);
	return rc;
}

int md_load_sb(struct md *m, struct md_sb *sb, char *err, size_t errlen)
{
	int rc = md_read_sb(m, sb);

	if (rc < 0)
		FAIL(rc, "cannot read the superblock of %s: %s", bdev_path(m->meta),
		     strerror(-rc));
	return md_sb_check(sb, &m->layout, err, errlen);
}

int md_write_sb(struct md *m, const struct md_sb *sb)
{
	uint8_t buf[MD_SB_BYTES];

	md_sb_encode(sb, buf);
	return bdev_pwrite_sync(m->meta, buf, sizeof(buf), md_sb_offset(m));
}

int md_read_al(struct md *m, void *buf)
{
	return bdev_pread(m->meta, buf, (size_t)m->layout.al_size_sect * 512, md_al_offset(m));
}

int md_write_al_block(struct md *m, uint32_t block, const void *buf)
{
	if (block >= m->layout.al_size_sect / 8)
		return -EINVAL;
	/* durable by itself: an fdatasync of the (shared, for internal
	 * metadata) descriptor would also write back all dirty data */
	return bdev_pwrite_sync(m->meta, buf, AL_BLOCK_BYTES,
				md_al_offset(m) + (uint64_t)block * 4096);
}

int md_init_al(struct md *m)
{
	uint8_t buf[AL_BLOCK_BYTES];
	uint32_t i, n = m->layout.al_size_sect / 8;
	int rc;

	al_block_init(buf);
	for (i = 0; i < n; i++) {
		rc = bdev_pwrite(m->meta, buf, sizeof(buf), md_al_offset(m) + (uint64_t)i * 4096);
		if (rc < 0)
			return rc;
	}
	return bdev_flush(m->meta);
}

int md_read_bm(struct md *m, uint64_t page, void *buf, size_t pages)
{
	if ((page + pages) * 8 > m->layout.bm_size_sect)
		return -EINVAL;
	return bdev_pread(m->meta, buf, pages * 4096, md_bm_offset(m) + page * 4096);
}

int md_write_bm_page(struct md *m, uint64_t page, const void *buf)
{
	if ((page + 1) * 8 > m->layout.bm_size_sect)
		return -EINVAL;
	return bdev_pwrite_sync(m->meta, buf, 4096, md_bm_offset(m) + page * 4096);
}

int md_create(struct md *m, uint32_t al_nr_extents, uint32_t peer_max_bio_size)
{
	struct md_sb sb = {0};
	uint64_t bm_bytes;
	int rc;

	/* The whole bitmap the data device needs (drbdmeta zeroes less for
	 * external metadata; see ondisk-format, CREATE-MD). */
	bm_bytes = m->layout.kind == MD_INTERNAL ? m->layout.bm_size_sect * 512
						 : md_layout_bm_bytes(m->layout.max_data_sect);
	if (bm_bytes > m->layout.bm_size_sect * 512)
		bm_bytes = m->layout.bm_size_sect * 512;
	rc = md_init_al(m);
	if (rc == 0)
		rc = bdev_zero(m->meta, md_bm_offset(m), bm_bytes);
	if (rc == 0)
		rc = bdev_flush(m->meta);
	if (rc < 0)
		return rc;
	sb.uuid[MD_UI_CURRENT] = MD_UUID_JUST_CREATED;
	sb.flags = MDF_AL_CLEAN;
	sb.magic = MD_MAGIC_CLEAN;
	sb.md_size_sect = m->layout.md_size_sect;
	sb.al_offset = m->layout.al_offset;
	sb.al_nr_extents = al_nr_extents;
	sb.bm_offset = m->layout.bm_offset;
	sb.bm_bytes_per_bit = MD_BM_BYTES_PER_BIT;
	sb.la_peer_max_bio_size = peer_max_bio_size;
	sb.al_stripes = m->layout.al_stripes;
	sb.al_stripe_size_4k = m->layout.al_stripe_size_4k;
	return md_write_sb(m, &sb);
}

int md_wipe(struct md *m)
{
	uint8_t buf[MD_SB_BYTES] = {0};
	int rc = bdev_pwrite(m->meta, buf, sizeof(buf), md_sb_offset(m));

	return rc < 0 ? rc : bdev_flush(m->meta);
}

struct signature {
	const char *name;
	uint64_t off;
	const char *magic;
	size_t len;
};

static const struct signature signatures[] = {
	{"an ext2/3/4 filesystem", 1080, "\x53\xef", 2},
	{"an XFS filesystem", 0, "XFSB", 4},
	{"a btrfs filesystem", 65600, "_BHRfS_M", 8},
	{"a LUKS volume", 0, "LUKS\xba\xbe", 6},
	{"an LVM2 physical volume", 536, "LVM2 001", 8},
	{"swap space", 4086, "SWAPSPACE2", 10},
	{"a GPT partition table", 512, "EFI PART", 8},
	{"a DOS partition table", 510, "\x55\xaa", 2},
};

const char *md_probe_signature(struct md *m)
{
	/* Internal metadata overwrites the end of a filesystem that starts at
	 * the data device; external metadata overwrites its own device. */
	struct bdev *b = m->layout.kind == MD_INTERNAL ? m->data : m->meta;
	uint64_t base = m->layout.kind == MD_INTERNAL ? 0 : md_sb_offset(m);
	char buf[16];
	size_t i;

	for (i = 0; i < sizeof(signatures) / sizeof(signatures[0]); i++) {
		const struct signature *s = &signatures[i];

		if (bdev_pread(b, buf, s->len, base + s->off) == 0 &&
		    memcmp(buf, s->magic, s->len) == 0)
			return s->name;
	}
	return NULL;
}
