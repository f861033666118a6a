"""Durable log: segment files with an offset index, a CRC per record batch, and atomically written
HW and leader-epoch checkpoints (issue 5 item 2)."""
