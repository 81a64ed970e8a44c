/*
 * CRC-32C as the core links it (src/core/base/crc32c.c, ISA-L):
 * the standard check value and RFC 3720's iSCSI vectors, so that a wrong
 * init/final-XOR convention or polynomial fails here, and the checksums of
 * a model written by the extension (PostgreSQL's CRC-32C) verify.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "crc32c.h"
#include "unit.h"

void		test_crc_check_values(void);
void		test_crc_extension_model(void);

void
test_crc_check_values(void)
{
	uint8_t		buf[32];

	CHECK(km_crc32c("123456789", 9) == 0xE3069283u, "0x%08X", km_crc32c("123456789", 9));
	CHECK(km_crc32c("", 0) == 0, "0x%08X", km_crc32c("", 0));
	/* RFC 3720, B.4 */
	memset(buf, 0, sizeof(buf));
	CHECK(km_crc32c(buf, 32) == 0x8A9136AAu, "zeros: 0x%08X", km_crc32c(buf, 32));
	memset(buf, 0xFF, sizeof(buf));
	CHECK(km_crc32c(buf, 32) == 0x62A8AB43u, "ones: 0x%08X", km_crc32c(buf, 32));
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t) i;
	CHECK(km_crc32c(buf, 32) == 0x46DD794Eu, "incrementing: 0x%08X", km_crc32c(buf, 32));
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t) (31 - i);
	CHECK(km_crc32c(buf, 32) == 0x113FDB5Cu, "decrementing: 0x%08X", km_crc32c(buf, 32));
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/*
 * kernel_train(ARRAY[x], y) over (1, 2), (2, 3), (3, 5) with its defaults,
 * written by kernel_ml 0.2.0 (PostgreSQL's CRC-32C): format 1, its header
 * checksum at 140 over bytes 0-139, its payload checksum in the last four
 * bytes over bytes 144 to the end less four.
 */
static const char model_hex[] = 
	"4b4d4c4d01009000d40000000000000007000000030100000300000000000000"
	"000000000300000001000000000200000000000000000000000000000000f03f"
	"000000000000f03f000000000000f03f00000000000000000000000000000000"
	"00000000000000000000000000000000abaaaaaaaaaa0a40a1d7f0aa0f1ee43f"
	"000000000000000000000000b391d49800000000000000403e2c0c70bd20ea3f"
	"2adc508c67b0e4bf1e548472a250c8bfbe33ab07d85eeb3f2e2109148e98f3bf"
	"00000000000000002e2109148e98f33f0ababef7";

void
test_crc_extension_model(void)
{
	uint8_t		buf[sizeof(model_hex) / 2];
	size_t		len = 0;

	for (const char *h = model_hex; h[0] && h[1]; h += 2)
	{
		unsigned	v;

		sscanf(h, "%2x", &v);
		buf[len++] = (uint8_t) v;
	}
	CHECK(len > 148, "%zu bytes", len);
	if (len <= 148)
		return;
	CHECK(le32(buf + 140) == km_crc32c(buf, 140), "header: stored 0x%08X, computed 0x%08X",
		  le32(buf + 140), km_crc32c(buf, 140));
	CHECK(le32(buf + len - 4) == km_crc32c(buf + 144, len - 148),
		  "payload: stored 0x%08X, computed 0x%08X",
		  le32(buf + len - 4), km_crc32c(buf + 144, len - 148));
}
