"""Model-checking engines over the model protocol of :mod:`checker.model`. Knows nothing of Kafka."""
