"""A Gantt chart of an experiment's calls: one row per thread, a bar per call of the outermost
DEPTH levels (exp.intervals), coloured by function; saved as a PNG.

    python3 gantt.py EXPERIMENT_DIR OUT.png [--depth N]
"""

import argparse

import matplotlib

matplotlib.use("Agg")  # a file, no display
import matplotlib.pyplot as plt  # noqa: E402

import parallax  # noqa: E402


def gantt(exp, out, depth=2):
    iv = exp.intervals
    iv = iv[iv["depth"] < depth]
    rows = sorted(set(zip(iv["process"], iv["thread"])))
    row_of = {r: i for i, r in enumerate(rows)}
    labels = {(p, t): lab for p, t, lab in zip(exp.locations["process"], exp.locations["thread"],
                                                exp.locations["label"])}
    names = list(iv["region"].astype(str).unique())
    colours = plt.get_cmap("tab20")
    colour = {n: colours(i % 20) for i, n in enumerate(names)}
    fig, ax = plt.subplots(figsize=(12, 1 + 0.4 * len(rows)))
    for (p, t), calls in iv.groupby(["process", "thread"], observed=True):
        y = row_of[(p, t)]
        for d, level in calls.groupby("depth"):
            h = 0.8 / (1 + d)  # nested calls drawn thinner, on top
            ax.broken_barh(list(zip(level["start_s"], level["duration_s"])), (y - h / 2, h),
                           facecolors=[colour[n] for n in level["region"].astype(str)])
    ax.set_yticks(range(len(rows)), [labels.get(r, f"{r[0]}.{r[1]}") for r in rows])
    ax.set_xlabel("time (s)")
    ax.set_title(f"{exp.path}: calls of depth < {depth}")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n]) for n in names[:20]]
    ax.legend(handles, names[:20], loc="upper left", bbox_to_anchor=(1, 1), fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    return len(iv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment")
    ap.add_argument("out")
    ap.add_argument("--depth", type=int, default=2)
    a = ap.parse_args()
    n = gantt(parallax.open(a.experiment), a.out, a.depth)
    print(f"{a.out}: {n} calls")


if __name__ == "__main__":
    main()
