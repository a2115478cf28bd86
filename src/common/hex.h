/* SPDX-License-Identifier: MIT */
/* Hexadecimal digits read from text (GUIDs of a GPT, \u escapes of JSON). */
#ifndef URAID_COMMON_HEX_H
#define URAID_COMMON_HEX_H

/* The value of the n (1..7) hex digits at s, either case; -1 when one of
 * them is not a hex digit (a NUL included: s may end early). */
int uraid_hex_digits(const char *s, unsigned n);

#endif
