/*
 * memfield: a number in a struct member of 1, 2, 4 or 8 bytes, read and
 * written by width (the table-driven codecs wire-pkt.c and arbmsg.c).
 */
#ifndef TANDEM_MEMFIELD_H
#define TANDEM_MEMFIELD_H

#include <stdint.h>
#include <string.h>

/* Numbers live in struct members of their wire width. */
static inline uint64_t memfield_load(const uint8_t *m, unsigned int width)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (width) {
	case 1:
		memcpy(&u8, m, 1);
		return u8;
	case 2:
		memcpy(&u16, m, 2);
		return u16;
	case 4:
		memcpy(&u32, m, 4);
		return u32;
	default:
		memcpy(&u64, m, 8);
		return u64;
	}
}

static inline void memfield_store(uint8_t *m, unsigned int width, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (width) {
	case 1:
		memcpy(m, &u8, 1);
		break;
	case 2:
		memcpy(m, &u16, 2);
		break;
	case 4:
		memcpy(m, &u32, 4);
		break;
	default:
		memcpy(m, &v, 8);
		break;
	}
}

#endif
