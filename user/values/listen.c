// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "values/listen.h"
#include "values/number.h"

/* "[v6]:port" or "v4:port": the address part, unbracketed, into buf. */
static int listen_split(const char *s, char *buf, size_t len, const char **port, bool *v6)
{
	const char *colon, *start = s, *end;

	*v6 = *s == '[';
	if (*v6) {
		start = s + 1;
		end = strchr(start, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		end = colon;
	}
	if ((size_t)(end - start) >= len)
		return -EINVAL;
	memcpy(buf, start, (size_t)(end - start));
	buf[end - start] = '\0';
	*port = colon + 1;
	return 0;
}

int parse_listen(const char *s, struct sockaddr_storage *addr, const char **why)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
	struct sockaddr_in *in = (struct sockaddr_in *)addr;
	char host[INET6_ADDRSTRLEN];
	const char *port;
	uint64_t p;
	bool v6;

	memset(addr, 0, sizeof(*addr));
	if (listen_split(s, host, sizeof(host), &port, &v6)) {
		*why = "expected ADDR:PORT, e.g. 127.0.0.1:9723 or [::1]:9723";
		return -EINVAL;
	}
	if (parse_digits(&port, &p, why) || *port || p > 65535) {
		*why = "port must be a number from 0 to 65535";
		return -EINVAL;
	}
	if (v6 && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		return 0;
	}
	if (!v6 && inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)p);
		return 0;
	}
	*why = "not a numeric IPv4 address or bracketed IPv6 address";
	return -EINVAL;
}
