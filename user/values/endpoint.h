/* SPDX-License-Identifier: GPL-2.0 */
/* HOST:PORT lists (the agent's --redis): strict, with clear errors. */
#ifndef SLUICE_VALUES_ENDPOINT_H
#define SLUICE_VALUES_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>

#define ENDPOINT_HOST_MAX 256
#define ENDPOINTS_MAX	  64

struct endpoint {
	char host[ENDPOINT_HOST_MAX]; /* a name or an address, IPv6 without its brackets */
	uint16_t port;
};

/* One HOST:PORT or [IPV6]:PORT of len bytes: 0 or -EINVAL. */
int parse_endpoint(const char *s, size_t len, struct endpoint *e);
/* HOST:PORT[,HOST:PORT...]: how many, or -EINVAL with *why. */
int parse_endpoints(const char *list, struct endpoint *out, int max, const char **why);

#endif /* SLUICE_VALUES_ENDPOINT_H */
