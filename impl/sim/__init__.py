"""Deterministic simulation runtime: seeded scheduler, virtual time, in-memory coordination and
fault injection around the unchanged core (issue 5 item 3)."""
