// SPDX-License-Identifier: MIT
/*
 * mdadm's placement policy for new members (reference/md-format.md §1.10,
 * §1.11, §2.1): bitmap reserve, default data offset. Following it keeps the
 * arrays uraid creates indistinguishable from mdadm's.
 */
#include <uraid/create.h>

#define GIB_SECTORS (2ull * 1024 * 1024)

uint64_t uraid_choose_bm_space(uint64_t dev_sectors)
{
	if (dev_sectors < 64 * 2)
		return 0;
	if (dev_sectors - 64 * 2 >= 200 * GIB_SECTORS)
		return 128 * 2;
	if (dev_sectors - 4 * 2 > 8 * GIB_SECTORS)
		return 64 * 2;
	return 4 * 2;
}

/*
 * Metadata at the start (1.1, 1.2): 12 KiB for superblock and slack, the
 * bitmap reserve, and "headroom" for later reshapes, which starts at 128 MiB
 * and halves on small devices (never below four chunks), rounded up to 1 MiB.
 */
uint64_t uraid_default_data_offset(uint64_t dev_sectors, uint32_t chunk_sectors)
{
	return uraid_default_data_offset_space(dev_sectors, chunk_sectors,
					       uraid_choose_bm_space(dev_sectors));
}

uint64_t uraid_default_data_offset_space(uint64_t dev_sectors, uint32_t chunk_sectors,
					 uint64_t meta_space)
{
	uint64_t headroom = 128 * 1024 * 2;

	while ((headroom << 10) > dev_sectors &&
	       (chunk_sectors == 0 || headroom / 2 >= 2ull * chunk_sectors))
		headroom >>= 1;
	uint64_t off = 12 * 2 + meta_space + headroom;
	return (off + 2047) / 2048 * 2048;
}
