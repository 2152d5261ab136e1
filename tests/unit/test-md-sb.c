/*
 * Unit tests for md: superblock encode/decode of every field and flag,
 * byte order, the attach checks, and create/wipe on a sparse file with
 * fault injection (EIO, short and torn writes).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "al.h"
#include "md.h"

static struct md_sb sample(void)
{
	struct md_sb sb = {
		.la_size_sect = 0x0102030405060708ULL,
		.uuid = {0x1112131415161718ULL, 0x2122232425262728ULL, 0x3132333435363738ULL,
			 0x4142434445464748ULL},
		.device_uuid = 0x5152535455565758ULL,
		.reserved = 0,
		.flags = 0x000001ff,
		.magic = MD_MAGIC_CLEAN,
		.md_size_sect = 136,
		.al_offset = -64,
		.al_nr_extents = 1237,
		.bm_offset = -128,
		.bm_bytes_per_bit = 4096,
		.la_peer_max_bio_size = 1048576,
		.al_stripes = 1,
		.al_stripe_size_4k = 8,
	};
	return sb;
}

static void test_encode_layout(void **state)
{
	static const uint8_t expect[96] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x11, 0x12, 0x13, 0x14,
		0x15, 0x16, 0x17, 0x18, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
		0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x41, 0x42, 0x43, 0x44,
		0x45, 0x46, 0x47, 0x48, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
		0,    0,    0,    0,    0,    0,    0,    0,    0x00, 0x00, 0x01, 0xff,
		0x83, 0x74, 0x02, 0x6b, 0x00, 0x00, 0x00, 0x88, 0xff, 0xff, 0xff, 0xc0,
		0x00, 0x00, 0x04, 0xd5, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08,
	};
	struct md_sb sb = sample();
	uint8_t buf[MD_SB_BYTES];
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	md_sb_encode(&sb, buf);
	assert_memory_equal(buf, expect, sizeof(expect));
	for (i = 96; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
}

static void test_roundtrip_every_field_and_flag(void **state)
{
	uint8_t buf[MD_SB_BYTES];
	struct md_sb a = sample(), b;
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		a.flags = 1u << bit;
		a.uuid[bit % 4] ^= 1ULL << (bit * 2);
		a.al_offset = -(int32_t)bit - 1;
		a.bm_offset = (int32_t)bit * 8;
		md_sb_encode(&a, buf);
		md_sb_decode(buf, &b);
		assert_memory_equal(&a, &b, sizeof(a));
	}
}

/* A superblock that matches a 1 GiB internal layout. */
static void good(struct md_layout *l, struct md_sb *sb)
{
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 2097152, 2097152, 0, 0, l), 0);
	*sb = sample();
	sb->la_size_sect = l->max_data_sect;
	sb->flags = MDF_AL_CLEAN | MDF_CONSISTENT;
}

static void test_check(void **state)
{
	struct md_layout l;
	struct md_sb sb;
	char err[256];

	good(&l, &sb);
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), 0);

	good(&l, &sb);
	sb.magic = 0;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -ENOMSG);
	assert_non_null(strstr(err, "create-md"));
	sb.magic = MD_MAGIC_07;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -ENOMSG);
	assert_non_null(strstr(err, "0.7"));

	good(&l, &sb);
	sb.magic = MD_MAGIC_INUSE;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EUCLEAN);
	assert_non_null(strstr(err, "apply-al"));
	good(&l, &sb);
	sb.flags &= ~MDF_AL_CLEAN;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EUCLEAN);

	good(&l, &sb);
	sb.bm_bytes_per_bit = 512;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EINVAL);
	good(&l, &sb);
	sb.al_stripes = 0;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EINVAL);
	good(&l, &sb);
	sb.al_stripes = 0;
	sb.al_stripe_size_4k = 0; /* pre-8.4.3 metadata: 1 x 8 */
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), 0);
	good(&l, &sb);
	sb.md_size_sect = 144;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "resized"));
	good(&l, &sb);
	sb.al_offset = -72;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EINVAL);
	good(&l, &sb);
	sb.bm_offset = -120;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EINVAL);
	good(&l, &sb);
	sb.la_size_sect = l.max_data_sect + 8;
	assert_int_equal(md_sb_check(&sb, &l, err, sizeof(err)), -EINVAL);
}

/* ---- on a file, with fault injection ---- */

struct faults {
	int mode; /* 0 none, 1 EIO, 2 short, 3 torn, 4 flush fails */
	int writes;
};

static struct bdev_fault on_write(void *ctx, uint64_t off, size_t len)
{
	struct faults *f = ctx;
	struct bdev_fault r = {len, 0};

	f->writes++;
	if (f->mode == 1)
		r = (struct bdev_fault){0, -EIO};
	else if (f->mode == 2)
		r = (struct bdev_fault){len > 512 ? 512 : len, 0};
	else if (f->mode == 3)
		r = (struct bdev_fault){len > 512 ? 512 : len, -EIO};
	return r;
}

static int on_flush(void *ctx)
{
	struct faults *f = ctx;

	return f->mode == 4 ? -EIO : 0;
}

static char *make_image(uint64_t bytes)
{
	char *path = strdup("/tmp/tandem-test-md-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
	close(fd);
	return path;
}

static struct md *open_image(const char *path)
{
	struct md_open_opts o = {.data_path = path, .kind = MD_INTERNAL, .writable = true};
	struct md *m = NULL;
	char err[256];

	assert_int_equal(md_open(&o, &m, err, sizeof(err)), 0);
	return m;
}

static void test_create_on_file(void **state)
{
	char *path = make_image(64 << 20);
	struct md *m = open_image(path);
	uint8_t ring[32768], init[AL_BLOCK_BYTES];
	struct md_sb sb;
	char err[256];
	int i;

	assert_int_equal(md_create(m, 257, 0), 0);
	assert_int_equal(md_load_sb(m, &sb, err, sizeof(err)), 0);
	assert_int_equal(sb.uuid[MD_UI_CURRENT], MD_UUID_JUST_CREATED);
	assert_int_equal(sb.flags, MDF_AL_CLEAN);
	assert_int_equal(sb.al_nr_extents, 257);
	assert_int_equal(sb.la_size_sect, 0);
	assert_int_equal(md_read_al(m, ring), 0);
	al_block_init(init);
	for (i = 0; i < 8; i++)
		assert_memory_equal(ring + i * 4096, init, 4096);
	assert_int_equal(md_wipe(m), 0);
	assert_int_equal(md_load_sb(m, &sb, err, sizeof(err)), -ENOMSG);
	md_close(m);
	unlink(path);
	free(path);
}

static void test_faults(void **state)
{
	char *path = make_image(16 << 20);
	struct md *m = open_image(path);
	struct faults f = {0};
	struct bdev_faults hooks = {.on_write = on_write, .on_flush = on_flush, .ctx = &f};
	struct md_sb sb, back;
	char err[256];

	assert_int_equal(md_create(m, 257, 0), 0);
	assert_int_equal(md_load_sb(m, &sb, err, sizeof(err)), 0);
	bdev_set_faults(md_meta_bdev(m), &hooks);

	/* EIO: nothing is written, the old superblock stays */
	f.mode = 1;
	sb.uuid[0] = 0x1234;
	assert_int_equal(md_write_sb(m, &sb), -EIO);
	f.mode = 0;
	assert_int_equal(md_read_sb(m, &back), 0);
	assert_int_equal(back.uuid[0], MD_UUID_JUST_CREATED);

	/* short writes are retried until complete */
	f.mode = 2;
	f.writes = 0;
	assert_int_equal(md_write_sb(m, &sb), 0);
	assert_int_equal(f.writes, 8);
	f.mode = 0;
	assert_int_equal(md_read_sb(m, &back), 0);
	assert_int_equal(back.uuid[0], 0x1234);

	/* a torn write reports the error; the first sector is new */
	f.mode = 3;
	sb.uuid[0] = 0x5678;
	sb.al_stripe_size_4k = 0x99;
	assert_int_equal(md_write_sb(m, &sb), -EIO);
	f.mode = 0;
	assert_int_equal(md_read_sb(m, &back), 0);
	assert_int_equal(back.uuid[0], 0x5678);
	assert_int_equal(back.al_stripe_size_4k, 0x99); /* offset 92: in the first sector */

	/* a failing flush is an error */
	f.mode = 4;
	assert_int_equal(md_write_sb(m, &sb), -EIO);
	bdev_set_faults(md_meta_bdev(m), NULL);
	md_close(m);
	unlink(path);
	free(path);
}

static void test_signature_probe(void **state)
{
	char *path = make_image(16 << 20);
	struct md *m = open_image(path);
	uint8_t magic[2] = {0x53, 0xef};

	assert_null(md_probe_signature(m));
	assert_int_equal(bdev_pwrite(md_data_bdev(m), magic, 2, 1080), 0);
	assert_string_equal(md_probe_signature(m), "an ext2/3/4 filesystem");
	md_close(m);
	unlink(path);
	free(path);
}

static void test_open_errors(void **state)
{
	struct md_open_opts o = {.data_path = "/nonexistent/x", .kind = MD_INTERNAL};
	char *small = make_image(4096);
	struct md *m = NULL;
	char err[256];

	assert_int_equal(md_open(&o, &m, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x"));
	o.data_path = small;
	assert_int_equal(md_open(&o, &m, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "too small"));
	o.kind = MD_FLEXIBLE;
	o.md_path = NULL;
	assert_int_equal(md_open(&o, &m, err, sizeof(err)), -EINVAL);
	assert_null(m);
	unlink(small);
	free(small);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_layout),
		cmocka_unit_test(test_roundtrip_every_field_and_flag),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_create_on_file),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_signature_probe),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
