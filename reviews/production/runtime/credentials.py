"""Credentials never reach a file: the guard that
refuses a configuration holding one, and the redaction of a key an endpoint echoes back.

A configuration is refused before any work when, at any depth, it holds

- a key named like a credential: ``api_key``, ``authorization``, ``password`` or ``token`` (in
  any case or punctuation: ``Api-Key``, ``TOKEN``; whatever it holds) and the family they stand
  for — any key with a word such as ``secret``, ``password`` or ``credential``,
  ``<api|secret|access|private|…>_key``, ``<anything>_token`` other than a tokenizer's special
  tokens (``eos_token``, ``stop_token``…) or a price (``input_cost_per_token``) — unless it ends in
  ``_env`` and names an environment variable, which is where credentials belong;
- a URL with a user name or password (``https://user:key@host/v1``) or a credential-named query
  parameter (``?api_key=…``);
- a value shaped like a key: a known key prefix (``sk-…``, ``hf_…``, ``ghp_…``, ``AKIA…``, a JWT,
  ``Bearer …``) or a long unbroken high-entropy string (see ``looks_random``).

Messages name where the credential is (``model.parameters.api_key is named like a credential``),
never the value.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from reviews.production.runtime.errors import ReviewProductionError

CREDENTIALS_MESSAGE = "Put credentials in environment variables, not the review config"
# Credentials whatever they hold; a name is compared lowered, each run of other characters as ``_``.
CREDENTIAL_NAMES = frozenset({"api_key", "authorization", "password", "token"})
SECRET_WORDS = frozenset(
    {"password", "passwd", "passphrase", "secret", "secrets", "authorization", "auth",
     "credential", "credentials", "apikey", "bearer", "cookie", "privatekey"}
)  # fmt: skip
# ``<word>_key`` names a credential for these words; ``cache_key`` or ``sort_key`` do not.
KEY_QUALIFIERS = frozenset(
    {"api", "secret", "access", "private", "client", "signing", "session", "auth", "openai",
     "hf", "service", "account", "encryption", "master"}
)  # fmt: skip
# ``<word>_token`` is a credential except for a tokenizer's special tokens.
TOKENIZER_WORDS = frozenset(
    {"eos", "bos", "pad", "unk", "sep", "cls", "mask", "stop", "special", "start", "end",
     "max", "min", "image", "audio", "video", "think"}
)  # fmt: skip
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
WORD_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
KEY_SHAPE = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic (sk-ant-…), DeepSeek, many gateways
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"  # AWS access key id, Google API key
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # a JWT
    r"|[Bb]earer\s+[A-Za-z0-9._~+/=-]{12,}"
    r")"
)
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
# An unbroken run of letters and digits, long enough to be a key.
RUN = re.compile(r"[A-Za-z0-9]{24,}")
HEX = re.compile(r"^[0-9a-fA-F]+$")
MIN_ENTROPY_BITS = 4.0
MAX_VOWEL_SHARE = 0.3
REDACTED = "[REDACTED]"


def words_of(name: str) -> list[str]:
    """``secretKey`` → ``[secret, key]``, ``X-Api-Key`` → ``[x, api, key]``."""
    return [part.lower() for part in WORD_PART.findall(name)]


def is_credential_name(name: str, value: Any = None) -> bool:
    """Whether a key named ``name`` (holding ``value``) is a credential."""
    normal = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if normal in CREDENTIAL_NAMES:
        return True
    words = words_of(name)
    if not words:
        return False
    if words[-1] == "env" and isinstance(value, str) and ENV_NAME.match(value):
        return False  # names the environment variable that holds the credential
    if SECRET_WORDS & set(words):
        return True
    for before, word in itertools.pairwise(words):
        if word == "key" and before in KEY_QUALIFIERS:
            return True
    if words[-1] == "token":
        # ``input_cost_per_token`` (litellm's model_info) is a price per token, not a token.
        return len(words) == 1 or words[-2] not in TOKENIZER_WORDS | {"per"}
    return False


def looks_random(run: str) -> bool:
    """A long unbroken run of letters and digits that reads like a generated key: upper and lower
    case and digits, not hexadecimal (commit and content hashes are), at least 4 bits of entropy
    per character, and few vowels (words and CamelCase identifiers have about 40% of their
    letters vowels; random letters about 19%)."""
    if HEX.match(run) or run.isdigit():
        return False
    if not (any(c.isupper() for c in run) and any(c.islower() for c in run)):
        return False
    if not any(c.isdigit() for c in run):
        return False
    counts = Counter(run)
    entropy = -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())
    letters = [c for c in run if c.isalpha()]
    vowels = sum(c in "aeiouAEIOU" for c in letters)
    return entropy >= MIN_ENTROPY_BITS and vowels / len(letters) < MAX_VOWEL_SHARE


def credential_in_text(text: str) -> str | None:
    """What makes ``text`` hold a credential, or None."""
    for url in URL.findall(text):
        try:
            parts = urlsplit(url)
            userinfo = parts.username is not None or parts.password is not None
            query = parse_qsl(parts.query, keep_blank_values=True)
        except ValueError:
            continue
        if userinfo:
            return "a URL with a user name or password"
        for name, value in query:
            if is_credential_name(name, value):
                return "a URL whose query names a credential"
    if KEY_SHAPE.search(text):
        return "a value shaped like an API key"
    if any(looks_random(run) for run in RUN.findall(text)):
        return "a long random-looking string (a key?)"
    return None


def _found(value: Any, where: str) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and is_credential_name(key, item):
                yield f"{here} is named like a credential"
                return
            yield from _found(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _found(item, f"{where}[{index}]")
    elif isinstance(value, str):
        reason = credential_in_text(value)
        if reason is not None:
            yield f"{where or 'the config'} holds {reason}"


def check_no_credentials(value: Any) -> None:
    """Refuse a configuration that holds a credential anywhere (module docstring)."""
    for problem in _found(value, ""):
        raise ReviewProductionError(f"{CREDENTIALS_MESSAGE}: {problem}")


def secret_forms(secret: str) -> list[bytes]:
    """The byte forms an echoed ``secret`` may take in an answer: as is, JSON-escaped and
    percent-encoded."""
    import json
    from urllib.parse import quote

    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             quote(secret, safe="")}  # fmt: skip
    return sorted((form.encode("utf-8") for form in forms if form), key=len, reverse=True)


def redacted(data: bytes, secrets: list[str]) -> bytes:
    """``data`` with every form of every secret replaced by ``[REDACTED]``."""
    for secret in secrets:
        if not secret:
            continue
        for form in secret_forms(secret):
            data = data.replace(form, REDACTED.encode())
    return data
