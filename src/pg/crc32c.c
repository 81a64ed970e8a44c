/*
 * crc32c.c - CRC-32C for the model format in the extension, from
 * PostgreSQL's port library (glue; the stand-alone programs link
 * src/crc32c_isal.c instead, see crc32c.h).
 *
 * Only c.h and port/pg_crc32c.h are included.
 */
#include "c.h"
#include "port/pg_crc32c.h"

#include "crc32c.h"

uint32_t
km_crc32c(const void *data, size_t len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32_t) crc;
}
