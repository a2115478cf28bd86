/* SPDX-License-Identifier: MIT */
/*
 * liburaid: a user-space RAID controller in Linux md's on-disk format.
 * This header pulls in the whole public API; each part can also be included
 * on its own.
 */
#ifndef URAID_URAID_H
#define URAID_URAID_H

#include <uraid/geom.h>
#include <uraid/level.h>
#include <uraid/parity.h>
#include <uraid/superblock.h>
#include <uraid/bitmap.h>
#include <uraid/create.h>
#include <uraid/engine.h>

#endif
