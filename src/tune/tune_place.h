/* tune_place: where a tune journal was applied (its header's "place": the network namespace's
 * inode and name, the host, the boot) against where netrig runs now. --revert, --list,
 * --confirm and the confirm watchdog act only on journals of this place, so a state directory
 * shared by several network namespaces (every `ip netns exec` on a host uses the default one)
 * never carries one namespace's values into another. */
#ifndef NETRIG_TUNE_PLACE_H
#define NETRIG_TUNE_PLACE_H

#include "tune_journal.h"

/* Whether j was written here (the network namespace, host and, for a child namespace, boot of
 * `here`): 1 yes, 0 no (why: one line naming both places), -1 j names no place (an older
 * netrig): then 1 only when j's coarse "netns" is "host" and here is the host's namespace
 * (here_child 0), else 0. */
int tune_place_here(const struct tune_journal *j, const struct hostwr_place *here, int here_child,
                    char *why, size_t len);
/* "network namespace wA (inode 4026532301) on host h1", for messages. */
void tune_place_text(const struct hostwr_place *p, char *buf, size_t len);

#endif
