"""The Ideas kind (IDEAS.md): idea forecasting, scored from the archived evaluator files.

In an episode (topic, monthly cutoff) a model proposes at most five ranked
ideas from the topic's papers dated before the cutoff; an evaluator retrieves
each idea's ten nearest future papers of the topic and judges them; rapgen
re-derives gates, greedy credits and the metrics (Hit@5 primary) from the
files, with topic-clustered intervals.

- :mod:`~rapgen.kinds.ideas.archive` — the files and their invariants;
- :mod:`~rapgen.kinds.ideas.scores` — gates, credit, metrics, statistics rows;
- :mod:`~rapgen.kinds.ideas.kit` — the evaluator (retrieval, judges, cache);
- :mod:`~rapgen.kinds.ideas.sample` — the sample archive built from the committed cs.CL papers, and a
  synthetic archive at the benchmark's size or a small one (``synth``).

The kind is not registered yet: its ``KIND`` comes with the kinds contract.
"""
