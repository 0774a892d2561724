/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capabilities a command needs, checked against the effective set
 * (capget(2)) rather than the uid: root without them fails in the kernel
 * anyway, and anyone given them (ambient capabilities, a unit's
 * AmbientCapabilities=) may run the command.
 */
#ifndef SLUICE_BASE_CAPS_H
#define SLUICE_BASE_CAPS_H

#include <stdint.h>
#include <linux/capability.h>

/* One bit per capability number, as in the kernel's sets. */
#define CAP_BIT(cap) (1ULL << (cap))

/* The effective capabilities of this process; 0 when capget fails. */
uint64_t caps_effective(void);
/*
 * 0 when every capability in need is effective, else one line naming those
 * missing ("needs CAP_BPF and CAP_NET_ADMIN, missing CAP_BPF") and
 * EXIT_FAILURE_RUNTIME.
 */
int require_caps(const char *cmd, uint64_t need);
/* "CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN" for a set, "" for none. */
void caps_format(char *buf, size_t len, uint64_t caps);

#endif /* SLUICE_BASE_CAPS_H */
