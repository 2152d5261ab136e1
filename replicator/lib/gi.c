/* gi: generation UUID rotation rules (pure functions). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include "gi.h"

uint64_t gi_random(uint64_t rnd)
{
	rnd &= ~1ULL;
	if (rnd == 0 || rnd == GI_JUST_CREATED)
		rnd ^= 0x8000000000000000ULL | 0x10ULL;
	return rnd;
}

void gi_set_role(struct gi *g, bool primary)
{
	g->uuid[GI_CURRENT] = gi_mask(g->uuid[GI_CURRENT]) | (primary ? 1 : 0);
}

static void rotate_into_history(struct gi *g, uint64_t v)
{
	g->uuid[GI_HISTORY1] = g->uuid[GI_HISTORY0];
	g->uuid[GI_HISTORY0] = v;
}

bool gi_new_current(struct gi *g, uint64_t rnd, bool primary)
{
	bool overwrote = g->uuid[GI_BITMAP] != 0;

	/* bit 0 stays: it tells the after-sb policies whether this node was
	 * Primary when the generations diverged (DRBD keeps it too) */
	g->uuid[GI_BITMAP] = g->uuid[GI_CURRENT];
	g->uuid[GI_CURRENT] = gi_random(rnd);
	gi_set_role(g, primary);
	return overwrote;
}

void gi_set_bitmap(struct gi *g, uint64_t v)
{
	g->uuid[GI_BITMAP] = gi_mask(v);
}

void gi_clear_bitmap(struct gi *g)
{
	if (g->uuid[GI_BITMAP] != 0) {
		rotate_into_history(g, g->uuid[GI_BITMAP]);
		g->uuid[GI_BITMAP] = 0;
	}
}

uint64_t gi_start_sync_source(struct gi *g, uint64_t rnd)
{
	uint64_t old = g->uuid[GI_BITMAP], s;

	if (old == 0 || old == GI_JUST_CREATED)
		s = gi_random(rnd);
	else
		s = gi_mask(old + GI_NEW_BM_OFFSET);
	if (old != 0)
		rotate_into_history(g, old);
	g->uuid[GI_BITMAP] = s;
	return s;
}

void gi_sync_target_receive(struct gi *g, uint64_t sync_uuid, bool primary)
{
	g->uuid[GI_CURRENT] = gi_mask(sync_uuid);
	g->uuid[GI_BITMAP] = 0;
	gi_set_role(g, primary);
}

void gi_end_sync_target(struct gi *g, const struct gi *peer, bool primary)
{
	uint64_t own_current = gi_mask(g->uuid[GI_CURRENT]);

	g->uuid[GI_BITMAP] = peer->uuid[GI_BITMAP];
	g->uuid[GI_HISTORY0] = peer->uuid[GI_HISTORY0];
	g->uuid[GI_HISTORY1] = peer->uuid[GI_HISTORY1];
	/* bitmap := own current, with rotation */
	if (g->uuid[GI_BITMAP] != 0)
		rotate_into_history(g, g->uuid[GI_BITMAP]);
	g->uuid[GI_BITMAP] = own_current;
	g->uuid[GI_CURRENT] = gi_mask(peer->uuid[GI_CURRENT]);
	gi_set_role(g, primary);
	gi_clear_bitmap(g);
}

void gi_end_sync_source(struct gi *g)
{
	gi_clear_bitmap(g);
}

void gi_new_current_clear_bitmap(struct gi *g, uint64_t rnd, bool primary)
{
	g->uuid[GI_CURRENT] = gi_random(rnd);
	g->uuid[GI_BITMAP] = 0;
	gi_set_role(g, primary);
}

uint64_t gi_entropy(void)
{
	uint64_t v = 0;
	ssize_t n;
	int fd;

	do
		n = getrandom(&v, sizeof(v), 0);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(v))
		return v;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, &v, sizeof(v));
		close(fd);
	}
	return v;
}
