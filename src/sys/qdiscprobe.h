/* qdiscprobe: does this kernel have a queueing discipline (fq_codel, cake, fq)? Asked the only
 * way that tells for sure: a child process adds one as the root qdisc of the loopback device of
 * a new, empty network namespace of its own (rtnetlink), which vanishes with it — the host's
 * own qdiscs and namespaces are never touched. Unprivileged, the child tries a user namespace
 * too. */
#ifndef NETRIG_QDISCPROBE_H
#define NETRIG_QDISCPROBE_H

#include <stddef.h>

/* 1 when the kernel has qdisc `kind`, 0 when it does not, -1 when it could not be checked
 * (why: one line, e.g. no namespace could be created). */
int qdiscprobe_kind(const char *kind, char *why, size_t len);

#endif
