"""Secrets found in note text, replaced by `[REDACTED:<kind>]` before any text leaves the service.

Rules, applied in this order (each replacement is final: a marker never matches a later rule):

1. private key blocks (PEM / OpenSSH / PGP): BEGIN to END; a BEGIN without its END (a chunk or a line range
   cut through the block) up to the end of the key lines after it; an END without its BEGIN from the key lines
   before it;
2. key material without either marker (the middle of a long key cut out by chunking): runs of consecutive
   lines of base64 alphabet with at least two lines of 40+ characters, and any single word of 40+ base64
   characters mixing upper case, lower case and at least two digits (a key line, or an unknown API key);
3. tokens recognisable by their form: AWS access key ids, GitHub / GitLab / Slack / npm / PyPI / Hugging Face
   tokens, Stripe secret keys, `sk-...` API keys (OpenAI, Anthropic and the like), Google API keys, JWTs,
   `Bearer <token>` and `Authorization:` header values;
4. labelled values: `password: x`, `passwd = x`, `passphrase: x` (the rest of the line), and `api_key: x`,
   `secret = x`, `token: x`, `client_secret: x`... when the value looks like a credential (8+ characters with
   a digit, or 20+); the label stays so the reader knows what was there;
5. credentials inside URLs (`scheme://user:password@host`): the password;
6. payment card numbers: 13-19 digits (spaces or dashes allowed between them) passing the Luhn check.

Redaction keeps the line structure: a replaced block keeps its newlines (the marker on its first line, the
rest empty), so line numbers of the text stay those of the note. False positives (a run of hashes, a
Luhn-valid number that is no card) are redacted too: a secret leaking costs more than a hash hidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MARKER = "[REDACTED:{}]"
MARKER_PREFIX = "[REDACTED:"


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    redactions: int = 0


def _marker(kind: str) -> str:
    return MARKER.format(kind)


# -- 1. private key blocks ---------------------------------------------------------------------------

_KEY_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"
_BEGIN = rf"-----BEGIN {_KEY_LABEL}-----"
_END = rf"-----END {_KEY_LABEL}-----"
# base64, a PEM header line, or blank
_KEY_LINE = r"[ \t]*(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment|Version): [^\n]*)?[ \t]*"
_FULL_BLOCK = re.compile(rf"{_BEGIN}.*?{_END}", re.DOTALL)
_OPEN_BLOCK = re.compile(rf"{_BEGIN}(?:\n{_KEY_LINE})*")
_CLOSE_BLOCK = re.compile(rf"(?:^|(?<=\n))(?:{_KEY_LINE}\n)*[ \t]*{_END}")

# -- 2. runs of key material ----------------------------------------------------------------------------

_B64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/]{8,}={0,2}[ \t]*")
_LONG_B64 = 40
_RUN_LONG_LINES = 2
# a standalone word (between whitespace, quotes or brackets) of 40+ base64 / base64url characters
_KEY_WORD = re.compile(r"(?<![^\s\"'`(\[<])[A-Za-z0-9+/_-]{40,}={0,2}(?![^\s\"'`)\]>,.;])")

# -- 3. tokens by form ------------------------------------------------------------------------------------

_TOKEN_FORMS: dict[str, str] = {
    "aws-access-key": r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
    "github-token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,251}|github_pat_[A-Za-z0-9_]{22,255})",
    "gitlab-token": r"\bglpat-[A-Za-z0-9_-]{20,}",
    "slack-token": r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    "slack-webhook": r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    "npm-token": r"\bnpm_[A-Za-z0-9]{36}\b",
    "pypi-token": r"\bpypi-[A-Za-z0-9_-]{50,}",
    "huggingface-token": r"\bhf_[A-Za-z0-9]{30,}\b",
    "stripe-key": r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    "api-key": r"\bsk-[A-Za-z0-9_-]{20,}",
    "google-api-key": r"\bAIza[0-9A-Za-z_-]{35}",
    "jwt": r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
}
# One pass for all of them: group i is the i-th kind.
_TOKENS = re.compile("|".join(f"({form})" for form in _TOKEN_FORMS.values()))
_TOKEN_KINDS = list(_TOKEN_FORMS)
# Every form starts with a literal of its own; prose almost never holds one, so most texts never run the
# (slow, many-branched) token regex. Keep in step with _TOKEN_FORMS (a test checks every form needs one).
# Substring tests, not one regex: Python's re tries each alternative at each position (4x slower here).
_TOKEN_LITERALS = (
    *("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
    *(f"gh{kind}_" for kind in "pousr"),
    *("github_pat_", "glpat-", "hooks.slack.com", "npm_", "pypi-", "hf_", "sk-", "AIza", "eyJ"),
    *(f"xox{kind}-" for kind in "abposr"),
    *(f"{kind}k_{mode}_" for kind in "sr" for mode in ("live", "test")),
)
_LONG_RUN = re.compile(r"[A-Za-z0-9+/]{40}")
_CARD_HINT = re.compile(r"\d{4}[ -]?\d{4}")  # every card number starts with 8 digits, at most one gap
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9\-._~+/]{12,}=*")
_AUTH_HEADER = re.compile(r"(?i)\b(authorization)(\s*:\s*)(?!\[REDACTED)((?:[A-Za-z]+\s+)?)([^\s\[]\S{7,})")

# -- 4. labelled values -------------------------------------------------------------------------------

_SEPARATOR = r"""["'`]?\**[ \t]*[:=][ \t]*\**[ \t]*"""
_PREFIX = r"(?:[a-z0-9]+[_-])*"  # WIFI_PASSWORD, db-password, GITHUB_TOKEN
_PASSWORD = re.compile(
    rf"""(?i)(?<![\w-])({_PREFIX}(?:password|passwd|pwd|passphrase|pass ?code){_SEPARATOR})"""
    r"(?!\[REDACTED)(\S[^\n]*)"
)
_CREDENTIAL_LABEL = (
    r"(?:api[_-]?key|apikey|secret(?:[_-]?(?:key|access[_-]?key))?|client[_-]?secret"
    r"|(?:access|auth|refresh|api|bearer|session)?[_-]?token|private[_-]?key|access[_-]?key(?:[_-]?id)?)"
)
_PASSWORD_CELL = re.compile(
    r"(?i)(\|[ \t]*\**[ \t]*(?:password|passwd|passphrase|pin)[ \t]*\**[ \t]*\|[ \t]*)"
    # not in a table's header row ("| Pin | Colour |" over "|---|---|": a wiring table), whose cells name
    # columns
    r"(?![^\n]*\n[ \t]*\|?[ \t]*:?-+:?[ \t]*\|)"
    r"(?!\[REDACTED)([^|\n]*[^|\s])"
)
_CREDENTIAL = re.compile(
    rf"""(?i)(?<![\w-])({_PREFIX}{_CREDENTIAL_LABEL}{_SEPARATOR})(?!\[REDACTED)(["'`]?)([^\s"'`,;]+)\2"""
)

# Cheap tests on the lower-cased text that every match of the rule above passes: the label's last word
# right before the separator (the label's start, the lookbehind and the value are left to the rule itself).
_PASSWORD_HINT = re.compile(rf"(?:password|passwd|pwd|passphrase|pass ?code){_SEPARATOR}")
_PASSWORD_CELL_HINT = re.compile(r"\|[ \t]*\**[ \t]*(?:password|passwd|passphrase|pin)[ \t]*\**[ \t]*\|")
_CREDENTIAL_HINT = re.compile(rf"(?:key|secret|token|id){_SEPARATOR}")

# -- 5. URL credentials ---------------------------------------------------------------------------------

_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@\[\]]+:)([^\s@/\[\]]+)(@)")

# -- 6. card numbers --------------------------------------------------------------------------------------

_CARD = re.compile(r"(?<![\d.,-])\d(?:[ -]?\d){12,18}(?![\d-]|[.,]\d)")


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _looks_like_credential(value: str) -> bool:
    return len(value) >= 20 or (len(value) >= 8 and any(ch.isdigit() for ch in value))


class _Counter:
    def __init__(self) -> None:
        self.count = 0

    def sub(self, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str], text: str) -> str:
        def counted(match: re.Match[str]) -> str:
            replaced = repl(match)
            if replaced != match.group(0):
                self.count += 1
                # keep the line structure: a block replaced by one marker keeps its newlines
                replaced += "\n" * (match.group(0).count("\n") - replaced.count("\n"))
            return replaced

        return pattern.sub(counted, text)


def _redact_b64_runs(text: str, counter: _Counter) -> str:
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not _B64_LINE.fullmatch(lines[i]):
            i += 1
            continue
        j = i
        while j < len(lines) and _B64_LINE.fullmatch(lines[j]):
            j += 1
        long_lines = sum(1 for line in lines[i:j] if len(line.strip()) >= _LONG_B64)
        if long_lines >= _RUN_LONG_LINES:
            lines[i:j] = [_marker("key-material")] + [""] * (j - i - 1)  # same number of lines
            counter.count += 1
        i = j
    return "\n".join(lines)


def _key_word(match: re.Match[str]) -> str:
    word = match.group(0)
    upper = sum(1 for ch in word if ch.isupper())
    lower = sum(1 for ch in word if ch.islower())
    digits = sum(1 for ch in word if ch.isdigit())
    return _marker("key-material") if upper and lower and digits >= 2 else word


def redact_secrets(text: str) -> Redacted:
    """`text` with every secret the rules above recognise replaced, and how many were replaced."""
    if not text:
        return Redacted(text)
    c = _Counter()
    key = _marker("private-key")
    if "-----BEGIN" in text:
        text = c.sub(_FULL_BLOCK, lambda m: key, text)
        text = c.sub(_OPEN_BLOCK, lambda m: key, text)
    if "-----END" in text:
        text = c.sub(_CLOSE_BLOCK, lambda m: key, text)
    # replacements only ever add markers, so a run of key material absent now stays absent below
    long_run = _LONG_RUN.search(text) is not None
    if long_run:
        text = _redact_b64_runs(text, c)
    if any(literal in text for literal in _TOKEN_LITERALS):
        text = c.sub(_TOKENS, lambda m: _marker(_TOKEN_KINDS[(m.lastindex or 1) - 1]), text)
    # The labelled rules are the slow ones: each runs only when its label stands before a separator at all.
    lowered = text.lower()
    if "bearer" in lowered:
        text = c.sub(_BEARER, lambda m: f"{m.group(1)}{m.group(2)}{_marker('token')}", text)
    if "authorization" in lowered:
        text = c.sub(_AUTH_HEADER, _auth_header, text)
    if _PASSWORD_HINT.search(lowered):
        text = c.sub(_PASSWORD, lambda m: f"{m.group(1)}{_marker('password')}", text)
    if "|" in text and _PASSWORD_CELL_HINT.search(lowered):
        text = c.sub(_PASSWORD_CELL, lambda m: f"{m.group(1)}{_marker('password')}", text)
    if _CREDENTIAL_HINT.search(lowered):
        text = c.sub(_CREDENTIAL, _credential, text)
    if "://" in text:
        text = c.sub(_URL_PASSWORD, lambda m: f"{m.group(1)}{_marker('password')}{m.group(3)}", text)
    if long_run:
        text = c.sub(_KEY_WORD, _key_word, text)
    if _CARD_HINT.search(text):
        text = c.sub(_CARD, _card, text)
    return Redacted(text, c.count)


def _auth_header(match: re.Match[str]) -> str:
    if not _looks_like_credential(match.group(4)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{_marker('credentials')}"


def _credential(match: re.Match[str]) -> str:
    if not _looks_like_credential(match.group(3)):
        return match.group(0)
    return f"{match.group(1)}{_marker('secret')}"


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"[ -]", "", match.group(0))
    if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits):
        return _marker("card-number")
    return match.group(0)


_MARKED = re.compile(re.escape(MARKER_PREFIX) + r"[^\]]*\]")


def unsearchable(text: str) -> str:
    """`text` as the index may hold it: every secret left out, marker and all, so that no query (a guessed
    password typed as a search) can find the note that holds it, nor its words rank one."""
    redacted = redact_secrets(text)
    return _MARKED.sub("", redacted.text) if redacted.redactions else text
