"""Redis per role: the broker, task results, the cache, the channel layer and locks may each be their
own Redis (CELERY_BROKER_URL, CELERY_RESULT_BACKEND, CACHE_REDIS_URL, CHANNEL_REDIS_URL, LOCK_REDIS_URL, each
falling back to REDIS_URL), and each may be reached through Redis Sentinel.

A Sentinel URL is kombu's form: `sentinel://[:password@]host:port[/db]` with several sentinels joined by `;`
(`sentinel://s1:26379;sentinel://s2:26379;sentinel://s3:26379/0`); the master's name is REDIS_SENTINEL_MASTER
(default `mymaster`). Celery reads such URLs itself (given `master_name` in its transport options); the cache,
the channel layer and the locks are given the equivalent here. No Django import: settings.py uses it.
"""

from urllib.parse import unquote, urlsplit

import redis
from redis.sentinel import Sentinel, SentinelConnectionPool


def is_sentinel(url: str) -> bool:
    return (url or "").startswith("sentinel://")


def parse_sentinel(url: str) -> dict:
    """`sentinel://:pw@h1:26379;sentinel://h2:26379/0` -> {"sentinels": [(h1, 26379), (h2, 26379)], "db": 0,
    "password": "pw"}: the password and db are the master's (the last URL that names them wins)."""
    sentinels, db, password = [], 0, None
    for part in url.split(";"):
        parts = urlsplit(part.strip())
        if parts.scheme != "sentinel" or not parts.hostname:
            raise ValueError(f"Not a sentinel URL: {part!r} (expected sentinel://host:port)")
        sentinels.append((parts.hostname, parts.port or 26379))
        if parts.password:
            password = unquote(parts.password)
        if parts.path.strip("/"):
            db = int(parts.path.strip("/"))
    return {"sentinels": sentinels, "db": db, "password": password}


class SentinelPool:
    """A `pool_class` for Django's Redis cache: `from_url` answers a pool that asks the sentinels where the
    master is (and asks again after a failover)."""

    master_name = "mymaster"

    @classmethod
    def from_url(cls, url: str, **options):
        parsed = parse_sentinel(url)
        options.pop("db", None)
        sentinel = Sentinel(parsed["sentinels"], socket_timeout=options.get("socket_timeout", 2.0),
                            sentinel_kwargs={"socket_timeout": options.get("socket_timeout", 2.0)})
        return SentinelConnectionPool(cls.master_name, sentinel, db=parsed["db"], password=parsed["password"],
                                      **options)


def sentinel_pool_class(master_name: str) -> type:
    return type("SentinelPool", (SentinelPool,), {"master_name": master_name})


def cache_options(url: str, master_name: str) -> dict:
    """OPTIONS for the cache (config.cache.RedisCache) at `url`."""
    return {"pool_class": sentinel_pool_class(master_name)} if is_sentinel(url) else {}


def channel_host(url: str, master_name: str):
    """A `hosts` entry for channels_redis: the URL, or its sentinels and master name."""
    if not is_sentinel(url):
        return url
    parsed = parse_sentinel(url)
    return {"sentinels": parsed["sentinels"], "master_name": master_name, "db": parsed["db"],
            **({"password": parsed["password"]} if parsed["password"] else {})}


def client(url: str, master_name: str = "mymaster", **options) -> redis.Redis:
    """A client for `url`: a plain Redis URL, or the master behind the sentinels of a sentinel URL."""
    if not is_sentinel(url):
        return redis.Redis.from_url(url, **options)
    parsed = parse_sentinel(url)
    sentinel = Sentinel(parsed["sentinels"], socket_timeout=options.get("socket_timeout", 2.0))
    return sentinel.master_for(master_name, db=parsed["db"], password=parsed["password"], **options)


def lock_client(**options) -> redis.Redis | None:
    """The locks' Redis (LOCK_REDIS_URL), or None in the embedded default (no Redis)."""
    from django.conf import settings

    url = getattr(settings, "LOCK_REDIS_URL", "")
    return client(url, settings.REDIS_SENTINEL_MASTER, **options) if url else None
