"""A note's YAML frontmatter: split off the body, loaded safely, read for tags, aliases, date and metadata.

Frontmatter is typed by people and written by plugins, so nothing here raises: anything malformed is
appended to `problems` as "kind: detail" and what is left is used.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any, NamedTuple

import yaml

from backend.domain.periods.time_intent import name_span, parse_day
from backend.domain.periods.written_periods import mentioned_span, title_span
from backend.infrastructure.markdown.body import clean_tag

FRONTMATTER_MAX_BYTES = 64 * 1024
# Aliases make YAML a DAG: walking a "billion laughs" tree naively never ends, so conversion
# stops after this many values and the extra metadata is dropped.
METADATA_MAX_NODES = 5_000
METADATA_MAX_DEPTH = 20

_PROMOTED_KEYS = frozenset({"title", "aliases", "alias", "tags", "tag", "date", "created"})
_FENCE_OPEN = "---"
_FENCE_CLOSE = ("---", "...")
_ISO_DAY = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$")
_RANGE = re.compile(
    r"^\s*(\d{4}-\d{1,2}-\d{1,2})\s*(?:to|until|-|\u2013|\u2014|/|\.\.)\s*(\d{4}-\d{1,2}-\d{1,2})\s*$"
)
# dates a plugin or a person stamps when a note is touched say when it was edited, not what it is of
# (and when it was made: "created", "Created", "date created" as the Linter plugin writes it, "created_at")
_STAMP_KEY = re.compile(r"modif|updat|edit|review|access|sync|last|mtime|creat|ctime", re.I)
_FOLDER_PERIOD = re.compile(r"(?:^|/)((?:19|20)\d\d)(?:/(0[1-9]|1[0-2]))?(?=/|$)")
MAX_PERIODS = 8


class _FrontmatterLoader(yaml.SafeLoader):
    """SafeLoader that keeps an impossible timestamp (`date: 2024-02-30`) as its text.

    Stock PyYAML raises ValueError there, which would throw away the whole frontmatter; as a string
    it becomes one `invalid_date` problem instead. Pure Python on purpose: the libyaml loader
    composes nodes recursively in C, where hostile nesting could overflow the stack instead of
    raising RecursionError.
    """

    def construct_lenient_timestamp(self, node: yaml.ScalarNode) -> Any:
        try:
            return self.construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)

    yaml_constructors = {
        **yaml.SafeLoader.yaml_constructors,
        "tag:yaml.org,2002:timestamp": construct_lenient_timestamp,
    }


class _LibyamlFrontmatterLoader(yaml.CSafeLoader):
    """The same loader with libyaml's scanner, parser and composer (the values are still made by the
    constructors above): a sixth of the time of reading and chunking a note went to the pure-Python
    scanner. Used only for frontmatter too shallow to overflow the C stack (`_shallow`)."""

    yaml_constructors = _FrontmatterLoader.yaml_constructors


# libyaml composes a level of nesting per C frame: these bounds keep it far from the stack's end
_LIBYAML_MAX_INDENT = 64  # columns of the deepest block line
_LIBYAML_MAX_BRACKETS = 32  # open [ and { of flow collections, counted as if all nested


class _TooComplexError(Exception):
    pass


_DROP = object()  # marks a value with no JSON form


def split_frontmatter(text: str, problems: list[str]) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, 1-based file line of the body)."""
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_line.rstrip() != _FENCE_OPEN:
        return None, text, 1
    lines = text.split("\n")
    for index in range(1, len(lines)):
        if lines[index].rstrip() in _FENCE_CLOSE:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    problems.append("frontmatter_unclosed: no closing '---' line; the whole file is read as body")
    return None, text, 1


def load_frontmatter(source: str, problems: list[str]) -> dict[str, Any]:
    size = len(source.encode("utf-8"))
    if size > FRONTMATTER_MAX_BYTES:
        problems.append(f"frontmatter_too_large: {size} bytes (limit {FRONTMATTER_MAX_BYTES}); ignored")
        return {}
    try:
        data = _load(source)
    except Exception as exc:  # untrusted text: PyYAML raises YAMLError, RecursionError, ValueError...
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        problems.append(f"frontmatter_invalid_yaml: {detail[:200]}")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(f"frontmatter_not_mapping: got {type(data).__name__}; ignored")
        return {}
    return {str(key): value for key, value in data.items() if isinstance(key, str | int | float | bool)}


def _load(source: str) -> Any:
    """The YAML's value, by libyaml when the text is shallow; what it refuses is loaded again in pure
    Python, whose error messages (the problems a note lists) are the ones people have seen."""
    if _shallow(source):
        try:
            return yaml.load(source, Loader=_LibyamlFrontmatterLoader)
        except Exception:
            pass
    return yaml.load(source, Loader=_FrontmatterLoader)


def _shallow(source: str) -> bool:
    """Whether the YAML cannot nest deeper than the bounds libyaml is used within."""
    if source.count("[") + source.count("{") > _LIBYAML_MAX_BRACKETS:
        return False
    return all(len(line) - len(line.lstrip()) <= _LIBYAML_MAX_INDENT for line in source.split("\n"))


def _first_present(front: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if front.get(key) is not None:
            return front[key]
    return None


def frontmatter_aliases(front: dict[str, Any]) -> list[str]:
    value = _first_present(front, "aliases", "alias")
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [item.strip() for item in items if isinstance(item, str) and item.strip()]


def frontmatter_tags(front: dict[str, Any]) -> list[str]:
    value = _first_present(front, "tags", "tag")
    if isinstance(value, str):
        items: list[Any] = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = value
    else:
        return []
    return [tag for tag in (clean_tag(item) for item in items if isinstance(item, str)) if tag]


def _iso_day(value: Any) -> str | None:
    """ISO day for a YAML date/datetime or a "YYYY-MM-DD..." string; None when not a valid day."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        match = _ISO_DAY.match(value.strip())
        if match:
            try:
                return dt.date(*(int(part) for part in match.groups())).isoformat()
            except ValueError:
                return None
        # a day written out, as chat exports and some templates do: "1:56 pm on 8 May, 2023"
        day = parse_day(value[:200])
        return day.isoformat() if day is not None else None
    return None


def note_date(front: dict[str, Any], stem: str, problems: list[str]) -> str | None:
    """The day a note is of: its `date:` or `created:`, else the day, week (its Monday) or month (its first
    day) its file name names; None when neither says a day."""
    day = _front_day(front, problems)
    if day is not None:
        return day
    named = name_span(stem)
    if named is not None and named.granularity in ("day", "week", "month"):
        return named.start.isoformat()
    return None


def _front_day(
    front: dict[str, Any], problems: list[str], keys: tuple[str, ...] = ("date", "created")
) -> str | None:
    for key in keys:
        value = front.get(key)
        if value is None or value == "":
            continue
        day = _iso_day(value)
        if day is not None:
            return day
        problems.append(f"invalid_date: {key}={str(value)[:60]!r} is not a YYYY-MM-DD day")
    return None


class NotePeriods(NamedTuple):
    periods: tuple[str, ...]  # every period the note is of (ParsedNote.periods)
    stated: tuple[str, ...]  # those it states (ParsedNote.stated_periods)
    own_time: bool  # its `date:`, name or folder says the time it is of (ParsedNote.own_time)


def note_periods(front: dict[str, Any], stem: str, folder: str) -> NotePeriods:
    """Every period a note is of, each an ISO day or "start/end" (inclusive days), for a question that
    names a time, and those of them it states (`stated_periods`): the stated ones with, after its `date:`,
    a period its name mentions without labelling the note with it ("Im Jahr 2010 erlitt der
    Amazonas-Regenwald": `mentioned_span`). And whether its `date:`, its name (`title_span`) or its folder
    says the time it is of: a journal day, a Zettelkasten ID, "Budget 2024", `Journal/2024/`; not a
    property's day (`birthday:`, `published:`): a person, a clipping, a book are about more than that day."""
    own = _own_periods(front, stem)
    stated = stated_periods(own, front, folder)
    own_time = bool(own) or _FOLDER_PERIOD.search(folder) is not None
    mentioned = mentioned_span(stem)
    if mentioned is None:
        return NotePeriods(stated, stated, own_time)
    periods = [*stated[:1], _period(mentioned.start, mentioned.end), *stated[1:]]
    return NotePeriods(tuple(dict.fromkeys(periods))[:MAX_PERIODS], stated, own_time)


def _own_periods(front: dict[str, Any], stem: str) -> list[str]:
    """Its `date:` day, and the period its file name labels it with ("2025-03-14", "2025-W12", "Trip Oct
    2024", "Budget 2024", a Zettelkasten ID; not "What changed since 1989": `title_span`)."""
    periods: list[str] = []
    day = _front_day(front, [], keys=("date",))
    if day is not None:
        periods.append(day)
    named = title_span(stem)
    if named is not None:
        periods.append(_period(named.start, named.end))
    return periods


def stated_periods(own: list[str], front: dict[str, Any], folder: str) -> tuple[str, ...]:
    """The periods a note states it is of: its `own` (`_own_periods`), the days or ranges its properties
    hold (`finished: 2024-03-17`, `dates: 2024-10-26 to 2024-11-02`, `year: 2024`), else the year (or
    year/month) of its folder (`Journal/2024/`). Never when the file was made or edited: `created:`, which
    templates put on every note, `modified:`, `updated:`."""
    periods = list(own)
    for key, value in front.items():
        if str(key).casefold() != "date" and not _STAMP_KEY.search(str(key)):
            period = _property_period(key, value)
            if period is not None:
                periods.append(period)
    if not periods:
        for match in _FOLDER_PERIOD.finditer(folder):
            year, month = int(match.group(1)), match.group(2)
            span = name_span(f"{year}-{month}") if month else name_span(str(year))
            if span is not None:
                periods = [_period(span.start, span.end)]
    return tuple(dict.fromkeys(periods))[:MAX_PERIODS]


def _property_period(key: str, value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if key.lower() == "year" and isinstance(value, int) and 1900 <= value <= 2099:
        return _period(dt.date(value, 1, 1), dt.date(value, 12, 31))
    if not isinstance(value, str):
        return None
    text = value.strip()[:60]
    match = _RANGE.match(text)
    if match is not None:
        first, last = (_iso_day(part) for part in match.groups())
        return _period(dt.date.fromisoformat(first), dt.date.fromisoformat(last)) if first and last else None
    match = _ISO_DAY.match(text)
    return _iso_day(text) if match is not None else None


def _period(start: dt.date, end: dt.date) -> str:
    start, end = min(start, end), max(start, end)
    return start.isoformat() if start == end else f"{start.isoformat()}/{end.isoformat()}"


def metadata(front: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    budget = [METADATA_MAX_NODES]
    kept: dict[str, Any] = {}
    try:
        for key, value in front.items():
            if key not in _PROMOTED_KEYS:
                converted = _json_safe(value, budget, 0)
                if converted is not _DROP:
                    kept[key] = converted
    except _TooComplexError:
        problems.append(
            f"frontmatter_too_complex: more than {METADATA_MAX_NODES} values or "
            f"{METADATA_MAX_DEPTH} levels; metadata dropped"
        )
        return {}
    return kept


def _json_safe(value: Any, budget: list[int], depth: int) -> Any:
    """A JSON-serialisable copy of a YAML value, or `_DROP` when it has no JSON form."""
    budget[0] -= 1
    if budget[0] < 0 or depth > METADATA_MAX_DEPTH:
        raise _TooComplexError
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _DROP
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, list | tuple | set):
        items = [_json_safe(item, budget, depth + 1) for item in value]
        kept = [item for item in items if item is not _DROP]
        # Sets have no order; sort so the same note always yields the same payload.
        return sorted(kept, key=repr) if isinstance(value, set) else kept
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(key, str | int | float | bool | dt.date):
                converted = _json_safe(item, budget, depth + 1)
                if converted is not _DROP:
                    out[str(key)] = converted
        return out
    return _DROP
