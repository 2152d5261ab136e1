/*
 * test-md-dump: the `drbdmeta dump-md` text of md-dump.c, written and
 * parsed (doc/ondisk-format.pod, APPENDIX: DRBDMETA OUTPUT FORMATS).
 *
 * The expected texts and hashes below were produced by drbdmeta 9.22.0
 * (Debian drbd-utils 9.22.0-1) and compared with md_dump_write() on the
 * same superblock and bitmap. The steps (as root; $L is the loop device;
 * dumpit is a small program that opens the area with md_open(), reads it
 * with md_read_sb()/md_read_bm() and prints md_dump_write()):
 *
 *   truncate -s 1G a.img; L=$(losetup -f --show a.img)
 *   yes yes | drbdmeta --force 0 v08 $L internal create-md
 *   # la_size_sect is 0 after create-md, so the bitmap would be empty:
 *   # write 2097016 as a big-endian u64 at the superblock (md_offset)
 *   python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(1073737728);
 *     f.write(struct.pack(">Q", 2097016))' $L
 *   yes | drbdmeta --force 0 v08 $L internal set-gi \
 *     1234567890ABCDEF:FEDCBA0987654322:1111111111111110:2222222222222220:1:1:0:1:0:1:0
 *   # bitmap words: little-endian u64 at bm_offset (1073672192) + 8 * word,
 *   # written with python/dd; e.g. the pattern() of this file, seeds 1 and 2
 *   blockdev --flushbufs $L
 *   drbdmeta 0 v08 $L internal dump-md > d.txt; ./dumpit $L > t.txt
 *   diff <(sed 1,3d d.txt | grep -v '^    flags') <(sed 1,3d t.txt | grep -v '^    flags')
 *
 * Checked that way (all identical apart from the 3 header lines and the
 * flags line, where drbdmeta prints 0 and we print the on-disk 0xB5):
 *   - the worked example, all-zero, all-one and 8 random/run-heavy bitmaps
 *     on 1 GiB internal;
 *   - "--force" dump of in-use metadata (magic 0x8374026C written with dd):
 *     the two unclean lines; drbdmeta restore-md refuses that dump (line 8),
 *     and so does md_dump_parse();
 *   - la_size_sect 2097152 on 1 GiB internal, and 266076169 on a 4 MiB
 *     flex-external metadata device: "# la-size-sect was too big" line;
 *     note that any other drbdmeta command (set-gi) rewrites the clipped
 *     la_size_sect, so write it last;
 *   - 2 TiB sparse file (la 4294836152, 64 MiB bitmap = two 32 MiB
 *     windows): the patterns of test_windows and ten others around the
 *     window boundary;
 *   - drbdmeta restore-md of an md_dump_write() dump, then dump-md again:
 *     identical (and restore-md takes our real flags: get-gi shows them);
 *   - md_dump_parse() of drbdmeta dumps (1 GiB and 2 TiB), printed again
 *     with md_dump_write(): identical.
 * Found on the way: drbdmeta 9.22 restore-md writes only the first 32 MiB
 * window of a bitmap (bitmaps of devices above 1 TiB), also for its own
 * dumps; the rest of the bitmap area keeps its old contents.
 * Clean up: losetup -d $L; rm a.img.
 */
#include "unit.h"

#include <time.h>

#include "md-dump.h"

/* 1 GiB internal metadata, as drbdmeta prints it */
#define G1_LA 2097016ULL
#define G1_MD_OFF 1073737728ULL
#define G1_AL_OFF 1073704960ULL
#define G1_BM_OFF 1073672192ULL
/* 2 TiB internal: a 64 MiB bitmap, two of drbdmeta's 32 MiB windows */
#define T2_LA 4294836152ULL
#define T2_MD_OFF 2199023251456ULL
#define T2_AL_OFF 2199023218688ULL
#define T2_BM_OFF 2198956109824ULL

#define NOW 1796220997 /* 2026-12-02 14:16:37 UTC */
#define HOST "vm"
#define CMD "drbdmeta 0 v08 /dev/loop3 internal dump-md"

#define ONES 0xFFFFFFFFFFFFFFFFULL

static struct md_sb sb_1g(void)
{
	struct md_sb sb = {
		.la_size_sect = G1_LA,
		.uuid = {MD_UUID_JUST_CREATED, 0, 0, 0},
		.flags = MDF_AL_CLEAN,
		.magic = MD_MAGIC_CLEAN,
		.md_size_sect = 136,
		.al_offset = -64,
		.al_nr_extents = 257,
		.bm_offset = -128,
		.bm_bytes_per_bit = 4096,
		.al_stripes = 1,
		.al_stripe_size_4k = 8,
	};
	return sb;
}

static struct md_sb sb_2t(void)
{
	struct md_sb sb = sb_1g();

	sb.la_size_sect = T2_LA;
	sb.md_size_sect = 131144;
	sb.bm_offset = -131136;
	return sb;
}

static void put64(uint8_t *bm, uint64_t word, uint64_t v)
{
	int b;

	for (b = 0; b < 8; b++)
		bm[8 * word + b] = (uint8_t)(v >> (8 * b));
}

static uint64_t get64(const uint8_t *bm, uint64_t word)
{
	uint64_t v = 0;
	int b;

	for (b = 7; b >= 0; b--)
		v = v << 8 | bm[8 * word + b];
	return v;
}

/* A zeroed bitmap for la sectors, registered for cleanup. */
static uint8_t *new_bm(uint64_t la)
{
	uint64_t bytes = md_layout_bm_bytes(la);
	uint8_t *bm = calloc(1, bytes ? bytes : 1);

	assert_non_null(bm);
	return unit_defer(free, bm);
}

static char *write_dump(const struct md_sb *sb, uint64_t md_off, uint64_t al_off, uint64_t bm_off,
			const uint8_t *bm, bool unclean)
{
	struct md_dump_header h = {.hostname = HOST, .command = CMD, .now = NOW, .unclean = unclean};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(md_dump_write(f, &h, sb, md_off, al_off, bm_off, bm), 0);
	assert_int_equal(fclose(f), 0);
	return unit_str(buf);
}

static char *write_1g(const struct md_sb *sb, const uint8_t *bm)
{
	return write_dump(sb, G1_MD_OFF, G1_AL_OFF, G1_BM_OFF, bm, false);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* From the "# bm-bytes" line to the end. */
static const char *tail_of(const char *text)
{
	const char *p = strstr(text, "# bm-bytes");

	assert_non_null(p);
	return p;
}

/* FNV-1a, to compare long drbdmeta outputs without storing them. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Runs of 1..24 equal words: zero, all-one, random, equal halves, one bit. */
static void pattern(uint8_t *bm, uint64_t words, uint64_t seed)
{
	uint64_t k = 0, v = 0, x, n, i;

	while (k < words) {
		x = splitmix(&seed);
		n = 1 + (x >> 8) % 24;
		switch (x % 6) {
		case 0:
			v = 0;
			break;
		case 1:
			v = ONES;
			break;
		case 2:
			v = splitmix(&seed);
			break;
		case 3:
			v = (splitmix(&seed) & 0xffffffffULL) * 0x100000001ULL;
			break;
		case 4:
			v = 1ULL << ((x >> 40) & 63);
			break;
		default:
			break; /* the previous value again */
		}
		for (i = 0; i < n && k < words; i++)
			put64(bm, k++, v);
	}
}

/* ---------------------------------------------------------------- writing */

static void test_worked_example(void **state)
{
	static const char expect[] =
		"# DRBD meta data dump\n"
		"# 2026-12-02 14:16:37 +0000 [1796220997]\n"
		"# vm> drbdmeta 0 v08 /dev/loop3 internal dump-md\n"
		"#\n"
		"\n"
		"version \"v08\";\n"
		"\n"
		"# md_size_sect 136\n"
		"# md_offset 1073737728\n"
		"# al_offset 1073704960\n"
		"# bm_offset 1073672192\n"
		"\n"
		"uuid {\n"
		"    0x1234567890ABCDEF; 0xFEDCBA0987654322; 0x1111111111111110; "
		"0x2222222222222220;\n"
		"    flags 0x000000B5;\n"
		"}\n"
		"# al-extents 257;\n"
		"la-size-sect 2097016;\n"
		"bm-byte-per-bit 4096;\n"
		"device-uuid 0x0000000000000000;\n"
		"la-peer-max-bio-size 0;\n"
		"al-stripes 1;\n"
		"al-stripe-size-4k 8;\n"
		"# bm-bytes 32768;\n"
		"bm {\n"
		"   # at 0kB\n"
		"    0x8000000000000001; 0x0000000000000003; 0xFFFFFFFFFFFFFFFF; "
		"0xFFFFFFFFFFFFFFFF;\n"
		"    8 times 0xFFFFFFFFFFFFFFFF;\n"
		"    0x00000000000000F0; 0x0000000000000000; 0x0000000000000000; "
		"0x0000000000000000;\n"
		"    4080 times 0x0000000000000000;\n"
		"}\n"
		"# bits-set 648;\n";
	struct md_sb sb = sb_1g();
	uint8_t *bm = new_bm(G1_LA);
	int i;

	(void)state;
	sb.uuid[MD_UI_CURRENT] = 0x1234567890ABCDEFULL;
	sb.uuid[MD_UI_BITMAP] = 0xFEDCBA0987654322ULL;
	sb.uuid[MD_UI_HISTORY0] = 0x1111111111111110ULL;
	sb.uuid[MD_UI_HISTORY1] = 0x2222222222222220ULL;
	sb.flags = 0xB5;
	put64(bm, 0, 0x8000000000000001ULL);
	put64(bm, 1, 3);
	for (i = 2; i < 12; i++)
		put64(bm, (uint64_t)i, ONES);
	put64(bm, 12, 0xF0);
	assert_string_equal(write_1g(&sb, bm), expect);
}

static void test_all_zero_all_ones(void **state)
{
	struct md_sb sb = sb_1g();
	uint8_t *bm = new_bm(G1_LA);

	(void)state;
	assert_string_equal(tail_of(write_1g(&sb, bm)), "# bm-bytes 32768;\n"
							"bm {\n"
							"   # at 0kB\n"
							"    4096 times 0x0000000000000000;\n"
							"}\n"
							"# bits-set 0;\n");
	memset(bm, 0xff, 32768);
	assert_string_equal(tail_of(write_1g(&sb, bm)), "# bm-bytes 32768;\n"
							"bm {\n"
							"   # at 0kB\n"
							"    4096 times 0xFFFFFFFFFFFFFFFF;\n"
							"}\n"
							"# bits-set 262144;\n");
}

static void test_la_zero(void **state)
{
	struct md_sb sb = sb_1g();
	char *text;

	(void)state;
	sb.la_size_sect = 0;
	text = write_1g(&sb, NULL);
	assert_non_null(strstr(text, "\nla-size-sect 0;\n"));
	assert_string_equal(tail_of(text), "# bm-bytes 0;\nbm {\n}\n# bits-set 0;\n");
}

/* Bitmaps dumped by drbdmeta 9.22 (1 GiB internal, pattern() seeds 1, 2):
 * hash of everything from "bm {" on, and the bits-set line. */
static void test_drbdmeta_patterns(void **state)
{
	static const struct {
		uint64_t seed, hash;
		size_t len;
		const char *bits;
	} t[] = {
		{1, 0x0E6E9D05E189C7B1ULL, 51132, "\n# bits-set 104417;\n"},
		{2, 0x869E88A5D762D02BULL, 47231, "\n# bits-set 106823;\n"},
	};
	struct md_sb sb = sb_1g();
	uint8_t *bm = new_bm(G1_LA);
	const char *body;
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		pattern(bm, 4096, t[i].seed);
		body = strstr(write_1g(&sb, bm), "\nbm {") + 1;
		assert_int_equal(strlen(body), t[i].len);
		assert_int_equal(fnv1a(body), t[i].hash);
		assert_non_null(strstr(body, t[i].bits));
		assert_non_null(strstr(body, "\n   # at 8192kB\n   "));
	}
}

/* The 32 MiB windowing rule, on a 2 TiB bitmap (outputs from drbdmeta). */
static void test_windows(void **state)
{
	static const char z[] = "0x0000000000000000;";
	static const char o[] = "0xFFFFFFFFFFFFFFFF;";
	const uint64_t w = 4194304; /* first 64-bit word of the second window */
	struct md_sb sb = sb_2t();
	uint8_t *bm = new_bm(T2_LA);
	char expect[1024];
	uint64_t i;

	(void)state;
	/* the run continues for 8 words into the second window: cut there */
	put64(bm, w + 4, 1);
	snprintf(expect, sizeof(expect),
		 "# bm-bytes 67108864;\nbm {\n   # at 0kB\n    4194304 times 0x0000000000000000;\n"
		 "   # at 1073741824kB\n    %s %s %s %s\n    0x0000000000000001; %s %s %s\n"
		 "    4194296 times 0x0000000000000000;\n}\n# bits-set 1;\n",
		 z, z, z, z, z, z, z);
	assert_string_equal(tail_of(write_dump(&sb, T2_MD_OFF, T2_AL_OFF, T2_BM_OFF, bm, false)),
			    expect);
	/* for 16 words: one run across the boundary */
	put64(bm, w + 4, 0);
	put64(bm, w + 8, 1);
	assert_string_equal(tail_of(write_dump(&sb, T2_MD_OFF, T2_AL_OFF, T2_BM_OFF, bm, false)),
			    "# bm-bytes 67108864;\nbm {\n   # at 0kB\n"
			    "    4194312 times 0x0000000000000000;\n"
			    "    0x0000000000000001; 0x0000000000000000; 0x0000000000000000; "
			    "0x0000000000000000;\n"
			    "    4194292 times 0x0000000000000000;\n}\n# bits-set 1;\n");
	/* a run ending exactly at the boundary, 4 more equal words after it */
	put64(bm, w + 8, 0);
	for (i = w - 304; i < w + 4; i++)
		put64(bm, i, ONES);
	snprintf(expect, sizeof(expect),
		 "# bm-bytes 67108864;\nbm {\n   # at 0kB\n    4194000 times 0x0000000000000000;\n"
		 "    304 times 0xFFFFFFFFFFFFFFFF;\n   # at 1073741824kB\n    %s %s %s %s\n"
		 "    4194300 times 0x0000000000000000;\n}\n# bits-set 19712;\n",
		 o, o, o, o);
	assert_string_equal(tail_of(write_dump(&sb, T2_MD_OFF, T2_AL_OFF, T2_BM_OFF, bm, false)),
			    expect);
}

static void test_la_too_big(void **state)
{
	struct md_sb sb = sb_1g();
	uint8_t *bm = new_bm(G1_LA);
	char *text;

	(void)state;
	sb.la_size_sect = 2097152;
	text = write_1g(&sb, bm);
	assert_true(starts_with(text, "# la-size-sect was too big (2097152), truncated (2097016)!\n"
				      "# DRBD meta data dump\n"));
	assert_non_null(strstr(text, "\nla-size-sect 2097016;\n"));
	assert_non_null(strstr(text, "\n# bm-bytes 32768;\n"));

	/* flex-external, 4 MiB metadata device: 8120 bitmap sectors */
	sb.la_size_sect = 266076169;
	sb.md_size_sect = 8192;
	sb.al_offset = 8;
	sb.bm_offset = 72;
	text = write_dump(&sb, 0, 4096, 36864, new_bm(266076160), false);
	assert_true(starts_with(text,
				"# la-size-sect was too big (266076169), truncated (266076160)!\n"));
	assert_non_null(strstr(text, "\n# bm-bytes 4157440;\n"));
	sb.la_size_sect = 266076160;
	text = write_dump(&sb, 0, 4096, 36864, new_bm(266076160), false);
	assert_true(starts_with(text, "# DRBD meta data dump\n"));
}

static void test_unclean(void **state)
{
	struct md_sb sb = sb_1g();
	struct md_dump d;
	char err[256];
	char *text;

	(void)state;
	sb.magic = MD_MAGIC_INUSE;
	text = write_dump(&sb, G1_MD_OFF, G1_AL_OFF, G1_BM_OFF, new_bm(G1_LA), true);
	assert_non_null(strstr(text, "\n#\n\nversion \"v08\";\n\n"
				     "This_is_an_unclean_meta_data_dump._Don't_trust_the_bitmap.\n"
				     "# You should \"apply-al\" first, if you plan to restore this.\n"
				     "\n# md_size_sect 136\n"));
	/* restore-md refuses it, and so do we */
	assert_int_equal(md_dump_parse(text, strlen(text), &d, err, sizeof(err)), -EINVAL);
	assert_true(starts_with(err, "line 8: expected 'uuid', found 'This_is_an_unclean"));
	assert_non_null(strstr(err, "apply-al"));
	assert_null(d.bm);
}

/* ---------------------------------------------------------------- parsing */

/* A real drbdmeta 9.22 dump (flags printed as 0). */
static const char drbdmeta_dump[] =
	"# DRBD meta data dump\n"
	"# 2026-12-02 14:25:13 +0000 [1796221513]\n"
	"# vm> drbdmeta 0 v08 /dev/loop0 internal dump-md\n"
	"#\n"
	"\n"
	"version \"v08\";\n"
	"\n"
	"# md_size_sect 136\n"
	"# md_offset 1073737728\n"
	"# al_offset 1073704960\n"
	"# bm_offset 1073672192\n"
	"\n"
	"uuid {\n"
	"    0x1234567890ABCDEF; 0xFEDCBA0987654322; 0x1111111111111110; 0x2222222222222220;\n"
	"    flags 0x00000000;\n"
	"}\n"
	"# al-extents 257;\n"
	"la-size-sect 2097016;\n"
	"bm-byte-per-bit 4096;\n"
	"device-uuid 0x0000000000000000;\n"
	"la-peer-max-bio-size 0;\n"
	"al-stripes 1;\n"
	"al-stripe-size-4k 8;\n"
	"# bm-bytes 32768;\n"
	"bm {\n"
	"   # at 0kB\n"
	"    0x8000000000000001; 0x0000000000000003; 0xFFFFFFFFFFFFFFFF; 0xFFFFFFFFFFFFFFFF;\n"
	"    8 times 0xFFFFFFFFFFFFFFFF;\n"
	"    0x00000000000000F0; 0x0000000000000000; 0x0000000000000000; 0x0000000000000000;\n"
	"    4080 times 0x0000000000000000;\n"
	"}\n"
	"# bits-set 648;\n";

static void parse_ok(const char *text, size_t len, struct md_dump *d)
{
	char err[256] = "";
	int rc = md_dump_parse(text, len, d, err, sizeof(err));

	if (rc != 0)
		fail_msg("md_dump_parse: %d: %s", rc, err);
	assert_non_null(d->bm);
	assert_int_equal(d->bm_bytes, md_layout_bm_bytes(d->sb.la_size_sect));
}

static void free_dump(void *p)
{
	md_dump_free(p);
	free(p);
}

static struct md_dump *new_dump(void)
{
	struct md_dump *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	return unit_defer(free_dump, d);
}

static void test_parse_drbdmeta(void **state)
{
	struct md_dump *d = new_dump();
	uint64_t i;

	(void)state;
	parse_ok(drbdmeta_dump, strlen(drbdmeta_dump), d);
	assert_true(d->have_flags);
	assert_int_equal(d->sb.flags, 0);
	assert_int_equal(d->sb.uuid[MD_UI_CURRENT], 0x1234567890ABCDEFULL);
	assert_int_equal(d->sb.uuid[MD_UI_BITMAP], 0xFEDCBA0987654322ULL);
	assert_int_equal(d->sb.uuid[MD_UI_HISTORY0], 0x1111111111111110ULL);
	assert_int_equal(d->sb.uuid[MD_UI_HISTORY1], 0x2222222222222220ULL);
	assert_int_equal(d->sb.la_size_sect, G1_LA);
	assert_int_equal(d->sb.bm_bytes_per_bit, 4096);
	assert_int_equal(d->sb.al_stripes, 1);
	assert_int_equal(d->sb.al_stripe_size_4k, 8);
	assert_int_equal(d->bm_bytes, 32768);
	/* the on-disk bytes are little-endian */
	assert_int_equal(d->bm[0], 0x01);
	assert_int_equal(d->bm[7], 0x80);
	assert_int_equal(get64(d->bm, 1), 3);
	for (i = 2; i < 12; i++)
		assert_int_equal(get64(d->bm, i), ONES);
	assert_int_equal(get64(d->bm, 12), 0xF0);
	for (i = 13; i < 4096; i++)
		assert_int_equal(get64(d->bm, i), 0);
}

/* Comments anywhere, any whitespace, a short bitmap (zero-filled). */
static void test_parse_free_form(void **state)
{
	static const char text[] =
		"#c\nversion\t\"v08\"  ;#c\r\nuuid{0x0000000000000001;0x0000000000000002;#x\n"
		"0x0000000000000003;  0x000000000000000a;flags 0xdeadBEEF;}la-size-sect 00008;"
		"bm-byte-per-bit 4096;device-uuid 0xAbCdEf0123456789;la-peer-max-bio-size "
		"1048576;al-stripes 4294967295;al-stripe-size-4k 0;bm{# a comment\n"
		"2 times 0x0123456789abcdef; 0x00000000000000ff ;001 times 0xFFFFFFFFFFFFFFFF;"
		"}#end";
	struct md_dump *d = new_dump();
	uint64_t i;

	(void)state;
	parse_ok(text, sizeof(text) - 1, d);
	assert_int_equal(d->sb.uuid[MD_UI_HISTORY1], 10);
	assert_int_equal(d->sb.flags, 0xDEADBEEF);
	assert_int_equal(d->sb.device_uuid, 0xABCDEF0123456789ULL);
	assert_int_equal(d->sb.la_peer_max_bio_size, 1048576);
	assert_int_equal(d->sb.al_stripes, 4294967295u);
	assert_int_equal(d->sb.al_stripe_size_4k, 0);
	assert_int_equal(d->bm_bytes, 4096);
	assert_int_equal(get64(d->bm, 0), 0x0123456789ABCDEFULL);
	assert_int_equal(get64(d->bm, 1), 0x0123456789ABCDEFULL);
	assert_int_equal(get64(d->bm, 2), 0xFF);
	assert_int_equal(get64(d->bm, 3), ONES);
	for (i = 4; i < 512; i++)
		assert_int_equal(get64(d->bm, i), 0);
}

static void test_parse_exact_length(void **state)
{
	struct md_dump *d = new_dump();
	size_t len = strlen(drbdmeta_dump);
	char *copy = unit_defer(free, malloc(len));
	char err[256];

	(void)state;
	assert_non_null(copy);
	/* no NUL after the text: ASan catches any read past it */
	memcpy(copy, drbdmeta_dump, len);
	parse_ok(copy, len, d);
	md_dump_free(d);
	/* a prefix is not a dump (up to "...0000;"); the error is at its end */
	assert_int_equal(md_dump_parse(copy, len - 19, d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 30: expected '0x<16 hex digits>;', '<N> times 0x<16 hex "
				 "digits>;' or '}', found end of input");
	assert_int_equal(md_dump_parse(NULL, 0, d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: expected 'version', found end of input");
	/* no room for a message is fine */
	assert_int_equal(md_dump_parse("x", 1, d, NULL, 0), -EINVAL);
}

static void test_round_trip_random(void **state)
{
	uint64_t seed = 42, la, off;
	struct md_dump *d = new_dump();
	struct md_sb sb;
	uint8_t *bm;
	char *text;
	int it, i;

	(void)state;
	for (it = 0; it < 120; it++) {
		sb = sb_1g();
		switch (it % 4) {
		case 0:
			la = splitmix(&seed) % 4096;
			break;
		case 1:
			la = splitmix(&seed) % (1ULL << 24);
			break;
		case 2:
			la = (splitmix(&seed) % 64) * 262144;
			break;
		default:
			la = splitmix(&seed) % (1ULL << 21);
			break;
		}
		sb.la_size_sect = la;
		for (i = 0; i < MD_UI_COUNT; i++)
			sb.uuid[i] = splitmix(&seed);
		sb.device_uuid = splitmix(&seed);
		sb.flags = (uint32_t)splitmix(&seed);
		sb.la_peer_max_bio_size = (uint32_t)splitmix(&seed);
		sb.al_stripes = (uint32_t)splitmix(&seed);
		sb.al_stripe_size_4k = (uint32_t)splitmix(&seed);
		/* internal layout with room for la */
		off = (la + 1000) * 512;
		sb.bm_offset = -(int32_t)(splitmix(&seed) % 100000 + 72);
		bm = new_bm(la);
		pattern(bm, md_layout_bm_bytes(la) / 8, splitmix(&seed));
		text = write_dump(&sb, off + 70000000, off + 60000000, off, bm, false);
		parse_ok(text, strlen(text), d);
		assert_true(d->have_flags);
		assert_int_equal(d->sb.la_size_sect, sb.la_size_sect);
		for (i = 0; i < MD_UI_COUNT; i++)
			assert_int_equal(d->sb.uuid[i], sb.uuid[i]);
		assert_int_equal(d->sb.device_uuid, sb.device_uuid);
		assert_int_equal(d->sb.flags, sb.flags);
		assert_int_equal(d->sb.bm_bytes_per_bit, sb.bm_bytes_per_bit);
		assert_int_equal(d->sb.la_peer_max_bio_size, sb.la_peer_max_bio_size);
		assert_int_equal(d->sb.al_stripes, sb.al_stripes);
		assert_int_equal(d->sb.al_stripe_size_4k, sb.al_stripe_size_4k);
		assert_int_equal(d->bm_bytes, md_layout_bm_bytes(la));
		assert_memory_equal(d->bm, bm, d->bm_bytes ? d->bm_bytes : 1);
		md_dump_free(d);
		unit_release(text);
		unit_release(bm);
	}
}

#define HEAD                                                                                 \
	"version \"v08\";\nuuid {\n    0x0000000000000004; 0x0000000000000000; "           \
	"0x0000000000000000; 0x0000000000000000;\n    flags 0x00000080;\n}\n"
#define MID                                                                                  \
	"la-size-sect 8;\nbm-byte-per-bit 4096;\ndevice-uuid 0x0000000000000000;\n"          \
	"la-peer-max-bio-size 0;\nal-stripes 1;\nal-stripe-size-4k 8;\n"
#define BM(body) HEAD MID "bm {\n" body "\n}\n" /* the words are on line 13 */
#define Z "0x0000000000000000"

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text;
		const char *err; /* NULL: parses */
	} t[] = {
		{"", "line 1: expected 'version', found end of input"},
		{"# only a comment\n\n", "line 3: expected 'version', found end of input"},
		{"version \"v09\";", "line 1: expected \"v08\", found '\"v09\"'"},
		{"version \"v08;\n", "line 1: expected \"v08\", found '\"v08;'"},
		{"version v08;", "line 1: expected \"v08\", found 'v08'"},
		{"version \"v08\"\nuuid", "line 2: expected ';', found 'uuid'"},
		{"version \"v08\";\nuuid {\n    0x000000000000004;",
		 "line 3: expected a 16-digit hex number (0x + 16 digits), found '0x000000000000004'"},
		{"version \"v08\";\nuuid {\n    0x00000000000000004;",
		 "line 3: expected a 16-digit hex number (0x + 16 digits), found "
		 "'0x00000000000000004'"},
		{"version \"v08\";\nuuid {\n    0000000000000004;",
		 "line 3: expected a 16-digit hex number (0x + 16 digits), found '0000000000000004'"},
		{"version \"v08\";\nuuid {\n    0X0000000000000004;",
		 "line 3: expected a 16-digit hex number (0x + 16 digits), found '0X0000000000000004'"},
		{"version \"v08\";\nuuid {\n    0x000000000000000g;",
		 "line 3: expected a 16-digit hex number (0x + 16 digits), found '0x000000000000000g'"},
		{"version \"v08\";\nuuid {\n" Z ";" Z ";" Z ";" Z ";\n}",
		 "line 4: expected 'flags', found '}'"},
		{"version \"v08\";\nuuid {\n" Z ";" Z ";" Z ";" Z ";\nflags " Z ";",
		 "line 4: expected an 8-digit hex number (0x + 8 digits), found '" Z "'"},
		{HEAD "la-size-sect 0x10;", "line 6: expected a decimal number up to 2199023255552, "
					     "found '0x10'"},
		{HEAD "la-size-sect -1;", "line 6: expected a decimal number up to 2199023255552, "
					   "found '-1'"},
		{HEAD "la-size-sect 2199023255553;",
		 "line 6: expected a decimal number up to 2199023255552, found '2199023255553'"},
		{HEAD "la-size-sect 12345678901234567890;",
		 "line 6: expected a decimal number up to 2199023255552, found "
		 "'12345678901234567890'"},
		{HEAD "la-size-sect 1e3;", "line 6: expected a decimal number up to 2199023255552, "
					    "found '1e3'"},
		{HEAD "bm-byte-per-bit 4096;", "line 6: expected 'la-size-sect', found "
						"'bm-byte-per-bit'"},
		{HEAD "la-size-sect 8;\nbm-byte-per-bit 8192;",
		 "line 7: bm-byte-per-bit 8192 is not supported (only 4096)"},
		{HEAD "la-size-sect 8;\nbm-byte-per-bit 4096;\ndevice-uuid 0;",
		 "line 8: expected a 16-digit hex number (0x + 16 digits), found '0'"},
		{HEAD MID "al-stripes 1;", "line 12: expected 'bm', found 'al-stripes'"},
		{HEAD "la-size-sect 8;\nbm-byte-per-bit 4096;\ndevice-uuid " Z ";\n"
		      "la-peer-max-bio-size 0;\nal-stripes 4294967296;",
		 "line 10: expected a decimal number up to 4294967295, found '4294967296'"},
		{HEAD MID "bm [", "line 12: expected '{', found '['"},
		{BM("0 times " Z ";"), "line 13: expected a repeat count of at least 1, found '0'"},
		{BM("-1 times " Z ";"), "line 13: expected '0x<16 hex digits>;', '<N> times "
					 "0x<16 hex digits>;' or '}', found '-1'"},
		{BM("3 TIMES " Z ";"), "line 13: expected 'times', found 'TIMES'"},
		{BM("3 times;"), "line 13: expected a 16-digit hex number (0x + 16 digits), found "
				 "';'"},
		{BM("3 times 0x00000000;"), "line 13: expected a 16-digit hex number (0x + 16 "
					    "digits), found '0x00000000'"},
		{BM(Z), "line 14: expected ';', found '}'"},
		{BM("8000000000000001;"), "line 13: the bitmap is longer than bm-bytes 4096 for "
					  "la-size-sect 8"},
		{BM("15;"), "line 13: expected 'times', found ';'"},
		{BM(Z "; 1\ntimes\n" Z "\n;" Z ";"), NULL}, /* fine */
		{BM(Z "; 1\ntimes\n" Z "\n" Z ";"), "line 16: expected ';', found '" Z "'"},
		{BM("FFFFFFFFFFFFFFFF;"), "line 13: expected '0x<16 hex digits>;', '<N> times "
					  "0x<16 hex digits>;' or '}', found 'FFFFFFFFFFFFFFFF'"},
		{BM("513 times " Z ";"), "line 13: the bitmap is longer than bm-bytes 4096 for "
					 "la-size-sect 8"},
		{BM("512 times " Z ";\n" Z ";"), "line 14: the bitmap is longer than bm-bytes 4096 "
						 "for la-size-sect 8"},
		{BM("9999999999999999999 times " Z ";"), "line 13: the bitmap is longer than "
							 "bm-bytes 4096 for la-size-sect 8"},
		{BM("99999999999999999999 times " Z ";"),
		 "line 13: expected '0x<16 hex digits>;', '<N> times 0x<16 hex digits>;' or '}', "
		 "found '99999999999999999999'"},
		{HEAD MID "bm {\n" Z ";", "line 13: expected '0x<16 hex digits>;', '<N> times "
					  "0x<16 hex digits>;' or '}', found end of input"},
		{BM("") "extra", "line 15: expected end of input, found 'extra'"},
		{BM("") "}", "line 15: expected end of input, found '}'"},
		{BM("") "bm {\n}\n", "line 15: expected end of input, found 'bm'"},
		{BM(Z "; ."), "line 13: expected '0x<16 hex digits>;', '<N> times 0x<16 hex "
			      "digits>;' or '}', found '.'"},
		{"version \"v08\";\n\xff", "line 2: expected 'uuid', found character '\\xff'"},
	};
	struct md_dump *d = new_dump();
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		int rc = md_dump_parse(t[i].text, strlen(t[i].text), d, err, sizeof(err));

		if (!t[i].err) {
			assert_int_equal(rc, 0);
			md_dump_free(d);
			continue;
		}
		if (rc != -EINVAL || strcmp(err, t[i].err))
			fail_msg("case %zu: rc %d, '%s'\n  expected '%s'", i, rc, err, t[i].err);
		assert_null(d->bm);
		assert_int_equal(d->bm_bytes, 0);
	}
	/* a NUL byte is just another bad character */
	assert_int_equal(md_dump_parse("version\0", 8, d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: expected \"v08\", found character '\\x00'");
}

/* The largest la-size-sect is accepted (a 32 GiB bitmap: not allocated
 * here, the next statement is wrong), one more is not. */
static void test_parse_limits(void **state)
{
	static const char text[] = HEAD "la-size-sect 2199023255552;\nbm-byte-per-bit 1;\n";
	struct md_dump *d = new_dump();
	char err[256];

	(void)state;
	assert_int_equal(md_dump_parse(text, sizeof(text) - 1, d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 7: bm-byte-per-bit 1 is not supported (only 4096)");
	assert_null(d->bm);
}

/* ---------------------------------------------------------------- robustness */

/* Does any "la-size-sect N" of a mutated text need more than 64 MiB? */
static bool huge_la(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	uint64_t v;

	while ((p = memmem(p, (size_t)(end - p), "la-size-sect", 12))) {
		for (p += 12; p < end && (*p == ' ' || *p == '\t' || *p == '\n'); p++)
			;
		for (v = 0; p < end && *p >= '0' && *p <= '9' && v < (1ULL << 40); p++)
			v = v * 10 + (uint64_t)(*p - '0');
		if (v > (1ULL << 29))
			return true;
	}
	return false;
}

/* Random mutations of valid dumps never crash, leak or read out of bounds,
 * and whatever parses is consistent. */
static void test_mutations(void **state)
{
	static const char pick[] = "0123456789abcdefxX;{}#\n \t\"-_.vtimesbmflags\xff";
	struct md_sb sb = sb_1g();
	uint8_t *bm = new_bm(G1_LA);
	struct md_dump *d = new_dump();
	uint64_t seed = 7, x;
	char *base, *m, err[256];
	size_t blen, len, pos, n;
	int it, k, rc, ok = 0;

	(void)state;
	pattern(bm, 4096, 3);
	sb.la_size_sect = 65536; /* 8 KiB of bitmap keeps the text short */
	base = write_1g(&sb, bm);
	blen = strlen(base);
	m = unit_defer(free, malloc(2 * blen + 64));
	assert_non_null(m);
	for (it = 0; it < 4000; it++) {
		memcpy(m, base, blen);
		len = blen;
		for (k = 0; k < 1 + it % 4; k++) {
			x = splitmix(&seed);
			pos = (size_t)(x >> 16) % (len + 1);
			n = 1 + (size_t)(x >> 48) % 24;
			switch (x % 5) {
			case 0: /* replace a byte */
				if (pos < len)
					m[pos] = pick[(x >> 8) % (sizeof(pick) - 1)];
				break;
			case 1: /* delete a span */
				if (n > len - pos)
					n = len - pos;
				memmove(m + pos, m + pos + n, len - pos - n);
				len -= n;
				break;
			case 2: /* duplicate a span */
				if (n > len - pos)
					n = len - pos;
				if (len + n <= 2 * blen) {
					memmove(m + pos + n, m + pos, len - pos);
					len += n;
				}
				break;
			case 3: /* truncate */
				len = pos;
				break;
			default: /* insert a byte */
				if (len < 2 * blen) {
					memmove(m + pos + 1, m + pos, len - pos);
					m[pos] = pick[(x >> 8) % (sizeof(pick) - 1)];
					len++;
				}
				break;
			}
		}
		if (huge_la(m, len))
			continue; /* allocation size, not parsing, would be tested */
		{
			/* exactly len bytes, so that ASan sees any over-read */
			char *exact = malloc(len ? len : 1);

			assert_non_null(exact);
			memcpy(exact, m, len);
			rc = md_dump_parse(exact, len, d, err, sizeof(err));
			free(exact);
		}
		if (rc == 0) {
			ok++;
			assert_non_null(d->bm);
			assert_int_equal(d->bm_bytes, md_layout_bm_bytes(d->sb.la_size_sect));
			md_dump_free(d);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_true(starts_with(err, "line "));
			assert_null(d->bm);
		}
	}
	assert_true(ok > 0); /* some mutants (in comments, say) still parse */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_all_zero_all_ones),
		cmocka_unit_test(test_la_zero),
		cmocka_unit_test(test_drbdmeta_patterns),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_la_too_big),
		cmocka_unit_test(test_unclean),
		cmocka_unit_test(test_parse_drbdmeta),
		cmocka_unit_test(test_parse_free_form),
		cmocka_unit_test(test_parse_exact_length),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_mutations),
	};

	/* the header's local time */
	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
