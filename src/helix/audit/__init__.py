"""The self-audit: the eval-of-the-eval over a run's own artifacts, as impact-ordered findings.

```python
from helix.audit import audit_json, audit_run

report = audit_run("runs/r1", labels="labels.sqlite")
for finding in report.findings:          # fail first, then warn, not-measured, pass
    print(finding.status, finding.check, finding.summary, finding.next_step)
```
"""

from ._audit import CHECKS, DEFAULT_LABEL_FILES, audit_run
from ._deep import (
    DEEP_CHECKS,
    DEEP_DIR,
    DEEP_PROMPT_VERSION,
    CriterionReading,
    DeepPacket,
    audit_deep,
    prep_deep_audit,
)
from ._design import CodeCheckSuggestion, suggest_code_check
from ._determinism import json_differences
from ._findings import (
    AREAS,
    AUDIT_FORMAT_VERSION,
    STATUS_ORDER,
    AuditArea,
    AuditReport,
    AuditStatus,
    AuditThresholds,
    Detail,
    Evidence,
    Finding,
    audit_json,
)
from ._judges import JudgeMeasure
from ._suites import (
    SUITE_HISTORY_DIR,
    SUITE_HISTORY_SUFFIX,
    SUITE_REVISION_FORMAT_VERSION,
    SuiteCheck,
    SuiteRevision,
    check_suite_history,
)

__all__ = [
    "AREAS",
    "AUDIT_FORMAT_VERSION",
    "CHECKS",
    "DEEP_CHECKS",
    "DEEP_DIR",
    "DEEP_PROMPT_VERSION",
    "DEFAULT_LABEL_FILES",
    "STATUS_ORDER",
    "SUITE_HISTORY_DIR",
    "SUITE_HISTORY_SUFFIX",
    "SUITE_REVISION_FORMAT_VERSION",
    "AuditArea",
    "AuditReport",
    "AuditStatus",
    "AuditThresholds",
    "CodeCheckSuggestion",
    "CriterionReading",
    "DeepPacket",
    "Detail",
    "Evidence",
    "Finding",
    "JudgeMeasure",
    "SuiteCheck",
    "SuiteRevision",
    "audit_deep",
    "audit_json",
    "audit_run",
    "check_suite_history",
    "json_differences",
    "prep_deep_audit",
    "suggest_code_check",
]
