/* qdiscprobe: a qdisc kind tried in a scratch network namespace. */
#define _GNU_SOURCE
#include "qdiscprobe.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum { HAS = 0, LACKS = 1, NO_NAMESPACE = 2, FAILED = 3 };

/* In the child: RTM_NEWQDISC kind as root of lo (ifindex 1); the kernel's answer. Only system
 * calls here: the parent may have threads. */
static int try_add(const char *kind)
{
    struct {
        struct nlmsghdr h;
        struct tcmsg t;
        char attrs[64];
    } req;
    struct rtattr *rta = (struct rtattr *)req.attrs;
    size_t klen = strlen(kind) + 1;
    char buf[1024];
    struct nlmsgerr *e;
    ssize_t n;
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

    if (fd < 0 || klen > sizeof(req.attrs) - RTA_LENGTH(0))
        return FAILED;
    memset(&req, 0, sizeof(req));
    rta->rta_type = TCA_KIND;
    rta->rta_len = (unsigned short)RTA_LENGTH(klen);
    memcpy(RTA_DATA(rta), kind, klen);
    req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.t)) + RTA_ALIGN(rta->rta_len);
    req.h.nlmsg_type = RTM_NEWQDISC;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
    req.h.nlmsg_seq = 1;
    req.t.tcm_family = AF_UNSPEC;
    req.t.tcm_ifindex = 1;
    req.t.tcm_handle = 0x10000;
    req.t.tcm_parent = TC_H_ROOT;
    if (send(fd, &req, req.h.nlmsg_len, 0) < 0)
        return FAILED;
    n = recv(fd, buf, sizeof(buf), 0);
    if (n < (ssize_t)NLMSG_LENGTH(sizeof(*e)) ||
        ((struct nlmsghdr *)buf)->nlmsg_type != NLMSG_ERROR)
        return FAILED;
    e = NLMSG_DATA((struct nlmsghdr *)buf);
    if (e->error == 0 || e->error == -EINVAL) /* EINVAL: known, but it wants options */
        return HAS;
    return e->error == -ENOENT || e->error == -EOPNOTSUPP ? LACKS : FAILED;
}

int qdiscprobe_kind(const char *kind, char *why, size_t len)
{
    int status = 0;
    pid_t pid = fork();

    if (pid < 0) {
        snprintf(why, len, "cannot start a process to check: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        alarm(5);
        if (unshare(CLONE_NEWNET) && unshare(CLONE_NEWUSER | CLONE_NEWNET))
            _exit(NO_NAMESPACE);
        _exit(try_add(kind));
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == HAS) {
        snprintf(why, len, "tried in a scratch network namespace: the kernel knows it");
        return 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == LACKS) {
        snprintf(why, len, "tried in a scratch network namespace: the kernel does not know it");
        return 0;
    }
    snprintf(why, len, "%s",
             WIFEXITED(status) && WEXITSTATUS(status) == NO_NAMESPACE
                 ? "no scratch network namespace could be created to try it (needs root or user "
                   "namespaces)"
                 : "trying it in a scratch network namespace failed");
    return -1;
}
