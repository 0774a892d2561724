// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <net/if.h>
#include "values/iface.h"

/* The kernel's isspace(): ASCII whitespace and Latin-1's no-break space. */
static bool kernel_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

int ifname_check(const char *name, const char **why)
{
	size_t len = strnlen(name, IF_NAMESIZE);
	const char *p;

	*why = NULL;
	if (!len)
		*why = "empty";
	else if (len == IF_NAMESIZE)
		*why = "longer than 15 bytes";
	else if (!strcmp(name, ".") || !strcmp(name, ".."))
		*why = "'.' and '..' name no interface";
	for (p = name; !*why && *p; p++) {
		if (*p == '/' || *p == ':')
			*why = "no interface name has a '/' or ':'";
		else if (kernel_isspace((unsigned char)*p))
			*why = "no interface name has whitespace";
	}
	return *why ? -EINVAL : 0;
}
