/* netrig: entry point. Sets up signals and hands over to the command line. */
#include "cli.h"

#include <signal.h>
#include <string.h>

/* The program's one mutable global: raised by SIGINT/SIGTERM, polled by every loop, worker
 * threads included: atomic (lock-free, so a signal handler may store to it), not merely
 * volatile, which would be a data race between the handler's thread and the others. */
static _Atomic int netrig_stop;

static void on_signal(int sig)
{
    (void)sig;
    netrig_stop = 1;
}

int main(int argc, char **argv)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return cli_main(argc, argv, &netrig_stop);
}
