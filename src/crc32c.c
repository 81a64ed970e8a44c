/*
 * crc32c.c - CRC-32C for the model format, from PostgreSQL's port library.
 *
 * Only c.h and port/pg_crc32c.h are included, which are usable both in the
 * server and in frontend programs linked with libpgport (the unit tests).
 */
#include "c.h"
#include "port/pg_crc32c.h"

#include "model.h"

uint32_t
km_crc32c(const void *data, size_t len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32_t) crc;
}
