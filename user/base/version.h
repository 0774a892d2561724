/* SPDX-License-Identifier: GPL-2.0 */
/* The version sluice reports (--version, sluice_build_info); the build may set it. */
#ifndef SLUICE_BASE_VERSION_H
#define SLUICE_BASE_VERSION_H

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "0.1.0"
#endif

#endif /* SLUICE_BASE_VERSION_H */
