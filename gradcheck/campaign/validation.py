"""Checking a campaign's input before any work: the engine loads and has its methods; its ops."""

from __future__ import annotations

from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.variants import surface_words
from gradcheck.choices import REFERENCES
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import UnknownEngineError, load_engine
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.spellings import Form, adapter_spellings, forms_of
from gradcheck.graphs.surface import VARIANTS, adapter_variants


def scalar_ops() -> tuple[str, ...]:
    """The registry's scalar ops (a scalar campaign draws from these)."""
    return tuple(SCALAR_OPS)


def tensor_ops() -> tuple[str, ...]:
    """The registry's tensor ops."""
    return tuple(TENSOR_OPS)


def load_adapter(name: str) -> EngineAdapter:
    """The engine adapter for `name`; CampaignError when it is unknown or its constructor raises."""
    try:
        return load_engine(name)
    except UnknownEngineError as exc:
        raise CampaignError(str(exc)) from None
    except Exception as exc:
        raise CampaignError(
            f"engine {name!r}: loading its adapter raised {type(exc).__name__}: {exc}"
        ) from exc


def campaign_adapter(settings: Settings) -> EngineAdapter:
    """The adapter of `settings.engine`, with what the campaign found about the engine
    (`Settings.accumulation`) and what its answers are judged against (`Settings.reference`)."""
    adapter = load_adapter(settings.engine)
    if settings.accumulation is not None:
        adapter.accumulation = settings.accumulation
    adapter.reference = settings.reference
    return adapter


def campaign_ops(settings: Settings, adapter: EngineAdapter) -> tuple[str, ...]:
    """The ops a campaign draws from, in registry order: --ops, or all the engine supports, but
    those left out for the adapter's fault (`Settings.left_out`)."""
    ops = _asked_ops(settings, adapter)
    kept = tuple(op for op in ops if op not in settings.left_out)
    return kept or ops


def _asked_ops(settings: Settings, adapter: EngineAdapter) -> tuple[str, ...]:
    pool = tensor_ops() if settings.tensor else scalar_ops()
    if settings.tensor and not pool:
        raise CampaignError("the registry has no tensor ops yet: tensor campaigns cannot run")
    if settings.ops is None:
        ops = tuple(op for op in pool if op in adapter.ops)
        if not ops:
            kind = "tensor" if settings.tensor else "scalar"
            raise CampaignError(f"engine {settings.engine!r} supports none of the registry's {kind} ops")
        return ops
    unknown = [op for op in settings.ops if op not in REGISTRY]
    if unknown:
        raise CampaignError(f"unknown op(s) {unknown}; the registry has {sorted(REGISTRY)}")
    wrong_kind = [op for op in settings.ops if op not in pool]
    if wrong_kind:
        kind = "tensor" if settings.tensor else "scalar"
        other = "drop --tensor" if settings.tensor else "add --tensor"
        raise CampaignError(f"op(s) {wrong_kind} are not {kind} ops ({other}?); {kind} ops: {list(pool)}")
    unsupported = [op for op in settings.ops if op not in adapter.ops]
    if unsupported:
        supported = sorted(adapter.ops)
        raise CampaignError(
            f"engine {settings.engine!r} does not support op(s) {unsupported}; it supports {supported}"
        )
    return tuple(dict.fromkeys(settings.ops))


def campaign_variants(settings: Settings, adapter: EngineAdapter) -> frozenset[str]:
    """The attribute variants a campaign draws its ops in: those the adapter says it handles (its
    `registry_release` and `variants`), within `settings.variants` when given."""
    try:
        handled = adapter_variants(adapter)
    except ValueError as exc:
        raise CampaignError(f"engine {settings.engine!r}: {exc}") from None
    return handled if settings.variants is None else handled & frozenset(settings.variants)


def campaign_forms(settings: Settings, adapter: EngineAdapter) -> dict[str, tuple[Form, ...]]:
    """op -> the adapter's other spellings of it (`spellings`) that a campaign draws, for the
    campaign's ops; CampaignError for a malformed list."""
    try:
        listed = adapter_spellings(adapter)
    except ValueError as exc:
        raise CampaignError(f"engine {settings.engine!r}: {exc}") from None
    return forms_of(listed, campaign_ops(settings, adapter))


def surface_note(settings: Settings, adapter: EngineAdapter) -> str | None:
    """A note naming the variants of the campaign's ops that are not drawn because the adapter
    does not say it handles them (None when every variant of its ops is drawn)."""
    ops = set(campaign_ops(settings, adapter))
    drawn = campaign_variants(settings, adapter)
    left = sorted(name for name, v in VARIANTS.items() if v.op in ops and name not in drawn)
    if not left or settings.variants is not None:
        return None
    release = getattr(adapter, "registry_release", None)
    said = f"registry_release = {release}" if release is not None else "no registry_release (release 1)"
    return (
        f"Not drawn: {surface_words(left)}: the adapter names {said}; once its apply handles them, "
        "name the release or list them in `variants` (docs/adapters.md)."
    )


def validate(settings: Settings, adapter: EngineAdapter | None = None) -> tuple[str, ...]:
    """Check engine, ops and graph kind before any work; return the ops. Raises CampaignError.

    Only what is surely the adapter's fault is refused: it cannot be imported or built, or it
    lacks a method it needs. An exception or a non-number while evaluating is a finding.
    """
    adapter = adapter or load_adapter(settings.engine)
    if settings.tensor and not getattr(adapter, "tensor", False):
        raise CampaignError(
            f"engine {settings.engine!r} evaluates scalar graphs only; drop --tensor "
            "(minigrad's tensor engine is --engine minigrad-tensor)"
        )
    if not settings.tensor and getattr(adapter, "tensor", False):
        raise CampaignError(f"engine {settings.engine!r} evaluates tensor graphs only: add --tensor")
    if settings.dtype != "float64" and not (settings.tensor and settings.dtype in adapter.dtypes):
        raise CampaignError(
            f"--dtype {settings.dtype} needs --tensor and an engine that computes in it; engine "
            f"{settings.engine!r} computes in {list(adapter.dtypes)}"
        )
    if settings.reference not in REFERENCES:
        raise CampaignError(f"reference must be one of {list(REFERENCES)}, got {settings.reference!r}")
    _check_methods(settings, adapter)
    campaign_variants(settings, adapter)  # a release or variant name it does not know: bad input
    campaign_forms(settings, adapter)  # a malformed list of spellings: bad input too
    return campaign_ops(settings, adapter)


def _check_methods(settings: Settings, adapter: EngineAdapter) -> None:
    """Refuse an adapter that lacks a method the campaign needs: surely the adapter's fault. What
    the engine answers (an exception, a node inside `.data`) is the engine's, and a finding."""
    missing = adapter.missing_methods()
    if missing:
        raise CampaignError(
            f"engine {settings.engine!r}: adapter {type(adapter).__name__} does not implement "
            f"{', '.join(missing)} (see docs/adapters.md)"
        )
