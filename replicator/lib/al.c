/*
 * al: the activity log (doc/ondisk-format.pod, ACTIVITY LOG): the hot set
 * in memory, DRBD 8.4 transaction blocks, and drbdmeta apply-al's replay.
 *
 * Slots 0..nr-1 each hold at most one extent; a chained hash table (about
 * 2 x nr buckets, chains linked through the slots) finds the slot of an
 * extent. A slot is in exactly one of these states:
 *
 *   free     never used (on the free stack, handed out lowest first)
 *   pending  extent chosen by al_begin_io, not yet in a transaction
 *            (on the pending queue, in the order it was chosen)
 *   busy     committed, writes in flight (refs > 0)
 *   idle     committed, refs == 0 (on the LRU list, oldest first)
 *
 * Only committed slots count as hot (al_is_hot, al_active). A cold extent
 * takes a free slot, else the least recently used idle one: the extent it
 * held leaves the hash at once, but stays in slot->committed (it is still
 * in the log on disk) until the transaction that reuses the slot, which
 * al_commit writes only after ops->flush_extent() of that extent.
 *
 * The rolling context of a transaction describes the slots as committed
 * before it (like the kernel's lc_number): a slot whose change waits for a
 * later transaction of the same batch still shows its old extent, whose
 * bitmap pages may not be on disk yet.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "al.h"
#include "md-layout.h"
#include "crc32c.h"

#define AL_NIL              UINT32_MAX /* no slot */
#define AL_RING_MIN         8u         /* ring blocks the kernel accepts */
#define AL_RING_MAX         4194304u
#define AL_SLOT_NONE        0xffffu    /* unused update_slot_nr entry */
#define AL_DEFAULT_STRIPES  1u
#define AL_DEFAULT_STRIPE_4K 8u

/* Byte offsets in a transaction block. */
#define AL_OFF_MAGIC        0
#define AL_OFF_TR           4
#define AL_OFF_CRC          8
#define AL_OFF_TYPE         12
#define AL_OFF_N_UPDATES    14
#define AL_OFF_CTX_SIZE     16
#define AL_OFF_CTX_START    18
#define AL_OFF_SLOT_NR      36
#define AL_OFF_EXTENT_NR    164
#define AL_OFF_CONTEXT      420

struct al_slot {
	uint32_t extent;    /* extent held or being brought in, AL_FREE if none */
	uint32_t committed; /* extent the log on disk has in this slot */
	uint32_t refs;      /* writes in flight */
	uint32_t hnext;     /* next slot in the hash chain */
	uint32_t prev;      /* LRU neighbours (idle slots only) */
	uint32_t next;
	bool pending;
	bool on_lru;
};

struct al {
	const struct al_ops *ops;
	void *ctx;
	uint32_t nr;
	uint32_t stripes;
	uint32_t stripe_size;
	struct al_slot *slots;
	uint32_t *buckets;
	unsigned int hash_bits;
	uint32_t *free_stack; /* free slots, lowest on top */
	uint32_t n_free;
	uint32_t lru_head;    /* least recently used idle slot */
	uint32_t lru_tail;
	uint32_t n_lru;
	uint32_t *pend;       /* pending slots, oldest first */
	uint32_t n_pend;
	uint32_t tr_number;   /* number of the next transaction */
	uint32_t cycle;       /* first slot of the next rolling context */
	struct al_stats st;
	unsigned char *block;
	bool tx_open;          /* a transaction is prepared, not finished */
};

/* ---------------------------------------------------------------- bytes */

static uint16_t al_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t al_get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void al_put16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void al_put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

/* crc32c(0, block) with the crc field read as zero. */
static uint32_t al_block_crc(const unsigned char *b)
{
	static const unsigned char zero[4];
	uint32_t crc;

	crc = crc32c(0, b, AL_OFF_CRC);
	crc = crc32c(crc, zero, sizeof(zero));
	return crc32c(crc, b + AL_OFF_CRC + 4, AL_BLOCK_BYTES - AL_OFF_CRC - 4);
}

static void al_block_seal(unsigned char *b)
{
	al_put32(b + AL_OFF_CRC, 0);
	al_put32(b + AL_OFF_CRC, al_block_crc(b));
}

/* ---------------------------------------------------------------- geometry */

/* (0, 0) is the default 1 x 8; exactly one of them 0 is invalid. */
static int al_geometry(uint32_t *stripes, uint32_t *stripe_size, uint64_t *blocks)
{
	if (!*stripes && !*stripe_size) {
		*stripes = AL_DEFAULT_STRIPES;
		*stripe_size = AL_DEFAULT_STRIPE_4K;
	}
	if (!*stripes || !*stripe_size)
		return -EINVAL;
	*blocks = (uint64_t)*stripes * *stripe_size;
	return 0;
}

uint32_t al_ring_block(uint32_t tr_number, uint32_t stripes, uint32_t stripe_size_4k)
{
	uint64_t blocks, t;

	/* A pure function cannot fail: invalid geometry counts as 1 x 8. */
	if (al_geometry(&stripes, &stripe_size_4k, &blocks) < 0) {
		stripes = AL_DEFAULT_STRIPES;
		stripe_size_4k = AL_DEFAULT_STRIPE_4K;
		blocks = (uint64_t)stripes * stripe_size_4k;
	}
	t = tr_number % blocks;
	return (uint32_t)((t % stripes) * stripe_size_4k + t / stripes);
}

void al_block_init(void *buf)
{
	unsigned char *b = buf;

	memset(b, 0, AL_BLOCK_BYTES);
	al_put32(b + AL_OFF_MAGIC, AL_MAGIC);
	al_put16(b + AL_OFF_TYPE, AL_TR_INITIALIZED);
	al_block_seal(b);
}

/* ---------------------------------------------------------------- hash, LRU */

static uint32_t al_hash(const struct al *al, uint32_t extent)
{
	return (extent * 0x9e3779b1u) >> (32 - al->hash_bits);
}

static uint32_t al_lookup(const struct al *al, uint32_t extent)
{
	uint32_t s = al->buckets[al_hash(al, extent)];

	while (s != AL_NIL && al->slots[s].extent != extent)
		s = al->slots[s].hnext;
	return s;
}

static void al_hash_add(struct al *al, uint32_t s)
{
	uint32_t *head = &al->buckets[al_hash(al, al->slots[s].extent)];

	al->slots[s].hnext = *head;
	*head = s;
}

static void al_hash_del(struct al *al, uint32_t s)
{
	uint32_t *link = &al->buckets[al_hash(al, al->slots[s].extent)];

	while (*link != s)
		link = &al->slots[*link].hnext;
	*link = al->slots[s].hnext;
	al->slots[s].hnext = AL_NIL;
}

static void al_lru_del(struct al *al, uint32_t s)
{
	struct al_slot *sl = &al->slots[s];

	if (sl->prev != AL_NIL)
		al->slots[sl->prev].next = sl->next;
	else
		al->lru_head = sl->next;
	if (sl->next != AL_NIL)
		al->slots[sl->next].prev = sl->prev;
	else
		al->lru_tail = sl->prev;
	sl->prev = sl->next = AL_NIL;
	sl->on_lru = false;
	al->n_lru--;
}

static void al_lru_add_tail(struct al *al, uint32_t s)
{
	struct al_slot *sl = &al->slots[s];

	sl->prev = al->lru_tail;
	sl->next = AL_NIL;
	if (al->lru_tail != AL_NIL)
		al->slots[al->lru_tail].next = s;
	else
		al->lru_head = s;
	al->lru_tail = s;
	sl->on_lru = true;
	al->n_lru++;
}

/* ---------------------------------------------------------------- life cycle */

static int al_alloc(struct al *al)
{
	uint32_t i, nb;

	al->hash_bits = 1;
	while ((1u << al->hash_bits) < 2 * al->nr)
		al->hash_bits++;
	nb = 1u << al->hash_bits;
	al->slots = calloc(al->nr, sizeof(*al->slots));
	al->buckets = malloc(nb * sizeof(*al->buckets));
	al->free_stack = malloc(al->nr * sizeof(*al->free_stack));
	al->pend = malloc(al->nr * sizeof(*al->pend));
	al->block = malloc(AL_BLOCK_BYTES);
	if (!al->slots || !al->buckets || !al->free_stack || !al->pend || !al->block)
		return -ENOMEM;
	for (i = 0; i < nb; i++)
		al->buckets[i] = AL_NIL;
	for (i = 0; i < al->nr; i++) {
		al->slots[i] = (struct al_slot){
			.extent = AL_FREE,
			.committed = AL_FREE,
			.hnext = AL_NIL,
			.prev = AL_NIL,
			.next = AL_NIL,
		};
		al->free_stack[i] = al->nr - 1 - i;
	}
	al->n_free = al->nr;
	al->lru_head = al->lru_tail = AL_NIL;
	return 0;
}

/*
 * nr_extents is clamped, not rejected: below AL_EXTENTS_MIN to 67 (the
 * configuration layer already refuses such values), above what the ring
 * can describe with one torn block to md_layout_al_extents_max(), as the kernel does.
 */
int al_new(uint32_t nr_extents, uint32_t stripes, uint32_t stripe_size_4k,
	   const struct al_ops *ops, void *ctx, struct al **out)
{
	uint64_t blocks;
	struct al *al;
	uint32_t max;
	int rc;

	if (!ops || !ops->write_block || !out)
		return -EINVAL;
	rc = al_geometry(&stripes, &stripe_size_4k, &blocks);
	if (rc < 0 || blocks < AL_RING_MIN || blocks > AL_RING_MAX)
		return -EINVAL;
	max = md_layout_al_extents_max((uint32_t)blocks);
	if (nr_extents < AL_EXTENTS_MIN)
		nr_extents = AL_EXTENTS_MIN;
	if (nr_extents > max)
		nr_extents = max;

	al = calloc(1, sizeof(*al));
	if (!al)
		return -ENOMEM;
	al->ops = ops;
	al->ctx = ctx;
	al->nr = nr_extents;
	al->stripes = stripes;
	al->stripe_size = stripe_size_4k;
	rc = al_alloc(al);
	if (rc < 0) {
		al_free(al);
		return rc;
	}
	*out = al;
	return 0;
}

void al_free(struct al *al)
{
	if (!al)
		return;
	free(al->slots);
	free(al->buckets);
	free(al->free_stack);
	free(al->pend);
	free(al->block);
	free(al);
}

uint32_t al_nr_extents(const struct al *al)
{
	return al->nr;
}

uint32_t al_ring_blocks(const struct al *al)
{
	return al->stripes * al->stripe_size;
}

/* The next transaction gets number tr_number. */
void al_set_next_tr(struct al *al, uint32_t tr_number)
{
	al->tr_number = tr_number;
}

void al_get_stats(const struct al *al, struct al_stats *st)
{
	*st = al->st;
}

/* ---------------------------------------------------------------- write path */

/* Extents [*first, *first + *n) of a range; *n == 0 for an empty one. */
static int al_range(uint64_t sector, uint32_t nsect, uint32_t *first, uint64_t *n)
{
	uint64_t end, last;

	*first = 0;
	*n = 0;
	if (!nsect)
		return 0;
	if (sector > UINT64_MAX - (nsect - 1))
		return -EINVAL;
	end = sector + (nsect - 1);
	last = end >> AL_EXTENT_SHIFT_SECT;
	if (last >= AL_FREE)
		return -EINVAL;
	*first = (uint32_t)(sector >> AL_EXTENT_SHIFT_SECT);
	*n = last - *first + 1;
	return 0;
}

/* A slot for a cold extent: a free one, else the LRU idle one (evicted). */
static uint32_t al_take_slot(struct al *al)
{
	uint32_t s;

	if (al->n_free)
		return al->free_stack[--al->n_free];
	s = al->lru_head;
	al_lru_del(al, s);
	al_hash_del(al, s);
	al->st.evictions++;
	return s;
}

static void al_bring_in(struct al *al, uint32_t extent)
{
	uint32_t s = al_take_slot(al);
	struct al_slot *sl = &al->slots[s];

	sl->extent = extent;
	sl->refs = 1;
	sl->pending = true;
	al_hash_add(al, s);
	al->pend[al->n_pend++] = s;
	al->st.misses++;
}

int al_begin_io(struct al *al, uint64_t sector, uint32_t nsect)
{
	uint32_t first, e, s, cold = 0, idle_in_range = 0;
	uint64_t n, i;
	int rc;

	rc = al_range(sector, nsect, &first, &n);
	if (rc < 0 || n == 0)
		return rc;
	if (n > al->nr)
		return -EINVAL;

	/* Count first; the idle extents of the range itself are not evictable. */
	for (i = 0; i < n; i++) {
		s = al_lookup(al, first + (uint32_t)i);
		if (s == AL_NIL)
			cold++;
		else if (al->slots[s].on_lru)
			idle_in_range++;
	}
	if (cold > al->n_free + al->n_lru - idle_in_range)
		return -EAGAIN;

	/* Reference the hot (or pending) extents before evicting anything. */
	for (i = 0; i < n; i++) {
		s = al_lookup(al, first + (uint32_t)i);
		if (s == AL_NIL)
			continue;
		if (al->slots[s].on_lru)
			al_lru_del(al, s);
		al->slots[s].refs++;
		al->st.hits++;
	}
	for (i = 0; i < n && cold; i++) {
		e = first + (uint32_t)i;
		if (al_lookup(al, e) == AL_NIL)
			al_bring_in(al, e);
	}
	return (int)cold;
}

/* Unbalanced completions (an extent without references) are ignored. */
void al_complete_io(struct al *al, uint64_t sector, uint32_t nsect)
{
	uint32_t first, s;
	uint64_t n, i;

	if (al_range(sector, nsect, &first, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		s = al_lookup(al, first + (uint32_t)i);
		if (s == AL_NIL || !al->slots[s].refs)
			continue;
		if (--al->slots[s].refs == 0 && !al->slots[s].pending)
			al_lru_add_tail(al, s);
	}
}

unsigned int al_pending(const struct al *al)
{
	return al->n_pend;
}

bool al_is_hot(const struct al *al, uint32_t extent)
{
	uint32_t s;

	if (extent == AL_FREE)
		return false;
	s = al_lookup(al, extent);
	return s != AL_NIL && !al->slots[s].pending;
}

uint32_t al_active(const struct al *al, uint32_t *out, uint32_t max)
{
	uint32_t s, n = 0;

	for (s = 0; s < al->nr && n < max; s++)
		if (!al->slots[s].pending && al->slots[s].extent != AL_FREE)
			out[n++] = al->slots[s].extent;
	return n;
}

/* ---------------------------------------------------------------- transactions */

/* The transaction for the first n pending changes, at al->tr_number, into b. */
static void al_build_block(struct al *al, uint32_t n, unsigned char *b)
{
	uint32_t i, s;

	memset(b, 0, AL_BLOCK_BYTES);
	al_put32(b + AL_OFF_MAGIC, AL_MAGIC);
	al_put32(b + AL_OFF_TR, al->tr_number);
	al_put16(b + AL_OFF_TYPE, AL_TR_UPDATE);
	al_put16(b + AL_OFF_N_UPDATES, (uint16_t)n);
	al_put16(b + AL_OFF_CTX_SIZE, (uint16_t)al->nr);
	al_put16(b + AL_OFF_CTX_START, (uint16_t)al->cycle);
	for (i = 0; i < AL_UPDATES_PER_TR; i++) {
		s = i < n ? al->pend[i] : AL_NIL;
		al_put16(b + AL_OFF_SLOT_NR + 2 * i, s != AL_NIL ? (uint16_t)s : AL_SLOT_NONE);
		al_put32(b + AL_OFF_EXTENT_NR + 4 * i, s != AL_NIL ? al->slots[s].extent : AL_FREE);
	}
	for (i = 0; i < AL_CONTEXT_PER_TR; i++) {
		s = al->cycle + i;
		al_put32(b + AL_OFF_CONTEXT + 4 * i, s < al->nr ? al->slots[s].committed : AL_FREE);
	}
	al_block_seal(b);
}

static void al_mark_committed(struct al *al, uint32_t n)
{
	uint32_t i, s;

	for (i = 0; i < n; i++) {
		s = al->pend[i];
		al->slots[s].committed = al->slots[s].extent;
		al->slots[s].pending = false;
		if (!al->slots[s].refs)
			al_lru_add_tail(al, s);
	}
	al->n_pend -= n;
	memmove(al->pend, al->pend + n, al->n_pend * sizeof(*al->pend));
}

int al_commit_prepare(struct al *al, struct al_tx *tx, void *buf)
{
	uint32_t i, old;

	memset(tx, 0, sizeof(*tx));
	if (al->tx_open)
		return -EBUSY;
	if (!al->n_pend)
		return 0;
	tx->n = al->n_pend < AL_UPDATES_PER_TR ? al->n_pend : AL_UPDATES_PER_TR;
	tx->tr_number = al->tr_number;
	tx->block = al_ring_block(al->tr_number, al->stripes, al->stripe_size);
	for (i = 0; i < tx->n; i++) {
		old = al->slots[al->pend[i]].committed;
		if (old != AL_FREE)
			tx->evicted[tx->n_evicted++] = old;
	}
	al_build_block(al, tx->n, buf);
	al->tx_open = true;
	return 0;
}

/*
 * The number of the transaction after tr: tr + 1, except at the 32-bit
 * wrap of a ring whose size does not divide 2^32, where 0 would land on
 * the block of tr itself and overwrite it; the first number at the next
 * ring position is newer by serial-number arithmetic all the same.
 */
static uint32_t al_tr_after(uint32_t tr, uint32_t blocks)
{
	if (tr != UINT32_MAX)
		return tr + 1;
	return (uint32_t)(((uint64_t)UINT32_MAX + 1) % blocks);
}

void al_commit_finish(struct al *al, const struct al_tx *tx, int rc)
{
	if (!al->tx_open || !tx->n)
		return;
	al->tx_open = false;
	if (rc < 0)
		return; /* the changes stay pending; the next transaction retries them */
	al->tr_number = al_tr_after(al->tr_number, al_ring_blocks(al));
	al->cycle += AL_CONTEXT_PER_TR;
	if (al->cycle >= al->nr)
		al->cycle = 0;
	al->st.transactions++;
	al_mark_committed(al, tx->n);
}

bool al_range_hot(const struct al *al, uint64_t sector, uint32_t nsect)
{
	uint32_t first;
	uint64_t n, i;

	if (al_range(sector, nsect, &first, &n) < 0)
		return false;
	for (i = 0; i < n; i++)
		if (!al_is_hot(al, first + (uint32_t)i))
			return false;
	return true;
}

int al_commit(struct al *al)
{
	struct al_tx tx;
	uint32_t i;
	int rc;

	for (;;) {
		rc = al_commit_prepare(al, &tx, al->block);
		if (rc < 0 || !tx.n)
			return rc;
		for (i = 0; i < tx.n_evicted && al->ops->flush_extent && rc == 0; i++) {
			rc = al->ops->flush_extent(al->ctx, tx.evicted[i]);
			if (rc > 0)
				rc = -EIO;
		}
		if (rc == 0) {
			rc = al->ops->write_block(al->ctx, tx.block, al->block);
			if (rc > 0)
				rc = -EIO;
		}
		al_commit_finish(al, &tx, rc);
		if (rc < 0)
			return rc;
	}
}

/* ---------------------------------------------------------------- replay */

static const char al_msg_no_log[] = "No usable activity log found. Do you need to create-md?";
static const char al_msg_no_update[] = "No valid AL update transaction found.";

struct al_cursor {
	uint32_t pos;
	uint32_t tr;
};

struct al_scan {
	const unsigned char *ring;
	uint32_t stripes, stripe_size, mx;
	bool *valid;          /* per ring position (transaction order) */
	uint32_t found_valid;
	uint32_t found_updates;
	struct al_cursor oldest, newest;
};

static const unsigned char *al_pos_block(const struct al_scan *sc, uint32_t pos)
{
	return sc->ring + (size_t)al_ring_block(pos, sc->stripes, sc->stripe_size) * AL_BLOCK_BYTES;
}

static bool al_is_update(const unsigned char *b)
{
	/* drbdmeta treats every valid type but "initialized" as an update. */
	return al_get16(b + AL_OFF_TYPE) != AL_TR_INITIALIZED;
}

/* drbdmeta's first pass: validity, then oldest and newest update. */
static void al_replay_scan(struct al_scan *sc)
{
	const unsigned char *b;
	uint32_t pos, tr;

	for (pos = 0; pos < sc->mx; pos++) {
		b = al_pos_block(sc, pos);
		sc->valid[pos] = al_get32(b + AL_OFF_MAGIC) == AL_MAGIC &&
				 al_get32(b + AL_OFF_CRC) == al_block_crc(b);
		if (!sc->valid[pos])
			continue;
		sc->found_valid++;
		if (!al_is_update(b))
			continue;
		tr = al_get32(b + AL_OFF_TR);
		if (++sc->found_updates == 1) {
			sc->oldest = (struct al_cursor){pos, tr};
			sc->newest = sc->oldest;
			continue;
		}
		/* Serial number arithmetic, each bound updated on its own. */
		if ((int32_t)(tr - sc->oldest.tr) < 0)
			sc->oldest = (struct al_cursor){pos, tr};
		if ((int32_t)(tr - sc->newest.tr) > 0)
			sc->newest = (struct al_cursor){pos, tr};
	}
}

/*
 * Context first, then updates, with drbdmeta's skip rules. No count read
 * from the block bounds a loop or an index: the loops run over the fixed
 * array sizes and every slot number is checked against AL_EXTENTS_MAX, so
 * any content is safe.
 */
static void al_replay_apply(const unsigned char *b, uint32_t *slot)
{
	uint32_t ctx_size = al_get16(b + AL_OFF_CTX_SIZE);
	uint32_t ctx_start = al_get16(b + AL_OFF_CTX_START);
	uint32_t n_updates = al_get16(b + AL_OFF_N_UPDATES);
	uint32_t i, s, e;

	for (i = 0; i < AL_CONTEXT_PER_TR; i++) {
		s = ctx_start + i;
		e = al_get32(b + AL_OFF_CONTEXT + 4 * i);
		if (e == AL_FREE && s >= ctx_size)
			continue;
		if (s >= AL_EXTENTS_MAX)
			continue;
		slot[s] = e;
	}
	for (i = 0; i < AL_UPDATES_PER_TR; i++) {
		s = al_get16(b + AL_OFF_SLOT_NR + 2 * i);
		if (i >= n_updates && s == AL_SLOT_NONE)
			continue;
		if (s >= AL_EXTENTS_MAX)
			continue;
		slot[s] = al_get32(b + AL_OFF_EXTENT_NR + 4 * i);
	}
}

static int al_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct extents of slot[], ascending. */
static int al_replay_collect(const uint32_t *slot, struct al_replay *r)
{
	uint32_t s, n = 0, i, out;

	for (s = 0; s < AL_EXTENTS_MAX; s++)
		n += slot[s] != AL_FREE;
	if (!n)
		return 0;
	r->extents = malloc(n * sizeof(*r->extents));
	if (!r->extents)
		return -ENOMEM;
	for (s = 0, i = 0; s < AL_EXTENTS_MAX; s++)
		if (slot[s] != AL_FREE)
			r->extents[i++] = slot[s];
	qsort(r->extents, n, sizeof(*r->extents), al_cmp_u32);
	for (i = 1, out = 1; i < n; i++)
		if (r->extents[i] != r->extents[out - 1])
			r->extents[out++] = r->extents[i];
	r->n_extents = out;
	return 0;
}

/* Outcome when the ring holds no valid update transaction. */
static void al_replay_no_updates(const struct al_scan *sc, struct al_replay *r)
{
	if (!sc->found_valid) {
		r->problem = al_msg_no_log;
		return;
	}
	/* All initialised, or only the very first transaction torn: fine. */
	if (sc->found_valid == sc->mx || (!sc->valid[0] && sc->found_valid == sc->mx - 1)) {
		r->usable = true;
		return;
	}
	r->problem = al_msg_no_update;
}

static int al_replay_walk(const struct al_scan *sc, struct al_replay *r)
{
	uint32_t *slot;
	uint64_t pos, end;
	const unsigned char *b;
	int rc;

	slot = malloc(AL_EXTENTS_MAX * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	memset(slot, 0xff, AL_EXTENTS_MAX * sizeof(*slot));
	end = sc->newest.pos;
	if (end < sc->oldest.pos)
		end += sc->mx;
	for (pos = sc->oldest.pos; pos <= end; pos++) {
		uint32_t p = (uint32_t)(pos % sc->mx);

		b = al_pos_block(sc, p);
		if (sc->valid[p] && al_is_update(b))
			al_replay_apply(b, slot);
	}
	rc = al_replay_collect(slot, r);
	free(slot);
	return rc;
}

int al_replay(const void *ring, uint32_t blocks, uint32_t stripes, uint32_t stripe_size_4k,
	      struct al_replay *r)
{
	struct al_scan sc = {.ring = ring};
	uint64_t mx;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = al_geometry(&stripes, &stripe_size_4k, &mx);
	if (rc < 0 || mx != blocks || !blocks || !ring)
		return -EINVAL;
	sc.stripes = stripes;
	sc.stripe_size = stripe_size_4k;
	sc.mx = blocks;
	sc.valid = calloc(blocks, sizeof(*sc.valid));
	if (!sc.valid)
		return -ENOMEM;
	al_replay_scan(&sc);
	r->n_corrupt = sc.mx - sc.found_valid;
	r->n_updates = sc.found_updates;
	if (!sc.found_updates) {
		al_replay_no_updates(&sc, r);
		free(sc.valid);
		return 0;
	}
	r->newest_tr = sc.newest.tr;
	r->usable = true;
	rc = al_replay_walk(&sc, r);
	free(sc.valid);
	if (rc < 0)
		al_replay_free(r);
	return rc;
}

void al_replay_free(struct al_replay *r)
{
	if (!r)
		return;
	free(r->extents);
	r->extents = NULL;
	r->n_extents = 0;
}
