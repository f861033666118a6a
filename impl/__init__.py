"""Reference implementation of the ISR replication protocol (issue 5).

`impl.core` is the sans-I/O protocol core; `impl.storage` the durable log; `impl.sim` the
deterministic simulation runtime; `impl.cluster` the real multi-process runtime over TCP + ZooKeeper.
`impl` never imports `spec/` or `checker/`: it meets the spec only through traces.
"""
