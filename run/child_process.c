/*
 * Processes a run forks: each child dies with the process that forked it.
 *
 * pslab forks at three depths (the runner's child per run, the scheduler's
 * simulations and the real backend's node processes inside it). A child
 * that outlives its parent runs on unseen and holds ports and memory, so
 * every fork is followed, in the child, by run_die_with_parent: the kernel
 * kills the child when its parent exits, however it exits (Linux's
 * PR_SET_PDEATHSIG). The parent may exit between fork() and that call, so
 * the child compares its parent with the one it had before the fork and
 * ends itself if they differ.
 */
#include "run/run.h"

#include <signal.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

void run_die_with_parent(pid_t parent) {
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  if (getppid() != parent) _exit(128 + SIGKILL); /* the parent is gone already */
}
