"""Ideas scoring (IDEAS.md §5–§6): gates, greedy credit, the eight episode metrics, statistics rows."""
