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

static int queue_push(sim_cores *m, sim_thread *t) {
  if (m->count == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 16;
    sim_thread **heap = realloc(m->heap, cap * sizeof *heap);
    if (!heap) return -1;
    m->heap = heap;
    m->cap = cap;
  }
  size_t i = m->count++;
  while (i > 0 && before(t, m->heap[(i - 1) / 2])) {
    m->heap[i] = m->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  m->heap[i] = t;
  return 0;
}

static sim_thread *queue_pop(sim_cores *m) {
  sim_thread *top = m->heap[0], *last = m->heap[--m->count];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= m->count) break;
    if (c + 1 < m->count && before(m->heap[c + 1], m->heap[c])) c++;
    if (!before(m->heap[c], last)) break;
    m->heap[i] = m->heap[c];
    i = c;
  }
  if (m->count) m->heap[i] = last;
  return top;
}

/* t gets a core of its machine: a free one, or its turn in the queue. */
static void take_core(const sim_state *run, sim_thread *t) {
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
    sg_sem_acquire(t->turn); /* the thread that gave its core up passed it on */
  }
  double least = t->vruntime;
  if (m->count && m->heap[0]->vruntime < least) least = m->heap[0]->vruntime;
  if (least > m->min_vruntime) m->min_vruntime = least;
  t->holding = true;
  t->slice_used = 0;
  t->turns++;
  t->wait_s += simgrid_get_clock() - asked;
}

/* t gives its core up: to the first thread in the queue, else it is free. */
static void give_core(const sim_state *run, sim_thread *t) {
  sim_cores *m = &run->cores[t->machine];
  t->holding = false;
  if (m->count) sg_sem_release(queue_pop(m)->turn);
  else m->free++;
}

void sim_cpu_run(const sim_state *run, sim_thread *t, uint32_t machine, double seconds) {
  t->machine = machine;
  if (!t->holding) take_core(run, t);
  sim_cores *m = &run->cores[machine];
  while (seconds > 0) {
    double chunk = fmin(seconds, run->slice - t->slice_used);
    if (chunk < SIM_SLICE_EPS) chunk = seconds;
    run->executing[machine]++;
    sg_actor_execute(chunk * run->core_speed);
    run->executing[machine]--;
    t->vruntime += chunk;
    t->ran_s += chunk;
    t->slice_used += chunk;
    seconds -= chunk;
    if (t->slice_used < run->slice - SIM_SLICE_EPS) continue;
    if (m->count) { /* its slice is over and another waits: its turn again */
      give_core(run, t);
      take_core(run, t);
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
  for (uint32_t i = 0; i < machines; i++) run->cores[i].free = run->machine_cores;
  run->n_cores = machines;
  return 0;
}

void sim_cores_free(sim_state *run) {
  for (uint32_t i = 0; run->cores && i < run->n_cores; i++) free(run->cores[i].heap);
  free(run->cores);
  run->cores = NULL;
}
