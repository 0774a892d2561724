/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_VALUES_LISTEN_H
#define SLUICE_VALUES_LISTEN_H

struct sockaddr_storage;
/* A numeric listen address: "127.0.0.1:9723", "[::1]:9723"; port 0 picks one. */
int parse_listen(const char *s, struct sockaddr_storage *addr, const char **why);

#endif /* SLUICE_VALUES_LISTEN_H */
