/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_BASE_VERSION_H
#define SLUICE_BASE_VERSION_H

/* The Makefile may set it from git; this is the release it says otherwise. */
#ifndef SLUICE_VERSION
#define SLUICE_VERSION "0.1.0"
#endif

#endif /* SLUICE_BASE_VERSION_H */
