"""Symbolic checks with z3: the core ISR actions for a fixed replica count and logs and epochs of
any length (encoding), a strengthened safety invariant and its inductiveness check with
counterexamples to induction (induction), and bounded model checking (bmc). Pure: no I/O."""
