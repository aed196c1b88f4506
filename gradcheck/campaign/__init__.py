"""The parity campaign (`python -m gradcheck run`): N random graphs checked against torch and the
numerical oracle, figures per op, failures shrunk and saved to the regression corpus.

`phases` runs a campaign's phases in order (structure, isolation, random graphs, shrink and
blame, grouping, settling, edges, save), each in its module; settings -> validation -> phases,
where `pool` runs the work and `checking` is the real backend; `report_json`, `report_html`,
`report_junit` and `report_markdown` turn a result into reports; `gate` compares a fixed campaign
with a recorded baseline (`baseline`) for `gradcheck gate`.
"""

from gradcheck.campaign.checking import (
    FailureShrinker,
    GraphChecker,
    make_checker,
    make_shrinker,
    real_backend,
)
from gradcheck.campaign.corpus import Corpus, open_corpus, save_failures
from gradcheck.campaign.phases import Progress, run_campaign
from gradcheck.campaign.pool import Backend, Checker, Shrinker, chunks
from gradcheck.campaign.records import GRAD_METRICS, METRICS, Failure, GraphRecord, record_of
from gradcheck.campaign.settings import CampaignError, Settings, graph_seed
from gradcheck.campaign.statistics import (
    HIST_BINS,
    HIST_HI,
    HIST_LO,
    QUANTILES,
    CampaignResult,
    OpStats,
    aggregate,
    histogram_bin,
)
from gradcheck.campaign.validation import campaign_ops, load_adapter, scalar_ops, tensor_ops, validate

__all__ = [
    "GRAD_METRICS",
    "HIST_BINS",
    "HIST_HI",
    "HIST_LO",
    "METRICS",
    "QUANTILES",
    "Backend",
    "CampaignError",
    "CampaignResult",
    "Checker",
    "Corpus",
    "Failure",
    "FailureShrinker",
    "GraphChecker",
    "GraphRecord",
    "OpStats",
    "Progress",
    "Settings",
    "Shrinker",
    "aggregate",
    "campaign_ops",
    "chunks",
    "graph_seed",
    "histogram_bin",
    "load_adapter",
    "make_checker",
    "make_shrinker",
    "open_corpus",
    "real_backend",
    "record_of",
    "run_campaign",
    "save_failures",
    "scalar_ops",
    "tensor_ops",
    "validate",
]
