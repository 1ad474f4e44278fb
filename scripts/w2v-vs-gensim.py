#!/usr/bin/python3
"""pslab's w2v against Debian's gensim, on the same tokens, scored on the same pairs.

    /usr/bin/python3 scripts/w2v-vs-gensim.py [--epochs 3] [--seeds 1,2,3] [--out DIR]

Needs Debian's python3-gensim (apt-get install python3-gensim; it brings numpy
and scipy) and wordnet-base, and a built pslab (build/pslab). Not a test:
gensim is no dependency of pslab's.

The corpus is WordNet's glosses (the text after " | " of every synset line of
data.noun, data.verb, data.adj and data.adv, in that order, one sentence each,
as pslab's "wordnet:glosses" reads them), tokenized as pslab tokenizes (runs of
bytes that are not ASCII whitespace, controls or punctuation, ASCII
lower-cased) and written one sentence a line to DIR/corpus.txt, which both
trainers read: pslab as its `corpus`, gensim as lists of those tokens. Both drop
words seen fewer than min_count times before windows are taken. --sentences N
keeps the first N glosses (a small run first). --shuffle S puts the glosses in
a random order (Python's random, seeded with S) before both read them: the
corpus's own order is by part of speech, nouns first, which a single trainer
walks one part after another and several workers, each on its own share of
the corpus, side by side.

The same hyper-parameters: dim, window (each center's reduced window uniform
in [1, window], counted in kept tokens), negatives from count^0.75,
subsampling threshold, epochs, min_count, initial lr decaying linearly to
lr * 1e-4 over the run, and word2vec.c's initialisation range, input vectors
uniform in [-0.5/dim, 0.5/dim) (gensim's own is twice as wide: its vectors
are halved after build_vocab), output vectors 0. pslab runs on the simulator,
one node and one worker unless --nodes/--workers say otherwise, with `batch`
tokens a step (a minibatch: a step's gradients are taken at the values it
pulled), and saves its vectors with --save-params.

Scoring: pslab's own metric, Spearman's rho (ties get their mean rank)
between the cosine of two words' input vectors and the pair's score, on the
pairs pslab drew from WordNet ("wordnet:synonyms", written by --save-params
as similarity.tsv). Both models' vectors go through word2vec's text format
and gensim's KeyedVectors.load_word2vec_format; the script checks that
pslab's vectors scored this way give the rho pslab reported, to 4 digits.

With several workers (--nodes, --workers) the rho pslab reports is worker
0's evaluation at the end of its own last epoch, while others may still
train: the comparison then uses the saved (final) vectors' rho, "rescored".

Prints one line per seed and the medians; writes DIR/results.jsonl.
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

import numpy as np
from scipy.stats import spearmanr
from gensim.models import Word2Vec
from gensim.models.keyedvectors import KeyedVectors

SEPARATORS = re.compile(rb"[\x00-\x20\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")


def glosses(wordnet_dir, limit):
    """pslab's "wordnet:glosses": token lists, one per gloss with a token."""
    out = []
    for part in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(wordnet_dir, "data." + part), "rb") as f:
            for line in f:
                if not line[:1].isdigit():
                    continue  # the license header
                at = line.find(b" | ")
                if at < 0:
                    continue
                text = line[at + 3:].rstrip(b"\n")
                words = [w.lower().decode("utf-8", "surrogateescape")
                         for w in SEPARATORS.split(text) if w]
                if words:
                    out.append(words)
                    if limit and len(out) == limit:
                        return out
    return out


def cosine_rho(kv, pairs):
    """pslab's quality: Spearman's rho of the pairs' cosines against their scores."""
    x, y = [], []
    for a, b, score in pairs:
        if a in kv.key_to_index and b in kv.key_to_index:
            va, vb = kv[a].astype(np.float64), kv[b].astype(np.float64)
            aa, bb = va.dot(va), vb.dot(vb)
            x.append(va.dot(vb) / np.sqrt(aa * bb) if aa > 0 and bb > 0 else 0.0)
        else:
            x.append(0.0)
        y.append(score)
    return float(spearmanr(x, y).correlation)


def read_pairs(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return [(a, b, float(s)) for a, b, s in (line.rstrip("\n").split("\t") for line in f)]


def run_pslab(args, seed, corpus, work):
    spec = {
        "name": "w2v_vs_gensim", "backend": "sim", "seed": seed,
        "cluster": {"nodes": args.nodes, "workers_per_node": args.workers,
                    "host_speed": "10Gf",
                    "network": {"bandwidth": "10Gbps", "latency": "50us"}},
        "workload": {"type": "w2v", "corpus": corpus, "similarity": "wordnet:synonyms",
                     "dim": args.dim, "window": args.window, "neg": args.neg,
                     "batch": args.batch, "subsample": args.subsample, "lr": args.lr,
                     "epochs": args.epochs, "min_count": args.min_count},
        "policy": {"type": "static"},
    }
    spec_path = os.path.join(work, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    params = os.path.join(work, "params")
    start = time.time()
    subprocess.run(["nice", "-n", "19", args.pslab, "run", spec_path, "--out",
                    os.path.join(work, "results"), "--save-params", params, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.time() - start
    with open(os.path.join(work, "results", "runs.jsonl")) as f:
        quality = json.loads(f.readline())["metrics"]["quality"]
    return quality, params, wall


def run_gensim(args, seed, sentences, work):
    model = Word2Vec(vector_size=args.dim, window=args.window, negative=args.neg, hs=0,
                     sg=1, sample=args.subsample, min_count=args.min_count,
                     alpha=args.lr, min_alpha=args.lr * 1e-4, ns_exponent=0.75,
                     seed=seed, workers=1)
    model.build_vocab(sentences)
    model.wv.vectors *= 0.5  # word2vec.c's range, [-0.5/dim, 0.5/dim)
    start = time.time()
    model.train(sentences, total_examples=len(sentences), epochs=args.epochs)
    wall = time.time() - start
    path = os.path.join(work, "gensim_vectors.txt")
    model.wv.save_word2vec_format(path)
    return path, wall


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pslab", default="build/pslab")
    p.add_argument("--out", default="w2v-vs-gensim")
    p.add_argument("--wordnet-dir", default="/usr/share/wordnet")
    p.add_argument("--sentences", type=int, default=0, help="the first N glosses (0: all)")
    p.add_argument("--shuffle", type=int, default=0,
                   help="the glosses in a random order of this seed (0: WordNet's order)")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--window", type=int, default=5)
    p.add_argument("--neg", type=int, default=5)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--subsample", type=float, default=1e-4)
    p.add_argument("--lr", type=float, default=0.025)
    p.add_argument("--min-count", type=int, default=5)
    args = p.parse_args()
    args.pslab = os.path.abspath(args.pslab)
    os.makedirs(args.out, exist_ok=True)
    sentences = glosses(args.wordnet_dir, args.sentences)
    if args.shuffle:
        random.Random(args.shuffle).shuffle(sentences)
    corpus = os.path.abspath(os.path.join(args.out, "corpus.txt"))
    with open(corpus, "w", encoding="utf-8", errors="surrogateescape") as f:
        for s in sentences:
            f.write(" ".join(s) + "\n")
    print("corpus: %d sentences, %d tokens" % (len(sentences), sum(map(len, sentences))))
    rows = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        work = os.path.join(args.out, "seed%d" % seed)
        os.makedirs(work, exist_ok=True)
        reported, params, p_wall = run_pslab(args, seed, corpus, work)
        pairs = read_pairs(os.path.join(params, "similarity.tsv"))
        ours = KeyedVectors.load_word2vec_format(os.path.join(params, "vectors.txt"))
        rescored = cosine_rho(ours, pairs)
        # With one worker its last evaluation sees the final model; with
        # several, worker 0 evaluates when its own last epoch ends, while the
        # others may still train: the saved vectors are the final model.
        if args.nodes * args.workers == 1 and abs(rescored - reported) > 5e-5:
            sys.exit("seed %d: pslab reported rho %.6f, its saved vectors give %.6f"
                     % (seed, reported, rescored))
        g_path, g_wall = run_gensim(args, seed, sentences, work)
        theirs = KeyedVectors.load_word2vec_format(g_path)
        if set(theirs.key_to_index) != set(ours.key_to_index):
            sys.exit("seed %d: the vocabularies differ (%d words against %d)"
                     % (seed, len(ours.key_to_index), len(theirs.key_to_index)))
        row = {"seed": seed, "epochs": args.epochs, "nodes": args.nodes,
               "workers": args.workers, "words": len(ours.key_to_index), "pairs": len(pairs),
               "pslab_rho": reported, "pslab_rho_rescored": rescored,
               "gensim_rho": cosine_rho(theirs, pairs), "pslab_wall_s": p_wall,
               "gensim_wall_s": g_wall}
        rows.append(row)
        print("seed %d: pslab %.4f (rescored %.4f), gensim %.4f, ratio %.3f; %d words, "
              "%d pairs" % (seed, reported, rescored, row["gensim_rho"],
                            rescored / row["gensim_rho"], row["words"], row["pairs"]),
              flush=True)
    with open(os.path.join(args.out, "results.jsonl"), "a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    mp = statistics.median(r["pslab_rho_rescored"] for r in rows)
    mg = statistics.median(r["gensim_rho"] for r in rows)
    print("median over %d seeds after %d epochs (pslab on %d x %d): pslab %.4f, gensim %.4f, "
          "pslab/gensim %.3f" % (len(rows), args.epochs, args.nodes, args.workers, mp, mg,
                                 mp / mg))


if __name__ == "__main__":
    main()
