"""Secret redaction rules, table by table. Every sample secret is fake (made for these tests)."""

from __future__ import annotations

import pytest

from backend.domain.text.secrets import luhn_valid, redact_secrets, unsearchable

RSA_BODY = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u",
    "+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQz",
    "uVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdgcKWTjpBP",
]
RSA_KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(RSA_BODY) + "\n-----END RSA PRIVATE KEY-----"
# the two samples too long to share a table row with what they must find
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY99"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJlLWZha2UtZmFrZQ"


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ("id AKIAQYLPMN5HFAKE1234 here", "AKIAQYLPMN5HFAKE1234", "aws-access-key"),
        (f"aws_secret_access_key = {AWS_SECRET}", "wJalrXUtnFEMI/K7MDENG", "secret"),
        ("token ghp_Zq8fAKEfAKEfAKE0123456789abcdefGHIJKL ok", "ghp_Zq8fAKE", "github-token"),
        ("github_pat_11AAFAKE0000_abcdefghijklmnopqrstuvwxyz0123", "github_pat_11AAFAKE", "github-token"),
        ("glpat-FaKe1234567890abcdefgh", "glpat-FaKe", "gitlab-token"),
        ("slack xoxb-1234567890-FAKEFAKEFAKE", "xoxb-1234567890", "slack-token"),
        ("OPENAI_KEY sk-proj-FAKEfake1234567890FAKEfake1234", "sk-proj-FAKE", "api-key"),
        ("anthropic sk-ant-api03-FAKE-fake_1234567890abcdefgh", "sk-ant-api03", "api-key"),
        ("stripe sk_live_FAKEfake1234567890ab", "sk_live_FAKE", "stripe-key"),
        ("maps AIzaSyFAKE-fake_FAKEfake1234567890abcde", "AIzaSyFAKE", "google-api-key"),
        ("npm_FAKEfake1234567890FAKEfake1234567890", "npm_FAKEfake", "npm-token"),
        ("hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake12", "hf_FAKEfake", "huggingface-token"),
        (f"jwt {JWT}", "eyJzdWIiOiJmYWtlIn0", "jwt"),
        ("curl -H 'Authorization: Bearer FAKEtoken1234567890abcdef'", "FAKEtoken1234567890", "token"),
        ("Authorization: Basic ZmFrZTpmYWtlcGFzczEyMw==", "ZmFrZTpmYWtlcGFzczEyMw", "credentials"),
        ("password: hunter2", "hunter2", "password"),
        ("**Password:** correct horse battery staple", "correct horse", "password"),
        ("WIFI_PASSWD=Fjord!Lantern", "Fjord!Lantern", "password"),
        ('{"passphrase": "open sesame 42"}', "open sesame", "password"),
        ("| Password | tr0ub4dor&3 |", "tr0ub4dor&3", "password"),
        ("api_key: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a", "secret"),
        ("client_secret = 'FAKEclientSECRET123'", "FAKEclientSECRET123", "secret"),
        ("postgres://app:Sup3rS3cret@db.local:5432/app", "Sup3rS3cret", "password"),
        ("card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111", "card-number"),
        ("amex 3782-822463-10005", "3782-822463-10005", "card-number"),
        ("visa 4012888888881881.", "4012888888881881", "card-number"),
        (RSA_KEY, RSA_BODY[1], "private-key"),
    ],
)
def test_each_kind_of_secret_is_redacted(text: str, secret: str, kind: str) -> None:
    redacted = redact_secrets(text)
    assert secret not in redacted.text
    assert f"[REDACTED:{kind}]" in redacted.text
    assert redacted.redactions >= 1


@pytest.mark.parametrize(
    "text",
    [
        "I owe Sreenivas €79.50; plan: pay it off before 14 May.",
        "Token: the smallest unit of text a model reads.",  # a label, but no credential after it
        "Secret: my favourite colour is blue.",
        "Authorization: required for every endpoint.",
        "The password manager is 1Password.",  # no `password:` form
        "Phone +49 170 1234567, order 2026-03-28, ISBN 978-0-306-40615-7",
        "Card ending 1111; 4111 1111 1111 1112 fails the Luhn check",
        "commit 23db681 fixed it; full hash 23db681f0c3b9ad1e6c4d7b8a9e0f1a2b3c4d5e6",
        "See ThisIsAVeryLongCamelCaseIdentifierWithoutAnyDigits in the code",
        "https://github.com/openclaw/openclaw/blob/main/src/memory/ObsidianProvider2026Implementation.ts",
        "Milk\nEggs\nButter\nTomatoes",
        # a table whose column is named Pin: a wiring table's header, not a PIN
        "| **Pin** | Colour |\n|---|---|\n| 1 | white/green |",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_secrets(text).text == text
    assert redact_secrets(text).redactions == 0


def test_labels_stay_so_the_reader_knows_what_was_there() -> None:
    assert redact_secrets("password: hunter2").text == "password: [REDACTED:password]"
    assert redact_secrets("| PIN | 4821 |").text == "| PIN | [REDACTED:password] |"


@pytest.mark.parametrize(
    "text",
    [
        # a chunk or a line range cut through the block: BEGIN without END, END without BEGIN, neither
        "intro\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(RSA_BODY[:2]),
        "\n".join(RSA_BODY[1:]) + "\n-----END RSA PRIVATE KEY-----\nafter the key",
        "```\n" + "\n".join(RSA_BODY) + "\n```",
        RSA_BODY[0][40:] + "\n" + "\n".join(RSA_BODY[1:]),  # starting mid-line, as an overlap can
    ],
)
def test_key_material_cut_anywhere_is_still_redacted(text: str) -> None:
    redacted = redact_secrets(text).text
    for line in RSA_BODY:
        assert line[-30:] not in redacted


def test_text_around_a_key_block_survives_on_its_own_lines() -> None:
    redacted = redact_secrets(f"Deploy key below.\n\n{RSA_KEY}\n\nRotate yearly.").text
    # the block's five lines stay five lines: the marker, then empty ones
    assert redacted == "Deploy key below.\n\n[REDACTED:private-key]" + "\n" * 4 + "\n\nRotate yearly."


@pytest.mark.parametrize(
    "text",
    [
        RSA_KEY,
        "a\n" + "\n".join(RSA_BODY) + "\nb",
        "x\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(RSA_BODY[:2]),
        "\n".join(RSA_BODY[1:]) + "\n-----END RSA PRIVATE KEY-----\ny",
        "password: a\nb\ntoken: FAKEtoken12345678\ncard 4111 1111 1111 1111\n",
    ],
)
def test_line_numbers_survive_redaction(text: str) -> None:
    assert redact_secrets(text).text.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "text",
    [
        RSA_BODY[1],  # one line of a key, alone (a line range or a chunk edge)
        f"- {RSA_BODY[2]}",
        "unknown vendor key: 'Zq8xL2mN4pR7sT9vW1yB3dF5hJ6kM0nQ8rU2wX4z'",
    ],
)
def test_a_lone_high_entropy_word_is_redacted(text: str) -> None:
    assert "[REDACTED:key-material]" in redact_secrets(text).text


def test_redaction_is_idempotent() -> None:
    once = redact_secrets(f"password: x1\n{RSA_KEY}\napi_key: 9f8e7d6c5b4a39281706 4111111111111111").text
    assert redact_secrets(once).text == once
    assert redact_secrets(once).redactions == 0


@pytest.mark.parametrize(
    ("digits", "valid"),
    [
        ("4111111111111111", True),
        ("4111111111111112", False),
        ("79927398713", True),
        ("378282246310005", True),
    ],
)
def test_luhn(digits: str, valid: bool) -> None:
    assert luhn_valid(digits) is valid


TOKEN_SAMPLES = {
    "aws-access-key": "AKIAQYLPMN5HFAKE1234",
    "github-token": "ghs_Zq8fAKEfAKEfAKE0123456789abcdefGHIJKL",
    "gitlab-token": "glpat-FaKe1234567890abcdefgh",
    "slack-token": "xoxp-1234567890-FAKEFAKEFAKE",
    "slack-webhook": "https://hooks.slack.com/services/T000FAKE/B000FAKE/FAKEfakeFAKEfake",
    "npm-token": "npm_FAKEfake1234567890FAKEfake1234567890",
    "pypi-token": "pypi-AgEIcHlwaS5vcmcCJGZha2UtZmFrZS1mYWtlLWZha2UtZmFrZQACKlszLCJmYWtl",
    "huggingface-token": "hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake12",
    "stripe-key": "rk_test_FAKEfake1234567890ab",
    "api-key": "sk-FAKEfake1234567890FAKEfake",
    "google-api-key": "AIzaSyFAKE-fake_FAKEfake1234567890abcde",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJlLWZha2UtZmFrZQ",
}


def test_every_token_form_has_a_sample_here() -> None:
    from backend.domain.text.secrets import _TOKEN_FORMS

    assert set(TOKEN_SAMPLES) == set(_TOKEN_FORMS)


@pytest.mark.parametrize(("kind", "token"), sorted(TOKEN_SAMPLES.items()))
def test_every_token_form_passes_the_cheap_prefilter_and_is_redacted(kind: str, token: str) -> None:
    # the prefilter decides whether the token rule runs at all: a form it misses would leak
    redacted = redact_secrets(f"in prose: {token} and more")
    assert token not in redacted.text
    assert redacted.redactions >= 1


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASSWORD = s3cr3t-Value",
        "pass code: 4711-0815",
        "| PIN | 1234 |",
        "aws_access_key_id: AKIAQYLPMN5HFAKE1234",
        "SESSION_TOKEN='FAKEsession123456'",
        "private-key = FAKEprivate1234567",
    ],
)
def test_labelled_values_pass_their_prefilters(text: str) -> None:
    redacted = redact_secrets(text)
    assert "[REDACTED:" in redacted.text, redacted.text


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        # what people write after a password label is often another secret: the whole line's rest is it
        ("Router password: changed to swordfish", ["swordfish"]),
        ("admin password: reset to letmein", ["letmein"]),
        ("Passcode: 1234 (front door), 9876 (garage)", ["1234", "9876"]),
        ("password: NewPass2024 (old: OldPass2023)", ["NewPass2024", "OldPass2023"]),
        ("password: hunter2 - or Hunter3x if that fails", ["hunter2", "Hunter3x"]),
        ('password: "hunter2" or "hunter3"', ["hunter2", "hunter3"]),
        ("password: my-pwd:secret99", ["my-pwd", "secret99"]),
    ],
)
def test_nothing_after_a_password_label_is_shown_nor_indexed(text: str, secrets: list[str]) -> None:
    shown, indexed = redact_secrets(text).text, unsearchable(text)
    assert not [s for s in secrets if s in shown or s in indexed], (shown, indexed)
