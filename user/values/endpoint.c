// SPDX-License-Identifier: GPL-2.0
/* HOST:PORT lists (endpoint.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "values/endpoint.h"

static int port_parse(const char *s, uint16_t *port)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* One HOST:PORT or [HOST]:PORT of len bytes. */
int parse_endpoint(const char *s, size_t len, struct endpoint *node)
{
	char buf[ENDPOINT_HOST_MAX + 16];
	char *colon, *host = buf;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	colon = strrchr(buf, ':');
	if (!colon || colon == buf)
		return -EINVAL;
	*colon = '\0';
	if (buf[0] == '[') {
		if (colon[-1] != ']' || colon - buf < 3)
			return -EINVAL;
		colon[-1] = '\0';
		host++;
	} else if (strchr(buf, ':')) {
		return -EINVAL; /* an IPv6 host needs its brackets */
	}
	if (!*host || strlen(host) >= sizeof(node->host) ||
	    strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") !=
		    strlen(host))
		return -EINVAL;
	memcpy(node->host, host, strlen(host) + 1);
	return port_parse(colon + 1, &node->port);
}

int parse_endpoints(const char *list, struct endpoint *nodes, int max, const char **why)
{
	const char *p = list;
	int n = 0;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (n == max) {
			*why = "too many addresses";
			return -EINVAL;
		}
		if (parse_endpoint(p, len, &nodes[n])) {
			*why = "expected HOST:PORT[,HOST:PORT...] ([HOST]:PORT for IPv6), port 1-65535";
			return -EINVAL;
		}
		n++;
		if (!p[len])
			return n;
		p += len + 1;
	}
}
