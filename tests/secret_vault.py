"""A vault full of secrets (all fake, made for these tests) and the strings that must never leave the service.

The SSH key is long enough for the chunker to split it (about 240 words at 200 per chunk), so some chunks hold
only lines from its middle, without BEGIN or END.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

from tests.vault_files import write

_B64 = string.ascii_letters + string.digits + "+/"
_rng = random.Random(7)
KEY_LINES = ["".join(_rng.choice(_B64) for _ in range(64)) for _ in range(120)]

TOKENS = {
    "aws_id": "AKIAQYLPMN5HFAKE1234",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY99",
    "db_url_password": "Sup3rS3cretPw",
    "frontmatter_password": "Gl4cier-Harbor-77",
    "bearer": "FAKEbearerTOKEN0123456789abcdef",
    "github": "ghp_Zq8fAKEfAKEfAKE0123456789abcdefGHIJKL",
    "github_env": "ghp_Yy7eFAKEfakeFAKE9876543210zyxwvuTSRQPO",
    "github_pat": "github_pat_11AAFAKE0000_abcdefghijklmnopqrstuvwxyz0123",
    "openai": "sk-proj-FAKEfake1234567890FAKEfake1234",
    "anthropic": "sk-ant-api03-FAKE-fake_1234567890abcdefgh",
    "slack": "xoxb-1234567890-FAKEFAKEFAKE",
    "stripe": "sk_live_FAKEfake1234567890ab",
    "google": "AIzaSyFAKE-fake_FAKEfake1234567890abcde",
    "npm": "npm_FAKEfake1234567890FAKEfake1234567890",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdGFnaW5nLWZha2UifQ.c2lnbmF0dXJlLWZha2UtZmFrZQ",
    "client_secret": "FAKEclientSECRET123",
    "password_bold": "Tr0ub4dor&3",
    "password_table": "correct-horse-battery",
    "wifi": "Lantern-Fjord-42",
    "visa": "4111 1111 1111 1111",
    "mastercard": "5500-0000-0000-0004",
    "amex": "378282246310005",
    "discover": "6011111111111117",
    "pin": "48210937",  # long enough never to appear inside a score or a time by chance
    "memory_password": "Admin-Pw-9911",
}

NOTES = {
    "Infra/Servers.md": f"""---
tags: [infra]
db_password: "{TOKENS["frontmatter_password"]}"
---
# Servers

## Database

Connection: postgres://app:{TOKENS["db_url_password"]}@db.internal:5432/app
aws_access_key_id = {TOKENS["aws_id"]}
aws_secret_access_key = {TOKENS["aws_secret"]}

## Deploy

curl -H "Authorization: Bearer {TOKENS["bearer"]}" https://deploy.internal/api/release

## SSH key

The deploy key for the build box:

```text
-----BEGIN OPENSSH PRIVATE KEY-----
{chr(10).join(KEY_LINES)}
-----END OPENSSH PRIVATE KEY-----
```

Rotate the key every year, in January.
""",
    "Dev/Tokens.md": f"""# Tokens

Keep these out of the repos.

- GitHub classic: {TOKENS["github"]}
- GitHub fine-grained: {TOKENS["github_pat"]}
- OpenAI: {TOKENS["openai"]}
- Anthropic: {TOKENS["anthropic"]}
- Slack bot: {TOKENS["slack"]}
- Stripe live: {TOKENS["stripe"]}
- Google Maps: {TOKENS["google"]}
- npm publish: {TOKENS["npm"]}
- staging JWT: {TOKENS["jwt"]}

```bash
export GITHUB_TOKEN={TOKENS["github_env"]}
```

OAuth app client_secret: "{TOKENS["client_secret"]}"
""",
    "Personal/Wallet.md": f"""---
tags: [finance]
---
# Wallet

**Password:** {TOKENS["password_bold"]}

| Service | Detail |
| --- | --- |
| Password | {TOKENS["password_table"]} |
| PIN | {TOKENS["pin"]} |

Cards:

- Visa {TOKENS["visa"]}, expires 12/29
- Mastercard {TOKENS["mastercard"]}
- Amex {TOKENS["amex"]}
- Discover {TOKENS["discover"]}

I owe the bank nothing this month.
""",
    "Home/Wifi.md": f"""# Wifi

Guest network: Lantern. wifi_password = {TOKENS["wifi"]}

The router is in the hallway cupboard.
""",
    "Home/Garden.md": "# Garden\n\nPlant the tomatoes in May; water every evening.\n",
}

MEMORY_FACT = {
    "key": "router-admin",
    "value": f"router admin password: {TOKENS['memory_password']}",
    "source": "Home/Wifi.md",
}

QUERIES = [
    "servers database connection",
    "aws access key",
    "deploy bearer authorization",
    "ssh deploy key build box",
    "rotate the key",
    "OPENSSH PRIVATE KEY",
    "tokens github openai slack stripe",
    "staging jwt npm publish",
    "client secret oauth",
    "wallet cards visa amex",
    "password",
    "PIN",
    "wifi guest network router",
    "garden tomatoes",
]


def secret_strings() -> list[str]:
    """Every secret, and pieces of every key line (a line range could show a line alone)."""
    found = list(TOKENS.values())
    found += [TOKENS["visa"].replace(" ", ""), TOKENS["mastercard"].replace("-", "")]
    for line in KEY_LINES:
        found += [line[:24], line[20:44], line[40:]]
    return found


def write_secret_vault(root: Path) -> Path:
    for path, text in NOTES.items():
        write(root, path, text)
    return root


def leaks(text: str) -> list[str]:
    return [secret for secret in secret_strings() if secret in text]
