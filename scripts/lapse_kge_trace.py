#!/usr/bin/env python3
"""Write the access trace of Lapse's knowledge-graph-embedding task.

What the trace holds is the sequence of parameter-server operations of the
KGE application of the Lapse paper (Renz-Wieland et al., PVLDB 13(11),
2020), as its code does them: github.com/alexrenz/AdaPM, branch vldb20,
apps/knowledge_graph_embeddings.cc, RunWorker() and Model::train(), run
with the options of docs/experiments-vldb20.md (neg_ratio 10, 4 threads
per node, read_partitioned_dataset, localize_relations):

- a worker walks its data points (s, r, o); each makes 1 + 2*neg calls of
  train(): (s, r, o), then neg times (s, r, o') and (s', r, o), with o' and
  s' drawn uniformly from all entities (NegativeSampler);
- each train() call pulls the keys of its subject, relation and object,
  waits, computes, and pushes the three updates (async_push 0: it waits for
  the push too). One call is one step of the trace: a read record and a
  write record of the same three keys;
- the training data are partitioned by relation (data clustering): every
  relation is trained by one worker only, here relation r by worker r mod W.

Not from the paper: the heads and tails of the positive triples are drawn
uniformly (DBpedia-500k itself is not at hand; they are 2 of the 22 entity
keys of a data point, the other 20 are the uniform negatives).

Sizes: DBpedia-500k's 490,598 entities and 573 relations (table 0 the
entities, table 1 the relations, keys after the entities). A value is an
embedding plus its AdaGrad state. Lapse stores doubles (ValT = double), so
a value of n doubles is given as 2n floats here to put Lapse's bytes on the
wire (the trace carries no math). Defaults: RESCAL-Large (embed_dim 100):
entities 200 doubles (400 floats), relation matrices 2 x 100 x 100 doubles
(40,000 floats; Lapse splits them into 100 consecutive keys that range
partitioning keeps together, one key here). ComplEx-Small (embed_dim 100):
--relation-floats 400.

The file is the binary form of workloads/TRACE.md, written directly; the
output is a fixed function of the arguments (seed included).

  scripts/lapse_kge_trace.py experiments/specs/data/lapse_rescal.trace
"""
import argparse
import random

ENTITIES, RELATIONS = 490598, 573  # DBpedia-500k (docs/experiments-vldb20.md)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def record(op, clock_delta, keys):
    keys = sorted(keys)
    out = bytearray(varint(op | (clock_delta << 2)))
    out += varint(len(keys))
    prev = 0
    for k in keys:
        out += varint(k - prev)
        prev = k
    return bytes(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--entity-floats", type=int, default=400)
    ap.add_argument("--relation-floats", type=int, default=40000)
    ap.add_argument("--data-points", type=int, default=50, help="per recorded worker")
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--workers-per-node", type=int, default=4)
    ap.add_argument("--neg", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    workers = a.nodes * a.workers_per_node
    rng = random.Random(a.seed)
    out = bytearray(b"PSLTRACE") + bytes([1])
    out += varint(2)
    out += varint(0) + varint(ENTITIES) + varint(a.entity_floats)
    out += varint(ENTITIES) + varint(RELATIONS) + varint(a.relation_floats)
    out += varint(a.nodes) + varint(workers)
    for w in range(workers):
        rels = [ENTITIES + r for r in range(RELATIONS) if r % workers == w]
        body = bytearray()
        first = True
        for _ in range(a.data_points):
            s, o = rng.randrange(ENTITIES), rng.randrange(ENTITIES)
            r = rng.choice(rels)
            calls = [(s, r, o)]
            for _ in range(a.neg):
                calls.append((s, r, rng.randrange(ENTITIES)))
                calls.append((rng.randrange(ENTITIES), r, o))
            for keys in calls:
                body += record(0, 0 if first else 1, keys)  # read: pull s, r, o
                body += record(1, 0, keys)  # write: push s, r, o
                first = False
        out += varint(len(body)) + body
    with open(a.out, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
