"""A question that asks for a sum of money, and a passage that can give one.

Asked what something cost, what was paid, spent, charged or owed, or what a price, fee or budget is, a person
wants a sum; a note on the topic that holds none cannot give it, however close its words are (the plans for
solar panels on a boat, with their wattages and no price, for "how much did the solar panels cost?": quoted
at confidence 0.96 on personal-dev, a question the vault cannot answer). People write sums with a currency
sign, code or word beside the figures, or once at the head of a column of them (`| date | £ |`), so a
passage can give one when it holds a figure and a currency mark anywhere. And a sum is of something: asked
what the hygienist cost, a physio invoice holds a sum but not the hygienist, so the words that name what the
sum is for (`sum_subject`) must be in the passage, its heading or its note's title. English questions only: a
question in another language is never narrowed by this.

Asked what was spent or paid ("total spent on the boat in 2025", "what did the battery setup cost"), the sums
that answer were paid. People write the sums not yet paid as what someone reckons, quotes or estimates, or
as a budget ("New total he reckons is about £2,300"): beside a passage stating a sum paid (a ledger's
rows, "£1,050 gulp"), one whose every sum is such is the plan of a spend, not the spend (`only_estimated`).
A question asking for the quote or the budget itself is not narrowed so.
"""

from __future__ import annotations

import re

_MONEY_VERBS = "|".join(
    ("cost", "costs", "costing", "pay", "pays", "paid", "paying", "spend", "spends", "spent", "spending")
    + ("charge", "charges", "charged", "owe", "owes", "owed")
)
_PRICES = "|".join(("price", "prices", "fee", "fees"))
_MONEY_NOUNS = _PRICES + "|" + "|".join(("budget", "rent", "salary", "wage", "wages", "money", "bill"))
# "how much ... cost/paid/owe/budget/money", "what did ... cost", "what's the price/fee of", "total spent"
_ASKS_SUM = re.compile(
    rf"\bhow\s+much\b[^?.!;]*\b(?:{_MONEY_VERBS}|{_MONEY_NOUNS})\b"
    rf"|\bwhat\b[^?.!;]*\b(?:{_MONEY_VERBS}|{_PRICES})\b"
    rf"|\btotal\s+(?:spent|paid|cost|costs|owed)\b",
    re.IGNORECASE,
)
# the same words where they ask for no money: time or effort spent, attention paid, a battery charged, a cost
# function ("how much time do I spend on email", "what should I pay attention to", "how much do I charge the
# lithium bank to"): taken out before a question is read
_NOT_MONEY = re.compile(
    r"\bhow\s+much\s+(?:more\s+)?(?:time|effort|energy|sleep|work|attention|space|room|progress)\b"
    r"|\bpa(?:y|ys|id|ying)\s+(?:attention|tribute|respects|a\s+visit)\b"
    r"|\bspen(?:d|ds|t|ding)\s+(?:(?:the|my|our|a|an|that|this|last|next|every|each)\s+)?"
    r"(?:time|days?|weeks?|weekends?|afternoons?|mornings?|evenings?|nights?|hours?|holidays?|summer|winter"
    r"|christmas|easter)\b"
    r"|\bcharg(?:e|es|ed|ing)\s+(?:(?:the|my|our|a)\s+)?(?:\w+\s+){0,2}"
    r"(?:battery|batteries|bank|phone|car|laptop|van|ebike|bike)\b"
    r"|\bcosts?\s+functions?\b",
    re.IGNORECASE,
)
# the words that ask for a sum, not what it is for
_ASKING = re.compile(rf"\b(?:how\s+much|what|total|{_MONEY_VERBS}|{_MONEY_NOUNS})\b", re.IGNORECASE)
_CURRENCY = re.compile(
    r"[£$€¥₹₩₽₺₪₱₦₫฿₴]|\b(?:quid|pounds?|dollars?|euros?|bucks|pence|cents?|yen|francs?|rupees?|kronor|kronas?"
    r"|kroner|krone|zlot(?:y|ys|ych)|z[łl]|pesos?|yuan|rmb)\b"
    r"|\b(?:gbp|usd|eur|chf|jpy|cad|aud|nzd|sgd|hkd|sek|nok|dkk|pln|inr|zar|brl|mxn|cny)\b"
    r"|\b\d[\d\s,.]*\s?kr\b|\brs\.?\s?\d|\d\s?p\b",
    re.IGNORECASE,
)
_FIGURE = re.compile(r"\d")
# asks what was spent: a paid verb in the past, "did … cost", or a total of them
_ASKS_SPENT = re.compile(
    r"\b(?:spent|paid)\b|\bdid\b[^?.!;]*\b(?:cost|spend|pay)\b|\btotal\s+(?:spent|paid|cost)\b", re.IGNORECASE
)
# what a sum not yet paid is said with; a question saying one asks for that sum itself
_ESTIMATE = re.compile(
    r"\b(?:reckon(?:s|ed)?|estimat(?:e|es|ed|ing)|quot(?:e|es|ed|ing)|budget(?:s|ed)?|forecast|expect(?:s|ed)?"
    r"|(?:would|will|should|could)\s+(?:cost|be|come\s+to)|going\s+to\s+cost)\b",
    re.IGNORECASE,
)
# a sum said paid, whatever else its line says ("Paid £1,050, as quoted", "spent £300, under budget")
_PAID = re.compile(
    r"\b(?:paid|pay(?:s|ing)?|spent|spend(?:s|ing)?|bought|buy(?:s|ing)?|cost\s+(?:me|us)|came\s+to|settled"
    r"|invoiced?|receipt)\b",
    re.IGNORECASE,
)


def asks_for_sum(question: str) -> bool:
    """Whether the question asks for a sum of money (what a thing cost, what is owed, a budget ...)."""
    return _ASKS_SUM.search(_NOT_MONEY.sub(" ", question)) is not None


def gives_sum(text: str) -> bool:
    """Whether a passage can give a sum: a figure and a currency mark (sign, code or word) in it."""
    return _FIGURE.search(text) is not None and _CURRENCY.search(text) is not None


def sum_subject(question: str, period: str = "") -> str:
    """The words of a question asking for a sum that name what it is for: the question without the words
    asking for it and without the `period` it names ("the hygienist" of "what did the hygienist cost in
    2025"; nothing of "how much did I spend in March")."""
    return _ASKING.sub(" ", question.replace(period, " ") if period else question)


def asks_what_was_spent(question: str) -> bool:
    """Whether a question asking for a sum asks what was spent or paid, not what is quoted, budgeted or
    expected ("what did Pete quote for the blacking" asks for the quote)."""
    text = _NOT_MONEY.sub(" ", question)
    return _ASKS_SPENT.search(text) is not None and _ESTIMATE.search(text) is None


def sum_lines(text: str) -> list[str]:
    """The lines of a passage that state a sum: a figure and a currency mark, or a table row with a figure (a
    ledger writes its currency once, in the column's head)."""
    return [
        line
        for line in text.splitlines()
        if _FIGURE.search(line) and (_CURRENCY.search(line) or line.lstrip().startswith("|"))
    ]


def only_estimated(text: str) -> bool:
    """Whether every sum a passage states (`sum_lines`) is one not yet paid (reckoned, quoted, estimated,
    budgeted, and not said paid: "Paid £1,050, as quoted" is a payment), and it states one."""
    sums = sum_lines(text)
    return bool(sums) and all(_ESTIMATE.search(line) and not _PAID.search(line) for line in sums)
