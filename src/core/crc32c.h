/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of the model format.
 *
 * The core calls it and does not define it: the extension links
 * PostgreSQL's implementation (src/pg/crc32c.c, from libpgport), and the
 * stand-alone programs (unit tests, fuzzers, benchmarks) link Intel ISA-L's
 * (src/crc32c_isal.c), so that the core links without PostgreSQL.  Both
 * give the standard CRC-32C: initial value and final XOR 0xFFFFFFFF,
 * reflected; crc32c("123456789") = 0xE3069283.
 */
#ifndef KM_CRC32C_H
#define KM_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t	km_crc32c(const void *data, size_t len);

#endif							/* KM_CRC32C_H */
