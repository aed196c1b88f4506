"""The parity campaign (`python -m gradcheck run`): N random graphs checked against torch and the
numerical oracle, figures per op, failures shrunk and saved to the regression corpus.

`phases` runs a campaign's phases in order (structure, isolation, random graphs, accounting for
the failures, grouping, settling, edges, save), each in its module; settings -> validation -> phases,
where `pool` runs the work and `checking` is the real backend; `report_json`, `report_html`,
`report_junit` and `report_markdown` turn a result into reports; `gate` compares a fixed campaign
with a recorded baseline (`baseline`) for `gradcheck gate`.

Its names are imported on first use (PEP 562): a module of this package (the supervisor a command
starts first of all) imports without the others, and without torch.
"""

from gradcheck.lazy import lazy_names

_LAZY = {
    "Backend": "gradcheck.campaign.pool",
    "CampaignError": "gradcheck.campaign.settings",
    "CampaignResult": "gradcheck.campaign.records",
    "Checker": "gradcheck.campaign.pool",
    "Corpus": "gradcheck.campaign.regression_corpus",
    "Failure": "gradcheck.campaign.records",
    "FailureExplainer": "gradcheck.campaign.checking",
    "FailureShrinker": "gradcheck.campaign.checking",
    "GRAD_METRICS": "gradcheck.campaign.records",
    "GraphChecker": "gradcheck.campaign.checking",
    "GraphRecord": "gradcheck.campaign.records",
    "HIST_BINS": "gradcheck.campaign.records",
    "HIST_HI": "gradcheck.campaign.records",
    "HIST_LO": "gradcheck.campaign.records",
    "METRICS": "gradcheck.campaign.records",
    "OpStats": "gradcheck.campaign.records",
    "Progress": "gradcheck.campaign.phases",
    "QUANTILES": "gradcheck.campaign.records",
    "Settings": "gradcheck.campaign.settings",
    "Shrinker": "gradcheck.campaign.pool",
    "Unexplained": "gradcheck.campaign.accounting",
    "aggregate": "gradcheck.campaign.records",
    "campaign_checker": "gradcheck.campaign.checking",
    "campaign_ops": "gradcheck.campaign.validation",
    "chunks": "gradcheck.campaign.pool",
    "graph_seed": "gradcheck.campaign.settings",
    "histogram_bin": "gradcheck.campaign.records",
    "load_adapter": "gradcheck.campaign.validation",
    "make_checker": "gradcheck.campaign.checking",
    "make_shrinker": "gradcheck.campaign.checking",
    "open_corpus": "gradcheck.campaign.regression_corpus",
    "real_backend": "gradcheck.campaign.checking",
    "record_of": "gradcheck.campaign.records",
    "run_campaign": "gradcheck.campaign.phases",
    "save_failures": "gradcheck.campaign.regression_corpus",
    "scalar_ops": "gradcheck.campaign.validation",
    "tensor_ops": "gradcheck.campaign.validation",
    "unexplained": "gradcheck.campaign.accounting",
    "validate": "gradcheck.campaign.validation",
}

__getattr__ = lazy_names("gradcheck.campaign", _LAZY)


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
    "FailureExplainer",
    "FailureShrinker",
    "GraphChecker",
    "GraphRecord",
    "OpStats",
    "Progress",
    "Settings",
    "Shrinker",
    "Unexplained",
    "aggregate",
    "campaign_checker",
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
    "unexplained",
    "validate",
]
