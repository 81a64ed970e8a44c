/*
 * crc32c.c - CRC-32C for the model format, from Intel ISA-L (Debian
 * libisal-dev): the core links it itself, in the extension and in the
 * stand-alone programs (unit tests, fuzzers, benchmarks) alike.
 *
 * ISA-L's crc32_iscsi is CRC-32C without the final inversion and takes the
 * running value as it left it: start from 0xFFFFFFFF, feed each piece the
 * previous result, invert at the end.  Its length is an int, hence pieces.
 */
#include <isa-l/crc.h>

#include "crc32c.h"

#define PIECE ((size_t) 1 << 30)

uint32_t
km_crc32c(const void *data, size_t len)
{
	unsigned char *p = (unsigned char *) data;	/* ISA-L takes no const */
	unsigned int crc = 0xFFFFFFFFu;

	while (len > 0)
	{
		size_t		n = len < PIECE ? len : PIECE;

		crc = crc32_iscsi(p, (int) n, crc);
		p += n;
		len -= n;
	}
	return (uint32_t) ~crc;
}
