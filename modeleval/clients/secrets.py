"""Which secrets a model may carry to which hosts: the one rule, called by the API serializer, the
Django admin form and the adapter at load time (so a row stored before the rule cannot leak either).

A model's `config.api_key_env` names the environment variable whose value is sent as the bearer
token. Only names an admin has allowed may be used: those listed in MODEL_API_KEYS, and any name that
starts with HYPOLAB_MODEL_KEY_ (a prefix nothing else in the stack uses), so SECRET_KEY,
DATABASE_URL or S3_SECRET_ACCESS_KEY are never sent anywhere. The endpoint must be an http(s) URL, on
loopback or a host listed in MODEL_ENDPOINT_ALLOW (empty: loopback only)."""

import ipaddress
import re
from urllib.parse import urlsplit

from django.conf import settings

from core.errors import DomainError

KEY_PREFIX = "HYPOLAB_MODEL_KEY_"
MAX_IN_FLIGHT = 256  # an endpoint model's requests open at once at most (config max_in_flight, default 16)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")
WORKER_QUEUE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")  # config.worker_queue: its GPU workers consume gpu.<name>


def _names(value) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    return [str(v).strip() for v in value or () if str(v).strip()]


def allowed_key_names() -> list[str]:
    return _names(getattr(settings, "MODEL_API_KEYS", ()))


def allowed_hosts() -> list[str]:
    """The hosts an admin named in MODEL_ENDPOINT_ALLOW (loopback is always allowed besides them)."""
    return [host.lower().rstrip(".") for host in _names(getattr(settings, "MODEL_ENDPOINT_ALLOW", ()))]


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_api_key_env(name) -> str:
    """The variable name if an admin may let a model send its value; else DomainError on `config`."""
    if name in (None, ""):
        return ""
    if not isinstance(name, str) or not _ENV_NAME.match(name):
        raise DomainError("api_key_env must be the name of an environment variable.", field="config")
    if name.startswith(KEY_PREFIX) and len(name) > len(KEY_PREFIX):
        return name
    if name in allowed_key_names():
        return name
    raise DomainError(
        f"api_key_env {name!r} is not a model key: use a variable named {KEY_PREFIX}..., or list it in the "
        "MODEL_API_KEYS setting.", field="config",
    )


def check_endpoint(url) -> str:
    """The endpoint if it is an http(s) URL on an allowed host; else DomainError on `endpoint`."""
    if not isinstance(url, str) or not url.strip():
        raise DomainError("An OpenAI-compatible model needs config.endpoint, an http(s) URL.", field="endpoint")
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower().rstrip(".")
        parts.port  # noqa: B018 -- raises ValueError on a port that is not a number
    except ValueError:
        raise DomainError("The endpoint is not a valid URL.", field="endpoint") from None
    if parts.scheme not in ("http", "https") or not host:
        raise DomainError("The endpoint must be an http:// or https:// URL with a host.", field="endpoint")
    if parts.username or parts.password:
        raise DomainError("Put credentials in api_key_env, not in the endpoint URL.", field="endpoint")
    if not is_loopback(host) and host not in allowed_hosts():
        raise DomainError(f"The endpoint's host {host} is neither loopback nor in MODEL_ENDPOINT_ALLOW.",
                          field="endpoint")
    return url.strip()


def check_model_config(adapter: str, config) -> None:
    """Refuse a model whose settings would send a secret it may not send, or send to where it may not."""
    if config in (None, ""):
        config = {}
    if not isinstance(config, dict):
        raise DomainError("config must be a JSON object.", field="config")
    check_api_key_env(config.get("api_key_env"))
    if adapter == "openai_compatible" or config.get("endpoint") not in (None, ""):
        check_endpoint(config.get("endpoint"))
    queue = config.get("worker_queue")
    if queue not in (None, "") and not (isinstance(queue, str) and WORKER_QUEUE.fullmatch(queue)):
        raise DomainError("config.worker_queue names the GPU workers that hold this model: up to 64 lower-case "
                          "letters, digits, '-' or '_' (its workers consume gpu.<worker_queue>).", field="config")
    # checked beside them because every save and launch passes here (modeleval/clients/endpoint_client.py)
    window = config.get("max_in_flight")
    if window is not None and (type(window) is not int or not 1 <= window <= MAX_IN_FLIGHT):
        raise DomainError(f"config.max_in_flight (requests open at once) is a whole number from 1 to {MAX_IN_FLIGHT}.",
                          field="config")
