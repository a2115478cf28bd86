// SPDX-License-Identifier: MIT
/* Hexadecimal digits (hex.h). */
#include "common/hex.h"

int uraid_hex_digits(const char *s, unsigned n)
{
	int v = 0;

	for (unsigned i = 0; i < n; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}
