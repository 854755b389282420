"""The Inspire kind: literature search for open research problems (INSPIRE.md).

An instance is a solution-redacted research brief with a cutoff three calendar
months before its hidden target paper; an agent searches the corpus before the
cutoff and submits at most ten ranked arXiv ids, scored against the target's
graded antecedents (nDCG@10 primary) and, through its own Search traces, along
the exposure -> selection -> ranking funnel.

Subpackages, by the stage each feeds (KINDS.md §9):

* :mod:`.archive` — the files and their invariants, parsed from bytes into
  frozen records with findings (never an exception for bad input);
* :mod:`.scores` — the cleaned list, exposure, the fifteen metrics, gain maps,
  views and the per-cluster sums of the bootstrap;
* :mod:`.search` — the corpus shard of an instance, trace replay against any
  search callable, and the deterministic reference agents;
* :mod:`.sample` — the sample archive built from the committed cs.CL papers.

Nothing here registers the kind; the kinds registry wires it in.
"""
