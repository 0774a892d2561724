/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_VALUES_IFACE_H
#define SLUICE_VALUES_IFACE_H

/*
 * 0 when name could name a network interface, as the kernel's
 * dev_valid_name() has it: 1 to 15 bytes, not "." or "..", no '/', ':' or
 * whitespace; else -EINVAL and why not. Names become paths under bpffs, so
 * every command checks its interface name here before touching any path.
 */
int ifname_check(const char *name, const char **why);

#endif /* SLUICE_VALUES_IFACE_H */
