/* crc32c: CRC-32C (Castagnoli) with Linux kernel semantics: the caller's
 * seed goes in as is and there is no final inversion (the AL uses seed 0). */
#ifndef TANDEM_CRC32C_H
#define TANDEM_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

#endif
