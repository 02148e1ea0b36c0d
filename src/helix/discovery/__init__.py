"""Discovery: find what to measure from the traces themselves.

PREP → DISPATCH → AGGREGATE, as in judging: :func:`prep_discovery` writes one determiner packet per
trace (did the agent attain the user's goal; if not, the first thing that went wrong, open-coded),
:func:`prep_cluster` cuts the failed runs' notes into cluster packets (emergent, binary,
actionable categories, each fixable or eval-worthy), and :func:`aggregate_discovery` merges the
categories across batches, computes failure rates with Wilson intervals and saturation (Good–Turing
coverage, Chao1, a stop rule and the discovery curve), and writes criteria drafts, a masked
failure handoff and a report page. A provider (:func:`read_stage_with_model`, through the one
judging engine) or an agent runtime's subagents (the packet files) do the reading; code does the
counting. :func:`profile_subject` and :func:`sample_traces` describe and sample the traces first.
"""

from ._aggregate import (
    DISCOVERY_RESULT_VERSION,
    AggregateOutputs,
    CategoryStat,
    DeterminationCounts,
    DiscoveryResult,
    SaturationReport,
    aggregate_discovery,
)
from ._cluster import (
    CLUSTER_FORMAT_VERSION,
    Category,
    ClusterAnswer,
    ClusterFile,
    Clustering,
    ClusterPacket,
    NoteView,
    Routing,
    Unassigned,
    cluster_key,
    parse_cluster_file,
    parse_cluster_text,
)
from ._determine import (
    DETERMINATION_FORMAT_VERSION,
    Determination,
    DeterminationFile,
    DeterminationPacket,
    Determining,
    FirstWrong,
    determination_key,
    parse_determination_file,
    parse_determination_text,
)
from ._drafts import (
    ReconcileSummary,
    criteria_draft,
    criteria_draft_yaml,
    reconcile_criteria,
    suggest_severity,
)
from ._handoff import HANDOFF_FORMAT_VERSION, handoff_bundle
from ._merge import MergedCategory, SourceCategory, merge_categories, token_jaccard
from ._present import present_for_discovery
from ._run import (
    DEFAULT_BATCH_NOTES,
    DISCOVERY_FORMAT_VERSION,
    ClusterManifest,
    ClusterPrep,
    DeterminationUnit,
    DiscoveryManifest,
    DiscoveryPrep,
    DiscoveryRun,
    Note,
    cluster_batches,
    open_discovery,
    prep_cluster,
    prep_discovery,
    read_clusters,
    read_determinations,
    read_notes,
    verdict_schema,
)
from ._saturation import Saturation, chao1, discovery_curve, good_turing_coverage, saturation
from ._texts import DISCOVERY_PROMPT_VERSION
from ._transport import Stage, read_stage_with_model

__all__ = [
    "CLUSTER_FORMAT_VERSION",
    "DEFAULT_BATCH_NOTES",
    "DETERMINATION_FORMAT_VERSION",
    "DISCOVERY_FORMAT_VERSION",
    "DISCOVERY_PROMPT_VERSION",
    "DISCOVERY_RESULT_VERSION",
    "HANDOFF_FORMAT_VERSION",
    "AggregateOutputs",
    "Category",
    "CategoryStat",
    "ClusterAnswer",
    "ClusterFile",
    "ClusterManifest",
    "ClusterPacket",
    "ClusterPrep",
    "Clustering",
    "Determination",
    "DeterminationCounts",
    "DeterminationFile",
    "DeterminationPacket",
    "DeterminationUnit",
    "Determining",
    "DiscoveryManifest",
    "DiscoveryPrep",
    "DiscoveryResult",
    "DiscoveryRun",
    "FirstWrong",
    "MergedCategory",
    "Note",
    "NoteView",
    "ReconcileSummary",
    "Routing",
    "Saturation",
    "SaturationReport",
    "SourceCategory",
    "Stage",
    "Unassigned",
    "aggregate_discovery",
    "chao1",
    "cluster_batches",
    "cluster_key",
    "criteria_draft",
    "criteria_draft_yaml",
    "determination_key",
    "discovery_curve",
    "good_turing_coverage",
    "handoff_bundle",
    "merge_categories",
    "open_discovery",
    "parse_cluster_file",
    "parse_cluster_text",
    "parse_determination_file",
    "parse_determination_text",
    "prep_cluster",
    "prep_discovery",
    "present_for_discovery",
    "read_clusters",
    "read_determinations",
    "read_notes",
    "read_stage_with_model",
    "reconcile_criteria",
    "saturation",
    "suggest_severity",
    "token_jaccard",
    "verdict_schema",
]
