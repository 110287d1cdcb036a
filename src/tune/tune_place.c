/* tune_place: which network namespace and host a tune journal belongs to, and the line that
 * says so. */
#include "tune_place.h"

#include <stdio.h>
#include <string.h>

void tune_place_text(const struct hostwr_place *p, char *buf, size_t len)
{
    char ino[32] = "inode unknown";

    if (p->netns_inode)
        snprintf(ino, sizeof(ino), "inode %llu", p->netns_inode);
    snprintf(buf, len, "network namespace %s%s(%s) on host %s", p->netns_name,
             p->netns_name[0] ? " " : "", ino, p->host[0] ? p->host : "(unknown)");
}

static bool differ(const char *a, const char *b) { return *a && *b && strcmp(a, b); }

int tune_place_here(const struct tune_journal *j, const struct hostwr_place *here, int here_child,
                    char *why, size_t len)
{
    const struct hostwr_place *p = &j->place;
    char a[192], b[192];
    const char *what = NULL;

    if (!j->place_known) {
        if (!strcmp(j->netns, "host") && here_child == 0)
            return 1;
        snprintf(why, len,
                 "journal '%s' names no network namespace (an older netrig wrote it, in a%s "
                 "namespace): it is left alone; revert it by naming it (netrig tune --revert "
                 "FILE) where it was applied",
                 j->path, !strcmp(j->netns, "child") ? " child" : "nother");
        return 0;
    }
    if (differ(p->machine_id, here->machine_id) || differ(p->host, here->host))
        what = "on another host";
    else if (p->netns_inode != here->netns_inode || differ(p->netns_name, here->netns_name))
        what = "in another network namespace";
    else if (strcmp(j->netns, "host") && differ(p->boot_id, here->boot_id))
        what = "in a network namespace of an earlier boot (it is gone)";
    if (!what)
        return 1;
    tune_place_text(p, a, sizeof(a));
    tune_place_text(here, b, sizeof(b));
    snprintf(why, len, "journal '%s' was applied %s (%s; this is %s)", j->path, what, a, b);
    return 0;
}
