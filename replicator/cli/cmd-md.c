/*
 * tandemadm: offline metadata verbs (create-md, dump-md, restore-md,
 * apply-al, get-gi, show-gi, set-gi, dstate, outdate, wipe-md, check-md).
 * They work on the devices named in the configuration, without the
 * daemon, and print what drbdmeta prints (doc/ondisk-format.pod, APPENDIX).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "al.h"
#include "cli.h"
#include "md-dump.h"
#include "md-replay.h"
#include "md.h"

struct md_args {
	bool force;
	uint32_t al_stripes;
	uint32_t al_stripe_size_kb;
	uint32_t peer_max_bio_size;
	const char *file; /* restore-md */
	const char *gi;   /* set-gi */
};

struct vol_ctx {
	const struct cli *cli;
	const struct conf *conf;
	const struct conf_res *res;
	const struct conf_vol *vol;
	const struct md_args *args;
	char name[300]; /* "res" or "res/vnr" for messages */
};

static void vol_err(const struct vol_ctx *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void vol_err(const struct vol_ctx *v, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tandemadm: %s: %s: ", v->cli->verb, v->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool confirm(const struct md_args *a, const char *question)
{
	char line[16];

	fprintf(stderr, "\n%s\n", question);
	if (a->force) {
		fprintf(stderr, "*** confirmation forced via --force option ***\n");
		return true;
	}
	if (!isatty(STDIN_FILENO)) {
		fprintf(stderr, "not confirmed: standard input is not a terminal; rerun with "
				"--force if you are sure\n");
		return false;
	}
	fprintf(stderr, "[need to type 'yes' to confirm] ");
	fflush(stderr);
	return fgets(line, sizeof(line), stdin) && strcmp(line, "yes\n") == 0;
}

/* Open the metadata of one volume as the config describes it. */
static int vol_open(const struct vol_ctx *v, bool writable, struct md **out)
{
	struct md_open_opts o = {
		.data_path = v->vol->disk,
		.md_path = v->vol->md_dev,
		.index = v->vol->md_index,
		.writable = writable,
		.al_stripes = v->args->al_stripes,
		.al_stripe_size_4k = v->args->al_stripe_size_kb / 4,
	};
	char err[512];
	int rc;

	if (!v->vol->disk || strcmp(v->vol->disk, "none") == 0) {
		vol_err(v, "the volume is diskless ('disk none'): it has no metadata");
		return -ENODEV;
	}
	o.kind = v->vol->md == CONF_MD_INTERNAL ? MD_INTERNAL
		 : v->vol->md == CONF_MD_INDEXED ? MD_INDEXED
						 : MD_FLEXIBLE;
	rc = md_open(&o, out, err, sizeof(err));
	if (rc < 0)
		vol_err(v, "%s", err);
	return rc;
}

/* Read the superblock; accept in-use metadata when allow_unclean. */
static int vol_load(const struct vol_ctx *v, struct md *m, struct md_sb *sb, bool allow_unclean)
{
	char err[512];
	int rc = md_load_sb(m, sb, err, sizeof(err));

	if (rc == -EUCLEAN && allow_unclean)
		return 0;
	if (rc < 0)
		vol_err(v, "%s", err);
	return rc;
}

static void print_gi_line(const struct md_sb *sb)
{
	uint32_t f = sb->flags;

	printf("%016" PRIX64 ":%016" PRIX64 ":%016" PRIX64 ":%016" PRIX64
	       ":%d:%d:%d:%d:%d:%d:%d\n",
	       sb->uuid[0], sb->uuid[1], sb->uuid[2], sb->uuid[3], !!(f & MDF_CONSISTENT),
	       !!(f & MDF_WAS_UP_TO_DATE), !!(f & MDF_PRIMARY_IND), !!(f & MDF_CONNECTED_IND),
	       !!(f & MDF_FULL_SYNC), !!(f & MDF_PEER_OUT_DATED), !!(f & MDF_CRASHED_PRIMARY));
}

/* drbdmeta's ppsize(): KiB with 1024-steps, rounding by bit 9. */
static void ppsize(char *buf, size_t len, uint64_t kib)
{
	static const char units[] = "KMGTPE";
	int u = 0;

	while (kib >= 10000 && u < 5) {
		kib = (kib >> 10) + ((kib >> 9) & 1);
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %cB", kib, units[u]);
}

static int do_get_gi(struct vol_ctx *v, struct md *m)
{
	struct md_sb sb;

	if (vol_load(v, m, &sb, true) < 0)
		return EXIT_EXEC;
	print_gi_line(&sb);
	return EXIT_OK;
}

static int do_show_gi(struct vol_ctx *v, struct md *m)
{
	struct md_sb sb;
	uint32_t f;
	char size[32];

	if (vol_load(v, m, &sb, true) < 0)
		return EXIT_EXEC;
	f = sb.flags;
	printf("\n"
	       "       +--<  Current data generation UUID  >-\n"
	       "       |               +--<  Bitmap's base data generation UUID  >-\n"
	       "       |               |                 +--<  younger history UUID  >-\n"
	       "       |               |                 |         +-<  older history  >-\n"
	       "       V               V                 V         V\n");
	print_gi_line(&sb);
	printf("                                                                    ^ ^ ^ ^ ^ ^ ^\n"
	       "                                      -<  Data consistency flag  >--+ | | | | | |\n"
	       "                             -<  Data was/is currently up-to-date  >--+ | | | | |\n"
	       "                                  -<  Node was/is currently primary  >--+ | | | |\n"
	       "                                  -<  Node was/is currently connected  >--+ | | |\n"
	       "         -<  Node was in the progress of setting all bits in the bitmap  >--+ | |\n"
	       "                        -<  The peer's disk was out-dated or inconsistent  >--+ |\n"
	       "      -<  This node was a crashed primary, and has not seen its peer since   >--+\n"
	       "\n");
	printf("flags:%s %s, %s, %s%s%s\n", (f & MDF_CRASHED_PRIMARY) ? " crashed" : "",
	       (f & MDF_PRIMARY_IND) ? "Primary" : "Secondary",
	       (f & MDF_CONNECTED_IND) ? "Connected" : "StandAlone",
	       (f & MDF_CONSISTENT) ? ((f & MDF_WAS_UP_TO_DATE) ? "UpToDate" : "Outdated")
				    : "Inconsistent",
	       (f & MDF_FULL_SYNC) ? ", need full sync" : "",
	       (f & MDF_PEER_OUT_DATED) ? ", peer Outdated" : "");
	printf("meta-data: %s\n", (f & MDF_AL_CLEAN) ? "clean" : "need apply-al");
	if (sb.la_size_sect == 0) {
		printf("zero size device -- never seen peer yet?\n");
	} else {
		ppsize(size, sizeof(size), sb.la_size_sect / 2);
		printf("last agreed size: %s (%" PRIu64 " sectors)\n", size, sb.la_size_sect);
		printf("last agreed max bio size: %u Byte\n", sb.la_peer_max_bio_size);
	}
	return EXIT_OK;
}

static int do_dstate(struct vol_ctx *v, struct md *m)
{
	struct md_sb sb;
	uint32_t f;

	if (vol_load(v, m, &sb, true) < 0)
		return EXIT_EXEC;
	f = sb.flags;
	if ((f & MDF_CONSISTENT) && (f & MDF_WAS_UP_TO_DATE))
		printf("%s\n", (f & MDF_PEER_OUT_DATED) ? "UpToDate" : "Consistent");
	else
		printf("%s\n", (f & MDF_CONSISTENT) ? "Outdated" : "Inconsistent");
	return EXIT_OK;
}

/* set-gi: "CUR:BM:H0:H1:c:u:p:C:f:o:cp"; empty fields keep old values. */
static int parse_gi(const char *s, struct md_sb *sb, char *err, size_t errlen)
{
	static const uint32_t flagbits[] = {MDF_CONSISTENT,	MDF_WAS_UP_TO_DATE,
					    MDF_PRIMARY_IND,	MDF_CONNECTED_IND,
					    MDF_FULL_SYNC,	MDF_PEER_OUT_DATED,
					    MDF_CRASHED_PRIMARY};
	const char *p = s;
	int field = 0;

	while (field < 11) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char tok[32];
		char *e;

		if (n >= sizeof(tok)) {
			snprintf(err, errlen, "field %d of '%s' is too long", field + 1, s);
			return -EINVAL;
		}
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (n > 0) {
			errno = 0;
			if (field < 4) {
				unsigned long long u = strtoull(tok, &e, 16);

				if (errno || *e || n > 16) {
					snprintf(err, errlen,
						 "field %d ('%s') is not a hexadecimal UUID", field + 1,
						 tok);
					return -EINVAL;
				}
				sb->uuid[field] = u;
			} else if (!strcmp(tok, "0") || !strcmp(tok, "1")) {
				if (tok[0] == '1')
					sb->flags |= flagbits[field - 4];
				else
					sb->flags &= ~flagbits[field - 4];
			} else {
				snprintf(err, errlen, "field %d ('%s') must be 0 or 1", field + 1, tok);
				return -EINVAL;
			}
		}
		field++;
		if (!end)
			return 0;
		p = end + 1;
	}
	snprintf(err, errlen, "'%s' has more than 11 fields (CUR:BM:H0:H1:c:u:p:C:f:o:cp)", s);
	return -EINVAL;
}

static int do_set_gi(struct vol_ctx *v, struct md *m)
{
	struct md_sb sb, old;
	char err[256];
	int rc;

	if (vol_load(v, m, &sb, true) < 0)
		return EXIT_EXEC;
	old = sb;
	if (parse_gi(v->args->gi, &sb, err, sizeof(err)) < 0) {
		vol_err(v, "%s", err);
		return EXIT_USAGE;
	}
	printf("previously ");
	print_gi_line(&old);
	printf("set GI to  ");
	print_gi_line(&sb);
	fflush(stdout);
	if (!confirm(v->args, "Write new GI to disk?"))
		return EXIT_EXEC;
	rc = md_write_sb(m, &sb);
	if (rc < 0) {
		vol_err(v, "cannot write the superblock: %s", strerror(-rc));
		return EXIT_EXEC;
	}
	return EXIT_OK;
}

static int do_outdate(struct vol_ctx *v, struct md *m)
{
	struct md_sb sb;
	int rc;

	if (vol_load(v, m, &sb, true) < 0)
		return EXIT_EXEC;
	if (!(sb.flags & MDF_CONSISTENT)) {
		fprintf(stderr, "Device is inconsistent.\n");
		return EXIT_OUTDATE_INCONSISTENT;
	}
	if (!(sb.flags & MDF_WAS_UP_TO_DATE))
		return EXIT_OK;
	sb.flags &= ~MDF_WAS_UP_TO_DATE;
	rc = md_write_sb(m, &sb);
	if (rc < 0) {
		vol_err(v, "cannot write the superblock: %s", strerror(-rc));
		return EXIT_EXEC;
	}
	return EXIT_OK;
}

static int do_wipe_md(struct vol_ctx *v, struct md *m)
{
	int rc;

	if (!confirm(v->args, "Do you really want to wipe out the DRBD meta data?"))
		return EXIT_EXEC;
	fprintf(stderr, "Wiping meta data...\n");
	rc = md_wipe(m);
	if (rc < 0) {
		vol_err(v, "cannot write: %s", strerror(-rc));
		return EXIT_EXEC;
	}
	return EXIT_OK;
}

static int do_create_md(struct vol_ctx *v, struct md *m)
{
	const struct md_layout *l = md_layout(m);
	const char *sig;
	struct md_sb sb;
	int rc;

	if (md_read_sb(m, &sb) == 0 &&
	    (sb.magic == MD_MAGIC_CLEAN || sb.magic == MD_MAGIC_INUSE || sb.magic == MD_MAGIC_07)) {
		if (!v->args->force) {
			vol_err(v,
				"found %s metadata (current UUID %016" PRIX64 ") at byte %" PRIu64
				" of %s; it holds this volume's generation UUIDs and bitmap. "
				"'create-md --force' overwrites it",
				sb.magic == MD_MAGIC_07 ? "DRBD 0.7" : "v08", sb.uuid[0],
				md_sb_offset(m), bdev_path(md_meta_bdev(m)));
			return EXIT_EXEC;
		}
	} else if ((sig = md_probe_signature(m)) && !v->args->force) {
		vol_err(v,
			"found %s on %s; %s would overwrite %s. Move the data away "
			"(or shrink the filesystem by at least %" PRIu64 " KiB) and use "
			"'create-md --force'",
			sig,
			bdev_path(l->kind == MD_INTERNAL ? md_data_bdev(m) : md_meta_bdev(m)),
			l->kind == MD_INTERNAL ? "internal metadata at the end of the device"
					       : "the metadata",
			l->kind == MD_INTERNAL ? "the end of it" : "its start",
			(uint64_t)l->md_size_sect / 2);
		return EXIT_EXEC;
	}
	printf("initializing activity log\n");
	printf("initializing bitmap (%" PRIu64 " KB) to all zero\n",
	       (l->kind == MD_INTERNAL ? l->bm_size_sect * 512
				       : md_layout_bm_bytes(l->max_data_sect)) /
		       1024);
	printf("Writing meta data...\n");
	fflush(stdout);
	rc = md_create(m, 257, v->args->peer_max_bio_size);
	if (rc < 0) {
		vol_err(v, "cannot write the metadata: %s; the device may now hold partial "
			   "metadata, run create-md again",
			strerror(-rc));
		return EXIT_EXEC;
	}
	printf("New drbd meta data block successfully created.\n");
	return EXIT_OK;
}

/* The bitmap bytes a dump shows: bm_bytes(la). */
static int read_bm_bytes(struct vol_ctx *v, struct md *m, const struct md_sb *sb, uint8_t **out)
{
	uint64_t bytes = md_layout_bm_bytes(sb->la_size_sect);
	uint8_t *bm;
	int rc;

	bm = malloc(bytes ? bytes : 1);
	if (!bm) {
		vol_err(v, "out of memory for a %" PRIu64 "-byte bitmap", bytes);
		return -ENOMEM;
	}
	rc = bytes ? md_read_bm(m, 0, bm, bytes / 4096) : 0;
	if (rc < 0) {
		vol_err(v, "cannot read the bitmap: %s", strerror(-rc));
		free(bm);
		return rc;
	}
	*out = bm;
	return 0;
}

static int do_dump_md(struct vol_ctx *v, struct md *m)
{
	struct md_dump_header h = {0};
	char host[256] = "", cmd[512];
	struct md_sb sb;
	uint8_t *bm;
	int rc;

	if (vol_load(v, m, &sb, true) < 0)
		return EXIT_EXEC;
	h.unclean = sb.magic == MD_MAGIC_INUSE || !(sb.flags & MDF_AL_CLEAN);
	if (h.unclean && !v->args->force) {
		fprintf(stderr, "Found meta data is \"unclean\", please apply-al first\n");
		return EXIT_EXEC;
	}
	if (read_bm_bytes(v, m, &sb, &bm) < 0)
		return EXIT_EXEC;
	gethostname(host, sizeof(host) - 1);
	snprintf(cmd, sizeof(cmd), "tandemadm dump-md %s", v->name);
	h.hostname = host;
	h.command = cmd;
	h.now = time(NULL);
	rc = md_dump_write(stdout, &h, &sb, md_sb_offset(m), md_al_offset(m), md_bm_offset(m), bm);
	free(bm);
	return rc < 0 ? EXIT_EXEC : EXIT_OK;
}

static int do_restore_md(struct vol_ctx *v, struct md *m)
{
	const struct md_layout *l = md_layout(m);
	struct md_dump d = {0};
	struct md_sb sb, cur;
	char err[512];
	uint64_t page;
	FILE *f;
	char *text = NULL;
	size_t len = 0;
	int rc = EXIT_EXEC;

	f = strcmp(v->args->file, "-") ? fopen(v->args->file, "r") : stdin;
	if (!f) {
		vol_err(v, "cannot open %s: %s", v->args->file, strerror(errno));
		return EXIT_EXEC;
	}
	{
		FILE *mem = open_memstream(&text, &len);
		char buf[65536];
		size_t n;

		while (mem && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, mem);
		if (mem)
			fclose(mem);
		if (f != stdin)
			fclose(f);
	}
	if (!text || md_dump_parse(text, len, &d, err, sizeof(err)) < 0) {
		vol_err(v, "%s: %s", v->args->file, text ? err : "cannot read");
		goto out;
	}
	sb = d.sb;
	sb.magic = MD_MAGIC_CLEAN;
	sb.md_size_sect = l->md_size_sect;
	sb.al_offset = l->al_offset;
	sb.bm_offset = l->bm_offset;
	sb.al_nr_extents = 257;
	if (md_sb_check(&sb, l, err, sizeof(err)) < 0 && sb.flags & MDF_AL_CLEAN) {
		vol_err(v, "the dump does not fit this device: %s", err);
		goto out;
	}
	if (md_read_sb(m, &cur) == 0 && (cur.magic == MD_MAGIC_CLEAN || cur.magic == MD_MAGIC_INUSE) &&
	    !confirm(v->args, "Valid meta-data in place, overwrite?"))
		goto out;
	for (page = 0; page < d.bm_bytes / 4096; page++) {
		if (md_write_bm_page(m, page, d.bm + page * 4096) < 0) {
			vol_err(v, "cannot write bitmap page %" PRIu64, page);
			goto out;
		}
	}
	if (bdev_flush(md_meta_bdev(m)) < 0 || md_write_sb(m, &sb) < 0) {
		vol_err(v, "cannot write the superblock");
		goto out;
	}
	rc = EXIT_OK;
out:
	md_dump_free(&d);
	free(text);
	return rc;
}

/* apply-al: drbdmeta's replay and messages (ondisk-format, Crash replay). */
static int do_apply_al(struct vol_ctx *v, struct md *m)
{
	struct md_replay_result res;
	struct md_sb sb;
	char size[32];
	int rc;

	if (vol_load(v, m, &sb, true) < 0)
		return EXIT_EXEC;
	rc = md_replay(m, &sb, &res);
	if (res.n_corrupt)
		fprintf(stderr, "%u corrupt AL transactions found\n", res.n_corrupt);
	if (rc < 0) {
		vol_err(v, "cannot replay the activity log: %s", strerror(-rc));
		return EXIT_EXEC;
	}
	if (!res.usable)
		fprintf(stderr, "%s\n", res.problem);
	if (res.refused) {
		vol_err(v, "this node was Primary, so the activity log is needed to know what to "
			   "resync. To go on, mark everything out of sync: 'tandemadm invalidate' "
			   "(full resync)");
		return EXIT_EXEC;
	}
	if (!res.usable)
		fprintf(stderr, "Error ignored, no need to apply the AL\n");
	if (res.beyond_end)
		fprintf(stderr, "extent %u beyond end of bitmap!\n", res.first_beyond);
	if (res.usable && res.n_extents && (sb.flags & MDF_PRIMARY_IND)) {
		ppsize(size, sizeof(size), res.newly_marked * 4);
		fprintf(stderr, "Marked additional %s as out-of-sync based on AL.\n", size);
	}
	return EXIT_OK;
}

static int do_check_md(struct vol_ctx *v, struct md *m)
{
	const struct md_layout *l = md_layout(m);
	uint32_t blocks = l->al_size_sect / 8;
	struct al_replay r = {0};
	uint64_t bm_bytes, bits, bit, weight = 0, surplus = 0, i;
	struct md_sb sb;
	uint8_t *ring = NULL, *bm = NULL;
	char err[512];
	int rc, ret = EXIT_OK;

	rc = md_read_sb(m, &sb);
	if (rc < 0) {
		vol_err(v, "cannot read the superblock: %s", strerror(-rc));
		return EXIT_EXEC;
	}
	rc = md_sb_check(&sb, l, err, sizeof(err));
	if (rc < 0 && rc != -EUCLEAN) {
		printf("%s: superblock: FAILED: %s\n", v->name, err);
		return EXIT_EXEC;
	}
	printf("%s: superblock: OK at byte %" PRIu64 " of %s (%s, %s layout, md_size_sect %u, "
	       "al_offset %d, bm_offset %d)\n",
	       v->name, md_sb_offset(m), bdev_path(md_meta_bdev(m)),
	       rc == -EUCLEAN ? "in use: run apply-al before using it elsewhere" : "clean",
	       l->kind == MD_INTERNAL ? "internal" : l->kind == MD_INDEXED ? "indexed" : "flexible",
	       l->md_size_sect, l->al_offset, l->bm_offset);
	printf("%s: sizes: OK: la-size-sect %" PRIu64 " of at most %" PRIu64
	       " sectors, data device %" PRIu64 " sectors\n",
	       v->name, sb.la_size_sect, l->max_data_sect,
	       bdev_size(md_data_bdev(m)) / 512);
	if (sb.la_size_sect > bdev_size(md_data_bdev(m)) / 512) {
		printf("%s: sizes: FAILED: the data device is smaller than the last agreed size\n",
		       v->name);
		ret = EXIT_EXEC;
	}
	ring = malloc((size_t)blocks * AL_BLOCK_BYTES);
	if (!ring || md_read_al(m, ring) < 0 ||
	    al_replay(ring, blocks, l->al_stripes, l->al_stripe_size_4k, &r) < 0) {
		vol_err(v, "cannot read the activity log");
		ret = EXIT_EXEC;
		goto out;
	}
	printf("%s: activity log: %s: %u blocks (%u x %u), %u update transactions, %u with a bad "
	       "magic or checksum%s\n",
	       v->name, r.n_corrupt > 1 ? "FAILED" : "OK", blocks, l->al_stripes,
	       l->al_stripe_size_4k, r.n_updates, r.n_corrupt,
	       r.n_corrupt == 1 ? " (one torn last write is expected after a crash)" : "");
	if (r.n_corrupt > 1)
		ret = EXIT_EXEC;
	if (read_bm_bytes(v, m, &sb, &bm) < 0) {
		ret = EXIT_EXEC;
		goto out;
	}
	bm_bytes = md_layout_bm_bytes(sb.la_size_sect);
	bits = md_layout_bm_bits(sb.la_size_sect);
	for (i = 0; i < bm_bytes; i++)
		weight += (uint64_t)__builtin_popcount(bm[i]);
	for (bit = bits; bit < bm_bytes * 8; bit++)
		surplus += (bm[bit / 8] >> (bit % 8)) & 1;
	printf("%s: bitmap: OK: %" PRIu64 " bytes, %" PRIu64 " KiB out of sync%s\n", v->name,
	       bm_bytes, (weight - surplus) * 4,
	       surplus ? " (bits past the device end are set; tandem ignores them)" : "");
out:
	al_replay_free(&r);
	free(ring);
	free(bm);
	return ret;
}

struct md_verb {
	const char *name;
	int (*fn)(struct vol_ctx *v, struct md *m);
	bool writes;
	const char *pre_arg; /* a positional argument before the resources */
};

static const struct md_verb md_verbs[] = {
	{"create-md", do_create_md, true, NULL}, {"wipe-md", do_wipe_md, true, NULL},
	{"dump-md", do_dump_md, false, NULL},	 {"restore-md", do_restore_md, true, "FILE"},
	{"apply-al", do_apply_al, true, NULL},	 {"get-gi", do_get_gi, false, NULL},
	{"show-gi", do_show_gi, false, NULL},	 {"set-gi", do_set_gi, true, "GI"},
	{"dstate", do_dstate, false, NULL},	 {"outdate", do_outdate, true, NULL},
	{"check-md", do_check_md, false, NULL},
};

static int run_volume(struct vol_ctx *v, const struct md_verb *verb)
{
	struct md *m;
	int rc;

	if (vol_open(v, verb->writes, &m) < 0)
		return EXIT_EXEC;
	rc = verb->fn(v, m);
	md_close(m);
	return rc;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *e;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno || *e || !*s || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* One RES or RES/VOL argument of a metadata verb. */
static int run_arg(struct cli *cli, const struct conf *c, const struct md_verb *verb,
		   const struct md_args *a, const char *arg)
{
	struct vol_ctx v = {.cli = cli, .conf = c, .args = a};
	char name[256], *slash;
	long vnr = -1;
	bool found = false;
	int rc, worst = EXIT_OK;

	/* dstate of a resource that is up: the daemon knows better */
	if (!strcmp(cli->verb, "dstate") && !strchr(arg, '/') && cmd_ctl_dstate(cli, arg) == EXIT_OK)
		return EXIT_OK;
	/* outdate of a resource that is up: a state change in the daemon */
	if (!strcmp(cli->verb, "outdate") && !strchr(arg, '/') && (rc = cmd_ctl_outdate(cli, arg)) >= 0)
		return rc;
	snprintf(name, sizeof(name), "%s", arg);
	slash = strchr(name, '/');
	if (slash) {
		char *e;

		*slash = '\0';
		vnr = strtol(slash + 1, &e, 10);
		if (*e || vnr < 0 || !slash[1]) {
			fprintf(stderr, "tandemadm %s: '%s': expected RES or RES/VOLUME\n", cli->verb,
				arg);
			return EXIT_USAGE;
		}
	}
	v.res = cli_local_res(cli, c, name, &rc);
	if (!v.res)
		return rc;
	for (v.vol = v.res->me->vols; v.vol; v.vol = v.vol->next) {
		if (vnr >= 0 && v.vol->vnr != (unsigned long)vnr)
			continue;
		found = true;
		if (v.res->me->vols->next || vnr >= 0)
			snprintf(v.name, sizeof(v.name), "%s/%u", name, v.vol->vnr);
		else
			snprintf(v.name, sizeof(v.name), "%s", name);
		rc = run_volume(&v, verb);
		worst = worst > rc ? worst : rc;
	}
	if (!found) {
		fprintf(stderr, "tandemadm %s: resource %s has no volume %ld\n", cli->verb, name, vnr);
		return EXIT_CONFIG;
	}
	return worst;
}

int cmd_md(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"force", no_argument, NULL, 'f'},
		{"al-stripes", required_argument, NULL, 's'},
		{"al-stripe-size-kB", required_argument, NULL, 'k'},
		{"peer-max-bio-size", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	const struct md_verb *verb = NULL;
	struct md_args a = {0};
	struct conf *c;
	size_t i;
	int opt, rc, worst = EXIT_OK;

	for (i = 0; i < sizeof(md_verbs) / sizeof(md_verbs[0]); i++)
		if (!strcmp(md_verbs[i].name, cli->verb))
			verb = &md_verbs[i];
	optind = 1;
	while ((opt = getopt_long(argc, argv, "f", longopts, NULL)) != -1) {
		uint32_t *dst = opt == 's' ? &a.al_stripes
				: opt == 'k' ? &a.al_stripe_size_kb
					     : &a.peer_max_bio_size;

		if (opt == 'f') {
			a.force = true;
		} else if (opt == '?' || parse_u32(optarg, dst) < 0) {
			fprintf(stderr, "tandemadm %s: bad option%s%s; see 'tandemadm help'\n",
				cli->verb, opt == '?' ? "" : " value ", opt == '?' ? "" : optarg);
			return EXIT_USAGE;
		}
	}
	if ((a.al_stripes || a.al_stripe_size_kb) && strcmp(cli->verb, "create-md")) {
		fprintf(stderr, "tandemadm %s: --al-stripes and --al-stripe-size-kB only apply to "
				"create-md\n",
			cli->verb);
		return EXIT_USAGE;
	}
	if (a.al_stripe_size_kb % 4 || (a.al_stripes && !a.al_stripe_size_kb))
		a.al_stripe_size_kb = a.al_stripe_size_kb ? a.al_stripe_size_kb : 32;
	if (a.al_stripe_size_kb % 4) {
		fprintf(stderr, "tandemadm create-md: --al-stripe-size-kB must be a multiple of 4\n");
		return EXIT_USAGE;
	}
	if (a.al_stripe_size_kb && !a.al_stripes)
		a.al_stripes = 1;
	if (verb->pre_arg) {
		if (optind >= argc) {
			fprintf(stderr, "usage: tandemadm %s %s RES[/VOL]...\n", cli->verb,
				verb->pre_arg);
			return EXIT_USAGE;
		}
		if (!strcmp(verb->pre_arg, "FILE"))
			a.file = argv[optind++];
		else
			a.gi = argv[optind++];
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: tandemadm %s [--force]%s%s RES[/VOL]...\n", cli->verb,
			verb->pre_arg ? " " : "", verb->pre_arg ? verb->pre_arg : "");
		return EXIT_USAGE;
	}
	rc = cli_load_conf(cli, &c);
	if (rc)
		return rc;
	for (; optind < argc; optind++) {
		rc = run_arg(cli, c, verb, &a, argv[optind]);
		worst = worst > rc ? worst : rc;
	}
	conf_free(c);
	return worst;
}
