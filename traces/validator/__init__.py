"""The validator: does a recorded run conform to the spec? (R-ids as each module cites.)

``validate.py`` merges a run's trace files and checks them partition by partition
(``partition.py``), keeping the set of spec states that explain the events so far
(``candidates.py``) and asking one handler per event kind (``handlers/``) which spec actions
explain the next event; ``mapping.py`` maps a trace's brokers and records onto the spec's,
``wellformed.py`` checks what the spec need not (clocks, causality), ``spark_validate.py``
validates many traces on Spark. It reads the trace format (the parent package) and the spec; the
conformance kit (``traces.conformance``) builds on it."""
