"""Real runtime: one OS process per broker over TCP on loopback, ZooKeeper (Debian's package,
started by us on loopback) through kazoo for registration, controller election and versioned
partition state (issue 5 item 3, R18)."""
