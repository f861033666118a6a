"""docs/model.md names every property and action the spec has (issue 30: README's model section
had lost NoAckedLoss and NoDuplicates; the page that replaced it is checked against the spec).

The property table ("| property | kind | ...") must list exactly the properties any
configuration of the spec can state, each with its kind; every action of the spec's action list
(spec.actions.ACTIONS) must be named on the page.
"""

from __future__ import annotations

import re
from pathlib import Path

from isr.spec import Config, IsrSpec
from isr.spec.actions import ACTIONS
from isr.spec.protocols import KRAFT, PROTOCOLS

MODEL_MD = Path(__file__).resolve().parents[2] / "docs" / "model.md"


def spec_properties() -> dict[str, str]:
    """Every property (name -> kind) of every built-in version, with the options that add some."""
    out: dict[str, str] = {}
    for name in PROTOCOLS:
        kraft = name.startswith("kraft")
        cfg = Config(
            protocol=name,
            replicas=2,
            availability=True,
            retention=True,
            delete_records=1 if kraft else 0,
            controller_failovers=1,  # kraft: PendingAlterPartitionResolvable
        )
        out |= {p.name: p.kind for p in IsrSpec(cfg).properties}
    # the ones a bound or a kraft flag adds (KAFKA-16540's --min-isr-changes, KIP-704's state)
    cfg = Config(protocol="kraft", replicas=2, min_isr_changes=1)
    out |= {p.name: p.kind for p in IsrSpec(cfg).properties}
    # KIP-455's (--reassignments)
    out |= {
        p.name: p.kind
        for p in IsrSpec(Config(protocol="kraft", replicas=2, reassignments=1)).properties
    }
    recovery = KRAFT.variant(leader_recovery_state=True)
    out |= {p.name: p.kind for p in IsrSpec(cfg, protocol=recovery).properties}
    return out


def documented_properties() -> dict[str, str]:
    text = MODEL_MD.read_text()
    start = text.index("| property | kind |")
    out = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("| "):
            break
        cols = [c.strip() for c in line.strip("|").split("|")]
        out[cols[0]] = cols[1]
    return out


def test_the_property_table_is_the_spec_s():
    want = spec_properties()
    assert len(want) >= 20, want
    assert documented_properties() == want


def test_every_action_is_named():
    text = MODEL_MD.read_text()
    missing = sorted({a.name for a in ACTIONS if not re.search(rf"\b{a.name}\b", text)})
    assert missing == []
