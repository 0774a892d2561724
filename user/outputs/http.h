/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small HTTP server for read-only pages (GET and HEAD), safe against
 * slow and garbage clients (http.c), that a command routes by path.
 */
#ifndef SLUICE_OUTPUTS_HTTP_H
#define SLUICE_OUTPUTS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* How often the caller runs http_close_late(). */
#define HTTP_TICK_NS (NSEC_PER_SEC / 4)

struct http_reply {
	unsigned int status;
	const char *type; /* Content-Type */
	char *body;
	size_t len;
	bool owned; /* the server frees body */
};

/* What the server answers a clean GET or HEAD of path (still %-escaped). */
typedef void (*http_route)(const char *path, struct http_reply *r);

/* A plain-text reply of a static string. */
void http_text(struct http_reply *r, unsigned int status, const char *text);
/* Is the clean path, %-decoded, exactly want: "/%6detrics" is "/metrics", "/metrics/" not. */
bool http_path_is(const char *path, const char *want);
/*
 * Does the clean path, %-decoded, start with prefix and go on: then its
 * decoded rest, which must fit in len with its NUL, is in rest.
 */
bool http_path_rest(const char *path, const char *prefix, char *rest, size_t len);
/* Bound and listening on ss (port 0: ss gets the port chosen); the fd or -errno. */
int http_listen(struct sockaddr_storage *ss);
/* "192.0.2.1:9723", "[::1]:9723". */
void http_format_addr(const struct sockaddr_storage *ss, char *buf, size_t len);
/* Serves route on the listening fd, in threads of its own; NULL on failure. */
struct MHD_Daemon *http_start(int fd, http_route route);
/* Shuts down connections whose request is not whole by their deadline; returns how many. */
int http_close_late(void);

#endif /* SLUICE_OUTPUTS_HTTP_H */
