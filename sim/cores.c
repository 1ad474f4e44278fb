/*
 * A machine's cores as the operating system hands them to the threads of
 * the nodes placed on it (cluster.machines, scheduler "run_queue").
 *
 * Every actor that works on a core is a thread (sim_thread, in its outbox):
 * a worker, a server (the node's reading thread), an I/O actor, a timer. A
 * thread that wants a core takes a free one, or waits in the machine's run
 * queue. Once it has a core it keeps it from one execution to the next, as
 * a real thread runs on until it blocks: it gives the core up when it is
 * about to wait for something (sim_cpu_block, called before each wait of a
 * working actor), or when it has run a whole slice while another thread
 * waits, and then queues again. It runs at a full core's speed: a burst is
 * never stretched by sharing, it waits its turn instead (what the real
 * threads' schedstat shows: short bursts, and waits in the run queue).
 *
 * Each thread counts its turns on a core, the seconds it ran and those it
 * waited in the queue: the node's report (io_sched, worker_sched) compares
 * them with the real threads' schedstat.
 *
 * The queue serves the thread that has run least first, as a fair scheduler
 * does: each thread's virtual run time is the CPU seconds it ran, and a
 * thread that comes back from sleeping is placed no more than one slice
 * behind the least virtual run time of its machine (so a long sleep is not
 * a long claim). Threads that do little (I/O threads, readers) so run before
 * the workers that compute, and among equals the first come is served
 * first, so a run repeats for a seed.
 *
 * Wake-up preemption (cluster.machines.preempt, off unless a spec sets it):
 * a thread that wakes to find every core held waits what the kernel makes
 * a woken thread wait (the machine's preempt_wait, plus preempt_per_thread
 * for each thread per core past the first), then takes the core of a
 * thread that executes and has run more than it. That thread's actor is
 * suspended, its execution with it, and queued; the core it is next given
 * resumes it. Exact: nothing polls for the due time.
 *
 * With the "shared" scheduler none of this is used: executions share the
 * host's cores as SimGrid shares them (run.c's sim_execute).
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/semaphore.h>

/* A chunk shorter than this ends the slice (rounding of slice arithmetic). */
#define SIM_SLICE_EPS 1e-12

bool sim_run_queue(const sim_state *run) { return run->cores != NULL; }

static bool before(const sim_thread *a, const sim_thread *b) {
  return a->vruntime < b->vruntime || (a->vruntime == b->vruntime && a->seq < b->seq);
}

/* The heap keeps each thread's place in it (heap_at), so that a thread
 * that stops waiting (it preempts a running one) can leave it. */
static void heap_put(sim_cores *m, size_t i, sim_thread *t) {
  m->heap[i] = t;
  t->heap_at = i;
}

static void sift_up(sim_cores *m, size_t i, sim_thread *t) {
  while (i > 0 && before(t, m->heap[(i - 1) / 2])) {
    heap_put(m, i, m->heap[(i - 1) / 2]);
    i = (i - 1) / 2;
  }
  heap_put(m, i, t);
}

static void sift_down(sim_cores *m, size_t i, sim_thread *t) {
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= m->count) break;
    if (c + 1 < m->count && before(m->heap[c + 1], m->heap[c])) c++;
    if (!before(m->heap[c], t)) break;
    heap_put(m, i, m->heap[c]);
    i = c;
  }
  heap_put(m, i, t);
}

static int queue_push(sim_cores *m, sim_thread *t) {
  if (m->count == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 16;
    sim_thread **heap = realloc(m->heap, cap * sizeof *heap);
    if (!heap) return -1;
    m->heap = heap;
    m->cap = cap;
  }
  sift_up(m, m->count++, t);
  return 0;
}

/* Takes t out of the queue, wherever it is in it. */
static void queue_remove(sim_cores *m, sim_thread *t) {
  size_t i = t->heap_at;
  sim_thread *last = m->heap[--m->count];
  t->heap_at = SIZE_MAX;
  if (last == t) return;
  if (i > 0 && before(last, m->heap[(i - 1) / 2])) sift_up(m, i, last);
  else sift_down(m, i, last);
}

static sim_thread *queue_pop(sim_cores *m) {
  sim_thread *top = m->heap[0];
  queue_remove(m, top);
  return top;
}

static void running_add(sim_cores *m, sim_thread *t) { m->running[m->n_running++] = t; }

static void running_remove(sim_cores *m, sim_thread *t) {
  for (uint32_t i = 0; i < m->n_running; i++)
    if (m->running[i] == t) {
      m->running[i] = m->running[--m->n_running];
      return;
    }
}

/* t's turn on a core begins (its wait in the queue, if any, ends). */
static void turn_begins(sim_cores *m, sim_thread *t, double asked) {
  double least = t->vruntime;
  if (m->count && m->heap[0]->vruntime < least) least = m->heap[0]->vruntime;
  if (least > m->min_vruntime) m->min_vruntime = least;
  t->holding = true;
  t->slice_used = 0;
  t->turns++;
  t->wait_s += simgrid_get_clock() - asked;
  running_add(m, t);
}

/* The running thread a woken thread t preempts: one that executes now and
 * has run more than t (a fair scheduler preempts for a thread that is
 * behind), the one that has run most (then the latest queued); or NULL. */
static sim_thread *victim(const sim_cores *m, const sim_thread *t) {
  sim_thread *v = NULL;
  double now = simgrid_get_clock(), most = 0;
  for (uint32_t i = 0; i < m->n_running; i++) {
    sim_thread *r = m->running[i];
    if (!r->executing) continue;
    double ran = r->vruntime + (now - r->exec_since); /* its execution so far included */
    if (!(ran > t->vruntime)) continue;
    if (!v || ran > most || (ran == most && r->seq > v->seq)) {
      v = r;
      most = ran;
    }
  }
  return v;
}

/* The time v ran of its execution so far counts now (its vruntime places
 * it in the queue). */
static void credit_run(sim_thread *v) {
  double part = simgrid_get_clock() - v->exec_since;
  v->vruntime += part;
  v->ran_s += part;
  v->slice_used += part;
  v->credited += part;
}

/* A woken thread t, queued: it waits for a core to be given up, or, once
 * it has waited as long as the kernel lets a woken thread wait beside the
 * threads per core that run or wait there, it takes the core of a thread
 * that computes, which is suspended (its execution with it) and queued
 * until a core is given up to it. */
static void wait_or_preempt(const sim_state *run, sim_cores *m, sim_thread *t) {
  double per_core = (double)(m->n_running + m->count - 1) / run->machine_cores;
  double wait = run->preempt_wait_s + run->preempt_per_thread_s * fmax(0, per_core - 1);
  if (sg_sem_acquire_timeout(t->turn, wait) == 0) return; /* given a core meanwhile */
  sim_thread *v = t->heap_at == SIZE_MAX ? NULL : victim(m, t);
  if (!v) { /* popped as the wait ended, or nobody to preempt: wait on */
    sg_sem_acquire(t->turn);
    return;
  }
  queue_remove(m, t);
  running_remove(m, v);
  credit_run(v);
  v->holding = false;
  v->preempted = true;
  v->queued_at = simgrid_get_clock();
  v->seq = m->seq++;
  if (queue_push(m, v) != 0) abort(); /* out of memory mid-simulation */
  sg_actor_suspend(v->actor);
}

/* t gets a core of its machine: a free one, or its turn in the queue (a
 * thread that wakes may preempt, above). */
static void take_core(const sim_state *run, sim_thread *t, bool woken) {
  sim_cores *m = &run->cores[t->machine];
  double asked = simgrid_get_clock();
  double floor = m->min_vruntime - run->slice;
  if (t->vruntime < floor) t->vruntime = floor;
  if (m->free > 0 && m->count == 0) {
    m->free--;
  } else {
    if (!t->turn) t->turn = sg_sem_init(0);
    t->seq = m->seq++;
    if (queue_push(m, t) != 0) abort(); /* out of memory mid-simulation */
    if (woken && run->preempt) wait_or_preempt(run, m, t);
    else sg_sem_acquire(t->turn); /* the thread that gave its core up passed it on */
  }
  turn_begins(m, t, asked);
}

/* t gives its core up: to the first thread in the queue (a preempted one
 * is resumed), else it is free. */
static void give_core(const sim_state *run, sim_thread *t) {
  sim_cores *m = &run->cores[t->machine];
  t->holding = false;
  running_remove(m, t);
  if (!m->count) {
    m->free++;
    return;
  }
  sim_thread *next = queue_pop(m);
  if (!next->preempted) {
    sg_sem_release(next->turn);
    return;
  }
  next->preempted = false;
  turn_begins(m, next, next->queued_at);
  next->exec_since = simgrid_get_clock();
  sg_actor_resume(next->actor);
}

void sim_cpu_run(const sim_state *run, sim_thread *t, uint32_t machine, double seconds) {
  t->machine = machine;
  if (!t->holding) take_core(run, t, true);
  sim_cores *m = &run->cores[machine];
  while (seconds > 0) {
    double chunk = fmin(seconds, run->slice - t->slice_used);
    if (chunk < SIM_SLICE_EPS) chunk = seconds;
    t->actor = sg_actor_self();
    t->executing = true;
    t->exec_since = simgrid_get_clock();
    t->credited = 0;
    sg_actor_execute(chunk * run->core_speed); /* preempted: suspended meanwhile */
    t->executing = false;
    /* Preempted as its execution ended (SimGrid lets an actor whose
     * execution is over run on though suspended): it waits for its turn. */
    while (t->preempted) sg_actor_suspend(sg_actor_self());
    double rest = chunk - t->credited; /* what a preemption did not count yet */
    t->vruntime += rest;
    t->ran_s += rest;
    t->slice_used += rest;
    seconds -= chunk;
    if (t->slice_used < run->slice - SIM_SLICE_EPS) continue;
    if (m->count) { /* its slice is over and another waits: its turn again */
      give_core(run, t);
      take_core(run, t, false);
    } else {
      t->slice_used = 0;
    }
  }
}

void sim_cpu_block(const sim_state *run, sim_thread *t) {
  if (t && t->holding && sim_run_queue(run)) give_core(run, t);
}

void sim_cpu_block_wait(const sim_state *run, sim_thread *t, const bool *waiting,
                        sg_cond_t cond, sg_mutex_t mutex, double timeout_s) {
  sim_cpu_block(run, t); /* may yield: a notifier may have come meanwhile */
  if (!*waiting) return;
  if (isinf(timeout_s)) sg_cond_wait(cond, mutex);
  else sg_cond_wait_for(cond, mutex, timeout_s);
}

sim_thread *sim_self_thread(void) {
  sim_outbox *out = sg_actor_self_get_data();
  return out->as ? out->as : &out->thread;
}

void sim_cpu_block_self(const sim_state *run) {
  if (sim_run_queue(run)) sim_cpu_block(run, sim_self_thread());
}

int sim_cores_init(sim_state *run, uint32_t machines) {
  run->cores = calloc(machines, sizeof *run->cores);
  if (!run->cores) return -1;
  run->n_cores = machines; /* sim_cores_free frees what was made */
  for (uint32_t i = 0; i < machines; i++) {
    run->cores[i].free = run->machine_cores;
    run->cores[i].running = calloc(run->machine_cores, sizeof *run->cores[i].running);
    if (!run->cores[i].running) return -1;
  }
  return 0;
}

void sim_cores_free(sim_state *run) {
  for (uint32_t i = 0; run->cores && i < run->n_cores; i++) {
    free(run->cores[i].heap);
    free(run->cores[i].running);
  }
  free(run->cores);
  run->cores = NULL;
}
