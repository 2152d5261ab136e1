/*
 * crc32c: CRC-32C, reflected polynomial 0x82F63B78, Linux semantics (no
 * pre/post inversion). Uses the SSE4.2 crc32 instruction where the CPU has
 * it, a slicing table otherwise.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "crc32c.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
		table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			table[j][i] = (table[j - 1][i] >> 8) ^ table[0][table[j - 1][i] & 0xff];
}

static uint32_t crc32c_sw(uint32_t crc, const unsigned char *p, size_t len)
{
	pthread_once(&table_once, table_init);
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		lo ^= crc;
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^ table[3][hi & 0xff] ^
		      table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p,
							   size_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, buf, len);
#endif
	return crc32c_sw(crc, buf, len);
}
