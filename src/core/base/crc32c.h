/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of the model format.
 *
 * Defined in crc32c.c from Intel ISA-L, for the extension and the
 * stand-alone programs alike: the standard CRC-32C (initial value and final
 * XOR 0xFFFFFFFF, reflected; crc32c("123456789") = 0xE3069283), the same
 * bytes as PostgreSQL's pg_crc32c, which wrote the models of 0.1.0-0.2.x.
 */
#ifndef KM_CRC32C_H
#define KM_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t	km_crc32c(const void *data, size_t len);

#endif							/* KM_CRC32C_H */
