

@pytest.mark.slow
def test_kafka_15665_shortest_counterexample():
    """The search finds it in 8 steps (43,214 states): the follower's controlled shutdown takes
    it out of the ISR (into the ELR), the operator moves the partition to [1, 2], the spare
    catches up, and its AlterPartition completes the reassignment with ISR [2]; the ELR keeps
    broker 0, a removed replica."""
    bug = kraft(KRAFT.variant(reassignment_needs_full_isr=False), **BOUNDS_15665)
    cex = first_violation(bug, "ReassignmentKeepsMinIsr")
    assert [st.action for st in cex.steps] == [
        "ControllerShutdownBroker",
        "OperatorReassignPartition",
        "BrokerBecomeFollower",
        "BrokerApplyPartitionChange",
        "FollowerSendFetch",
        "LeaderHandleFetch",
        "LeaderSendAlterPartition",
        "ControllerHandleAlterPartition",
    ]
