/* SPDX-License-Identifier: MIT */
/* uraid's version, for --version and reports; the build may pass -DURAID_VERSION. */
#ifndef URAID_CLI_VERSION_H
#define URAID_CLI_VERSION_H

#ifndef URAID_VERSION
#define URAID_VERSION "0.1.0"
#endif

#endif
