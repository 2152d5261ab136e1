/*
 * al-writer: drive the activity log of a volume like a Primary's write
 * path would, then stop as if the node crashed (test tool).
 *
 *   al-writer IMAGE AL-EXTENTS SEED WRITES
 *
 * IMAGE holds internal v08 metadata (tandemadm create-md). The superblock
 * gets the in-use magic, PRIMARY_IND and la_size_sect = the usable size
 * rounded down to whole 4 MiB extents. Then WRITES random batches of 4 KiB
 * writes go through al_begin_io/al_commit (transactions written to the
 * ring) and complete in random order; the last batch stays in flight.
 * Prints the extents that were hot on disk or in flight at the end, one
 * per line: every one of them must be out of sync after apply-al.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "al.h"
#include "md.h"

static int write_block(void *ctx, uint32_t block, const void *buf)
{
	return md_write_al_block(ctx, block, buf);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	struct md_open_opts o = {.kind = MD_INTERNAL, .writable = true};
	struct al_ops ops = {.write_block = write_block};
	uint64_t seed, extents, inflight[64];
	unsigned long writes, i, n = 0, j;
	uint32_t *active;
	struct md_sb sb;
	struct al *al;
	struct md *m;
	char err[256];
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: al-writer IMAGE AL-EXTENTS SEED WRITES\n");
		return 2;
	}
	o.data_path = argv[1];
	seed = strtoull(argv[3], NULL, 0) | 1;
	writes = strtoul(argv[4], NULL, 0);
	if (md_open(&o, &m, err, sizeof(err)) < 0 || md_load_sb(m, &sb, err, sizeof(err)) < 0) {
		fprintf(stderr, "al-writer: %s\n", err);
		return 1;
	}
	sb.la_size_sect = md_layout(m)->max_data_sect & ~8191ULL;
	sb.magic = MD_MAGIC_INUSE;
	sb.flags = (sb.flags | MDF_PRIMARY_IND | MDF_CONSISTENT) & ~MDF_AL_CLEAN;
	extents = sb.la_size_sect / 8192;
	if (extents == 0 || md_write_sb(m, &sb) < 0 ||
	    al_new((uint32_t)strtoul(argv[2], NULL, 0), sb.al_stripes, sb.al_stripe_size_4k, &ops,
		   m, &al) < 0) {
		fprintf(stderr, "al-writer: cannot set up\n");
		return 1;
	}
	for (i = 0; i < writes; i++) {
		/* a batch of up to 8 writes, most of them near each other */
		unsigned long batch = 1 + rnd(&seed) % 8;
		uint64_t base = rnd(&seed) % extents;

		for (j = 0; j < batch && n < 64; j++) {
			uint64_t e = (rnd(&seed) % 4) ? (base + rnd(&seed) % 16) % extents
						     : rnd(&seed) % extents;
			uint64_t sector = e * 8192 + (rnd(&seed) % 1024) * 8;

			rc = al_begin_io(al, sector, 8);
			if (rc == -EAGAIN)
				break;
			if (rc < 0) {
				fprintf(stderr, "al-writer: al_begin_io: %s\n", strerror(-rc));
				return 1;
			}
			inflight[n++] = sector;
		}
		if (al_pending(al) && (rc = al_commit(al)) < 0) {
			fprintf(stderr, "al-writer: al_commit: %s\n", strerror(-rc));
			return 1;
		}
		if (i + 1 == writes)
			break; /* crash with the last batch in flight */
		while (n > 0 && rnd(&seed) % 3) {
			j = rnd(&seed) % n;
			al_complete_io(al, inflight[j], 8);
			inflight[j] = inflight[--n];
		}
	}
	active = calloc(65534, sizeof(*active));
	if (!active)
		return 1;
	n = al_active(al, active, 65534);
	for (i = 0; i < n; i++)
		printf("%u\n", active[i]);
	free(active);
	al_free(al);
	md_close(m);
	return 0;
}
